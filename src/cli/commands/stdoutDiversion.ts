/**
 * `weft run`'s stdout is its answer, one JSON object, but the code it runs shares
 * the process: a graph module's top-level `console.log`, an inline task's, and a
 * pool thread's, whose stdout Node.js pipes into the process's own. Left there,
 * those lines went ahead of the answer, and `weft run g.json > out.json` left a
 * file no JSON parser reads, the exit code 0 all the same.
 */

/** A stream's writes diverted elsewhere, but for those made {@link StdoutDiversion.write through} it. */
export interface StdoutDiversion {
  /** Write `text` to `stream`: past the diversion if it is the stream diverted. */
  write(stream: NodeJS.WritableStream, text: string): void;
  /** Give the stream its own writes back. */
  restore(): void;
}

/**
 * Send what is written to `stream` (the process's stdout) to `to` until
 * `restore()`, with `to`'s backpressure: a write says what `to`'s write says,
 * and `stream` emits `drain` once `to` has. A pool thread's stdout is piped
 * here and waits for that `drain` when told to; reported taken every time, it
 * never waited, and what a task printed faster than stderr's reader read piled
 * up in this process's memory, without limit. A `to` that is closed (stderr's
 * reader gone) drains nothing: its `close` stands for the `drain`, and writes
 * to it are taken, as they go nowhere, so that no writer waits for good (a pool
 * thread hands its output over before its task's result).
 */
export function divertStdout(
  stream: NodeJS.WritableStream,
  to: NodeJS.WritableStream,
): StdoutDiversion {
  const own = Object.getOwnPropertyDescriptor(stream, "write");
  const original = stream.write;
  let waiting = false;
  const drained = (): void => {
    waiting = false;
    to.off("drain", drained);
    to.off("close", drained);
    stream.emit("drain");
  };
  stream.write = ((...args: Parameters<NodeJS.WritableStream["write"]>) => {
    const taken = (to.write as (...a: typeof args) => boolean)(...args);
    if (taken || isClosed(to)) return true;
    if (!waiting) {
      waiting = true;
      to.on("drain", drained);
      to.on("close", drained);
    }
    return false;
  }) as NodeJS.WritableStream["write"];
  return {
    write(target, text) {
      if (target === stream) original.call(stream, text);
      else target.write(text);
    },
    restore() {
      // A writer still waiting gets its drain from `to`, where its lines are.
      if (own === undefined) delete (stream as { write?: unknown }).write;
      else Object.defineProperty(stream, "write", own);
    },
  };
}

/** Whether `s` is destroyed: it emits no `drain` any more. */
function isClosed(s: NodeJS.WritableStream): boolean {
  return (s as { destroyed?: unknown }).destroyed === true;
}
