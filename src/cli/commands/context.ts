/**
 * What a `weft` subcommand writes to and how it ends: the process's streams in
 * production, string buffers in tests (so commands never touch `process` directly).
 */
export interface CliContext {
  /** Where results go (text or JSON). */
  readonly stdout: NodeJS.WritableStream;
  /** Where errors, notes and the progress bar go. */
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean };
  /**
   * The exit code: 0 success, 1 the command ran and found differences (or nothing),
   * 2 bad usage or an input it cannot read.
   */
  exitCode: number;
}

/** Exit codes of `weft` commands. */
export const EXIT = { ok: 0, differences: 1, usage: 2 } as const;

/** The context of the running process (a closed stdout, as in `weft … | head`, ends it quietly). */
export function processContext(): CliContext {
  // A worker a nanny started writes to pipes the nanny reads: a nanny gone
  // (SIGKILLed) must not end the worker mid-close on its next line (EPIPE). The
  // worker closes on its own as the nanny's IPC channel closes.
  const nannied = process.env.WEFT_NANNY_CHILD === "1";
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    if (!nannied) process.exit(process.exitCode ?? EXIT.ok);
  });
  // Nobody is left to read what would say so.
  process.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
  return { stdout: process.stdout, stderr: process.stderr, exitCode: EXIT.ok };
}
