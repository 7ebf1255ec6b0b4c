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

/**
 * The command of this process that serves (`weft worker`, `weft scheduler`), once it
 * said so with {@link serveDespiteOutputErrors}; null for one that only computes.
 */
let serving: string | null = null;

/**
 * This process serves, as `command`: a write to its stdout or stderr that fails (a
 * file on a full disk, `/dev/full`, an I/O error) is said once on the other stream
 * and the line lost, rather than thrown. Thrown, it ended a registered worker (or a
 * scheduler and its cluster) mid-compute, for the line giving its address. A command
 * that only computes still fails on it: its output is what it is run for.
 */
export function serveDespiteOutputErrors(command: string): void {
  serving = command;
}

/** The streams whose failure was said already: once is enough, a full disk fails every line. */
const said = new Set<string>();

/** A write to `stream` that failed with `err` while serving: said once, on the other stream. */
function outputLost(
  stream: "stdout" | "stderr",
  err: NodeJS.ErrnoException,
  command: string,
): void {
  if (said.has(stream)) return;
  said.add(stream);
  const other = stream === "stdout" ? process.stderr : process.stdout;
  other.write(
    `${command}: cannot write to ${stream} (${err.message}): what it writes there is lost; it goes on\n`,
  );
}

/**
 * A write to stdout that failed with `err` in a command that only computes: its
 * output is what it is run for, so it ends, exit 2 as for a file it cannot write
 * (`--task-stream`), saying why (thrown, it was an uncaught exception and its stack).
 */
function outputFailed(err: NodeJS.ErrnoException): never {
  process.stderr.write(`weft: cannot write to stdout (${err.message}): its output is lost\n`);
  process.exit(EXIT.usage);
}

/** The context of the running process (a closed stdout, as in `weft … | head`, ends it quietly). */
export function processContext(): CliContext {
  // A worker a nanny started writes to the nanny's stdout and stderr (or, in tests, to
  // pipes the nanny reads): their reader gone (a pipeline's, or the nanny SIGKILLed)
  // must not end the worker mid-close on its next line (EPIPE). The worker closes on
  // its own as the nanny's IPC channel closes.
  const nannied = process.env.WEFT_NANNY_CHILD === "1";
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") {
      if (serving !== null) outputLost("stdout", err, serving);
      else outputFailed(err);
      return;
    }
    if (!nannied) process.exit(process.exitCode ?? EXIT.ok);
  });
  // Nobody is left to read what would say so.
  process.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") return;
    if (serving === null) throw err;
    outputLost("stderr", err, serving);
  });
  return { stdout: process.stdout, stderr: process.stderr, exitCode: EXIT.ok };
}
