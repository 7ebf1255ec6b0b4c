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
 * `restore()`. Every write is reported taken: a pool thread's stdout is piped
 * here, and a pipe told to wait would wait for a `drain` of `stream`, which
 * writes nothing meanwhile, holding the thread's output and with it the result
 * of its task (the thread hands its output over before its result).
 */
export function divertStdout(
  stream: NodeJS.WritableStream,
  to: NodeJS.WritableStream,
): StdoutDiversion {
  const own = Object.getOwnPropertyDescriptor(stream, "write");
  const original = stream.write;
  stream.write = ((...args: Parameters<NodeJS.WritableStream["write"]>) => {
    (to.write as (...a: typeof args) => boolean)(...args);
    return true;
  }) as NodeJS.WritableStream["write"];
  return {
    write(target, text) {
      if (target === stream) original.call(stream, text);
      else target.write(text);
    },
    restore() {
      if (own === undefined) delete (stream as { write?: unknown }).write;
      else Object.defineProperty(stream, "write", own);
    },
  };
}
