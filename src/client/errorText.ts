/** A remote error read back from its text, when its error object did not come with it. */

/**
 * An error's name and message read back from its `exceptionText`, for when the
 * error object did not come with it: `Name: message` (the message may span
 * lines), or a name alone (`Error`, `ValueError`: an empty message, which the
 * text gives without `: `, as Python's `format_exception_only` does), or else
 * a text that names nothing (a thrown string), the message of an `Error`.
 */
export function nameAndMessage(exceptionText: string): { name: string; message: string } {
  const colon = exceptionText.indexOf(": ");
  if (colon > 0) {
    return { name: exceptionText.slice(0, colon), message: exceptionText.slice(colon + 2) };
  }
  if (ERROR_NAME.test(exceptionText)) return { name: exceptionText, message: "" };
  return { name: "Error", message: exceptionText };
}

/** A class name, maybe qualified (`ValueError`, `mymodule.ParseFailure`). */
const ERROR_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;
