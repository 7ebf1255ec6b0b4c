/**
 * Learning that nothing is left for Node.js to run (its `beforeExit`): a
 * promise still pending then can never settle. An inline worker's import of a
 * task module waits on it so that a module waiting at a top-level `await` on
 * the very cluster importing it (a program that gives its own module as a task
 * module) fails the cluster's start, saying why, where Node.js exited silently
 * with code 13 (an unsettled top-level `await`).
 */

/** The calls waiting for the loop to go idle. */
const waiting = new Set<() => void>();

function onBeforeExit(): void {
  const called = [...waiting];
  waiting.clear();
  process.off("beforeExit", onBeforeExit);
  for (const cb of called) cb();
}

/**
 * A promise rejecting with `error()` once nothing is left to run, and what
 * stops waiting (call it once the awaited work settled). One `beforeExit`
 * listener serves every waiter, however many workers import at once.
 */
export function rejectWhenIdle(error: () => Error): { promise: Promise<never>; stop: () => void } {
  let cb: () => void = () => {};
  const promise = new Promise<never>((_, reject) => {
    cb = () => reject(error());
  });
  // Awaited only in a race: a stop before the loop went idle leaves it pending, never rejected.
  if (waiting.size === 0) process.on("beforeExit", onBeforeExit);
  waiting.add(cb);
  return {
    promise,
    stop: () => {
      waiting.delete(cb);
      if (waiting.size === 0) process.off("beforeExit", onBeforeExit);
    },
  };
}

/**
 * `work`, or a rejection with `error()` should nothing be left to run while it
 * is pending: it can never settle then, and Node.js would exit with code 13,
 * an unsettled top-level `await` of the program waiting on it, without a word.
 */
export async function unlessIdle<T>(work: Promise<T>, error: () => Error): Promise<T> {
  const idle = rejectWhenIdle(error);
  try {
    return await Promise.race([work, idle.promise]);
  } finally {
    idle.stop();
  }
}
