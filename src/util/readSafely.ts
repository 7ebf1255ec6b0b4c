/** Reading what a caller's code gave (a thrown value's fields), whose getters may throw. */

/** `read()`, or `fallback(why)` when reading throws (a getter of a thrown object, a Proxy). */
export function readSafely<T>(read: () => T, fallback: (why: string) => T): T {
  try {
    return read();
  } catch (e) {
    let why: string;
    try {
      why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    } catch {
      why = "an unreadable error";
    }
    return fallback(why);
  }
}
