/**
 * Why a file could not be opened, in words, for the file-system errors a reader
 * meets (Node's are `ENOENT: no such file or directory, open 'g.json'`); null for
 * any other error.
 */
export function fileProblem(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "ENOENT") return "it does not exist";
  if (code === "EISDIR") return "it is a directory";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return null;
}

/**
 * Why reading a file failed, in words, for the file-system and zlib errors a
 * reader meets: zlib says only "unexpected end of file" of a gzip stream cut
 * short, which reads as the file's own end. Null for any other error, which
 * says what is wrong itself.
 */
export function readFailure(err: unknown): string | null {
  const problem = fileProblem(err);
  if (problem !== null) return `cannot read the file: ${problem}`;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === "Z_BUF_ERROR" || /unexpected end of file/i.test(message)) {
    return "truncated gzip data (the file ends too early)";
  }
  if (code === "Z_DATA_ERROR" || code === "Z_NEED_DICT") return `corrupt gzip data (${message})`;
  return null;
}
