/**
 * The error of a spilled value that can no longer be read back: its file was
 * removed under the worker (a temporary-files cleaner, a user's `rm`), cut
 * short (a disk that filled up) or damaged, or the disk failed to read it.
 */

/** The spilled value of `key` is gone: its file at `file` is missing, short or unreadable. */
export class SpilledValueLostError extends Error {
  override name = "SpilledValueLostError";

  constructor(
    /** The key whose value was spilled. */
    readonly key: string,
    /** The file it was spilled to. */
    readonly file: string,
    /** Why it could not be read back (the file system's error, or the decoder's). */
    cause: unknown,
  ) {
    super(
      `the spilled value of ${JSON.stringify(key)} is gone from disk: ${file} ${lossReason(cause)}`,
      { cause },
    );
  }
}

/** What happened to the file, in words: the code a missing file gives is the usual case. */
function lossReason(cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === "ENOENT") return "was removed";
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === "string"
    ? `could not be read (${code}: ${message})`
    : `is damaged (${message})`;
}
