/**
 * Refusing option names that mean nothing. TypeScript refuses an unknown
 * property only in an object literal written at the call, so `{ nthreads: 4 }`
 * (Dask's spelling) kept in a variable, a typo such as `retires`, or options
 * from JavaScript or a config file were dropped without a word, and the
 * default ran instead of what was asked for.
 */

/** Every option name of `T`, as a record the compiler checks is complete. */
export type OptionNames<T> = Readonly<Record<keyof Required<T>, true>>;

/** Edit distance of `a` and `b` (insertions, deletions, substitutions, swaps of neighbours). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** The known name `given` is most likely a misspelling of, or null if none is close. */
export function closestName(given: string, known: readonly string[]): string | null {
  // Python's spelling (`transfer_incoming_count_limit`, `timeout_ms`) of a camelCase
  // name is no slip of the keyboard, yet plainly meant it: compared without the underscores.
  const lower = given.toLowerCase().replaceAll("_", "");
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const known = name.toLowerCase().replaceAll("_", "");
    // `timeout` for `timeoutMs`: the name without its unit is as good as a slip.
    const d =
      known === lower
        ? 0
        : lower.length >= 4 && known.startsWith(lower)
          ? 1
          : distance(lower, known);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  // Close enough to be a slip of the keyboard, not another word.
  return bestDistance <= Math.max(1, Math.min(2, Math.floor(given.length / 4))) ? best : null;
}

/**
 * Throws a TypeError naming `what` and each own key of `options` that is not in
 * `known`, with the option it is likely a misspelling of, or else the options
 * there are. `hint` ends the message (where the other options go, say).
 */
export function checkKnownOptions(
  what: string,
  options: object,
  known: Readonly<Record<string, true>>,
  hint = "",
): void {
  let unknown: string[] | null = null;
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(known, key)) (unknown ??= []).push(key);
  }
  if (unknown === null) return;
  const names = Object.keys(known);
  const described = unknown.map((key) => {
    const meant = closestName(key, names);
    return meant === null ? JSON.stringify(key) : `${JSON.stringify(key)} (did you mean ${meant}?)`;
  });
  const list = unknown.some((key) => closestName(key, names) === null)
    ? ` (the options are ${names.join(", ")}${hint === "" ? "" : `; ${hint}`})`
    : "";
  throw new TypeError(
    `${what}: unknown option${unknown.length > 1 ? "s" : ""} ${described.join(", ")}${list}`,
  );
}
