/**
 * The promises that reject unhandled while `work` runs, recorded rather than left
 * to Node.js, which ends the process on the first with its stack and exit code 1.
 * A graph module's `export const graph = build()` that rejects while the module is
 * still at a later top-level `await` is one: nothing can handle it before the
 * import ends, and `weft run` ended so, where it says of a graph promise rejected
 * once the import ended that it did, exit 2.
 */

/** A promise that rejected with nothing to handle it. */
export interface UnhandledRejection {
  readonly reason: unknown;
  readonly promise: Promise<unknown>;
}

/** `work`'s value, and the rejections left unhandled while it ran. */
export async function withUnhandledRejections<T>(
  work: () => Promise<T>,
): Promise<{ value: T; unhandled: UnhandledRejection[] }> {
  const unhandled: UnhandledRejection[] = [];
  const record = (reason: unknown, promise: Promise<unknown>): void => {
    unhandled.push({ reason, promise });
  };
  process.on("unhandledRejection", record);
  try {
    return { value: await work(), unhandled };
  } finally {
    process.off("unhandledRejection", record);
  }
}
