/**
 * The start of a task's error, for a `task-erred` sent in place of one too
 * large to send (by a worker to the scheduler, by the scheduler to a client):
 * the error's name and the first {@link ERROR_START_CHARS} characters of its text.
 */

import { cutText } from "../util/cutText.ts";

/** How much of an error's text a stand-in keeps. */
export const ERROR_START_CHARS = 2_000;

/**
 * The name of `exception` (a usable one: a non-empty string of at most 200
 * characters; else `Error`) and the start of `exceptionText`, with `…` where cut.
 */
export function errorStart(
  exception: unknown,
  exceptionText: unknown,
): { readonly name: string; readonly start: string } {
  const exc = exception as { name?: unknown } | null | undefined;
  const name =
    typeof exc?.name === "string" && exc.name !== "" && exc.name.length <= 200 ? exc.name : "Error";
  const text = String(exceptionText);
  const start = cutText(text, ERROR_START_CHARS);
  return { name, start };
}
