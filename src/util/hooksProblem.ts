import { showValue } from "./showValue.ts";

/**
 * Why `v` is not an object of optional methods `hooks` (a plugin), or null:
 * `expected <expected>, got <v>` if it is not an object, or `its <hook> is not
 * a function (<value>)` for the first hook given that is not one.
 */
export function hooksProblem(
  v: unknown,
  hooks: readonly string[],
  expected: string,
): string | null {
  if ((typeof v !== "object" && typeof v !== "function") || v === null) {
    return `expected ${expected}, got ${showValue(v)}`;
  }
  const given = v as Record<string, unknown>;
  for (const hook of hooks) {
    if (given[hook] !== undefined && typeof given[hook] !== "function") {
      return `its ${hook} is not a function (${showValue(given[hook])})`;
    }
  }
  return null;
}
