/**
 * The flags of the Worker's and the Scheduler's options that `weft worker` and
 * `weft scheduler` pass on as given, so that a refusal the Worker or the
 * Scheduler makes names the flag the user typed (`--tasks: no such file: …`), not
 * an option of the API they never gave (`Scheduler option taskModules: …`).
 */

const FLAGS: Readonly<Record<string, string>> = {
  taskModules: "--tasks",
  preload: "--preload",
};

/** `message` with the opening `Worker option X` or `Scheduler option X` named by X's flag. */
export function withOptionFlags(message: string): string {
  return message.replace(
    /^(?:Worker|Scheduler) option (taskModules|preload)\b/,
    (_, name: string) => FLAGS[name] ?? name,
  );
}
