/** `err` if it is an `Error`, else an `Error` whose message is `String(err)` (a thrown string, say). */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
