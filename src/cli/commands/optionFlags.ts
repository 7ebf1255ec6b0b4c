/**
 * The flags of the Worker's and the Scheduler's options that `weft worker` and
 * `weft scheduler` pass on as given, so that a refusal the Worker or the
 * Scheduler makes names the flag the user typed (`--tasks: no such file: …`,
 * `--spill-directory: not a directory: …`), not an option of the API they never
 * gave (`Scheduler option taskModules: …`, `Worker option spillDirectory: …`).
 * The options the commands check themselves first (`--nthreads`, the durations,
 * the sizes) never reach the API with a bad value, and are not here.
 */

const FLAGS: Readonly<Record<string, string>> = {
  taskModules: "--tasks",
  preload: "--preload",
  name: "--name",
  listen: "--listen",
  contactAddress: "--contact-address",
  httpAddress: "--http-address",
  metricsNamespace: "--metrics-namespace",
  spillDirectory: "--spill-directory",
  memoryLimit: "--memory-limit",
  memoryTarget: "--memory-target",
  memorySpill: "--memory-spill",
  memoryPause: "--memory-pause",
  memoryTerminate: "--memory-terminate",
  memoryMeasure: "--memory-measure",
};

/** The option names of two words or more: no English word, so named anywhere in a message. */
const CAMEL_NAMES = Object.keys(FLAGS).filter((name) => /[A-Z]/.test(name));

/**
 * A refusal of an option: `Worker option X`, `Scheduler option X`, or, as the
 * Worker's start says of its memory options, a bare `memoryLimit …` or
 * `spillDirectory …` (names of one word, `name`, are options only so prefixed).
 */
const OPTION_REFUSAL = new RegExp(
  `^(?:(?:Worker|Scheduler) option (${Object.keys(FLAGS).join("|")})|(${CAMEL_NAMES.join("|")}))\\b`,
);

const NAMED_ANYWHERE = new RegExp(`\\b(${CAMEL_NAMES.join("|")})\\b( "(\\w+)")?`, "g");

/**
 * `message` with the options it refuses named by their flags
 * (`Worker option memoryTarget (0.99) must be below memoryPause (0.8)` is
 * `--memory-target (0.99) must be below --memory-pause (0.8)`, and a value
 * such as `memoryMeasure "managed"` is `--memory-measure managed`); any other
 * message as it is, as it may quote a task's or a module's own words.
 */
export function withOptionFlags(message: string): string {
  const refusal = OPTION_REFUSAL.exec(message);
  if (refusal === null) return message;
  const name = (refusal[1] ?? refusal[2]) as string;
  const tail = message.slice(refusal[0].length);
  // Only the memory options' refusals name other options; any other's goes on
  // with the user's own text (a path, a module's message, a name), whose words
  // are not to be taken for options: `/data/memoryLimit/spill` stays as it is.
  if (!name.startsWith("memory")) return `${FLAGS[name] ?? name}${tail}`;
  const rest = tail.replace(
    NAMED_ANYWHERE,
    (_, other: string, _quoted: string | undefined, value: string | undefined) =>
      `${FLAGS[other] ?? other}${value === undefined ? "" : ` ${value}`}`,
  );
  return `${FLAGS[name] ?? name}${rest}`;
}
