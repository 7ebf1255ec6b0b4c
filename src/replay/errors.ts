import { DumpFormatError } from "../protocol/clusterDump.ts";
import { readFailure } from "../util/readFailure.ts";
import { showValue } from "../util/showValue.ts";
import { quoted } from "./shownText.ts";

/**
 * An input that `weft replay` or `weft story` cannot use: a file that cannot be read,
 * a truncated or corrupt one, one of an unknown kind, or content of the wrong shape.
 * The message is one line that starts with the file: `tree.msgpack.gz: truncated gzip data`.
 */
export class ReplayInputError extends Error {
  override readonly name = "ReplayInputError";
  /** The file (as given). */
  readonly file: string;
  /** What is wrong, without the file. */
  readonly reason: string;

  /** Builds the error; newlines in `reason` are folded so the message stays one line. */
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    const oneLine = reason.replace(/\s*\n\s*/g, "; ");
    super(`${file}: ${oneLine}`, options);
    this.file = file;
    this.reason = oneLine;
  }
}

/**
 * Any error met while reading `file` as a {@link ReplayInputError}: file-system errors
 * and zlib errors get a plain reason, the loaders' own errors keep theirs.
 */
export function toInputError(file: string, err: unknown): ReplayInputError {
  if (err instanceof ReplayInputError) return err;
  if (err instanceof DumpFormatError) {
    return new ReplayInputError(file, err.path ? `${err.path}: ${err.reason}` : err.reason, {
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  // The loaders name the file themselves; do not say it twice.
  const reason =
    readFailure(err) ??
    (message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message);
  return new ReplayInputError(file, reason, { cause: err });
}

/**
 * Refuses a `file` argument that is no path, from a program that passed a wrong
 * value: else it failed deep inside with "Cannot read properties of null".
 */
export function checkFileArgument(fn: string, file: unknown): asserts file is string {
  if (typeof file !== "string") {
    throw new TypeError(`${fn}: the file must be a path (a string), got ${showValue(file)}`);
  }
}

/**
 * A worker's address as the user asked for it, for a message: quoted when it would not
 * read as one (empty, spaces, control characters), so that `--worker ''` reads
 * `no worker "" in the dump`.
 */
export function askedAddress(address: string): string {
  return /^[\x21-\x7e]+$/.test(address) ? address : quoted(address);
}
