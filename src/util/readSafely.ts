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

/**
 * The name, message and stack of a thrown value, each read so that a getter
 * that throws (a Proxy, a hostile error) leaves it out rather than throwing:
 * an error's own, an error-like object's (one that lost its prototype crossing
 * threads, say, which says more by its fields than `String()` would), or else
 * `String(err)` as the message, or why it could not be read.
 */
export function readableErrorFields(err: unknown): {
  name: string;
  message: string;
  stack: string;
} {
  const text = (read: () => unknown): string | null =>
    readSafely(
      () => {
        const v = read();
        return typeof v === "string" ? v : null;
      },
      () => null,
    );
  const isError = readSafely(
    () => err instanceof Error,
    () => false,
  );
  // An error-like object (one that lost its prototype crossing threads, say) says more
  // by its fields than String() would ("[object Object]").
  const fields = (err ?? {}) as { name?: unknown; message?: unknown; stack?: unknown };
  const message = text(() => fields.message);
  if (isError || message !== null) {
    return {
      name: text(() => fields.name) ?? "Error",
      message: message ?? "",
      stack: text(() => fields.stack) ?? "",
    };
  }
  return {
    name: "Error",
    message: readSafely(
      () => String(err),
      (why) => `an error whose fields cannot be read (${why})`,
    ),
    stack: "",
  };
}

/**
 * `err` as a plain `Error` of its {@link readableErrorFields}: to report a
 * thrown value that reporting as it is failed with (a logger reading its
 * fields).
 */
export function readableError(err: unknown): Error {
  const { name, message, stack } = readableErrorFields(err);
  const plain = new Error(message);
  plain.name = name;
  plain.stack = stack;
  return plain;
}
