/**
 * Why reading a file failed, in words, for the file-system and zlib errors a
 * reader meets: zlib says only "unexpected end of file" of a gzip stream cut
 * short, which reads as the file's own end. Null for any other error, which
 * says what is wrong itself.
 */
export function readFailure(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === "ENOENT") return "cannot read the file: it does not exist";
  if (code === "EISDIR") return "cannot read the file: it is a directory";
  if (code === "EACCES" || code === "EPERM") return "cannot read the file: permission denied";
  if (code === "Z_BUF_ERROR" || /unexpected end of file/i.test(message)) {
    return "truncated gzip data (the file ends too early)";
  }
  if (code === "Z_DATA_ERROR" || code === "Z_NEED_DICT") return `corrupt gzip data (${message})`;
  return null;
}
