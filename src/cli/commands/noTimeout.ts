/**
 * The word the time options that may have no timeout at all take for none:
 * `inf`, as `--lease-timeout` took first (the options' `Infinity`). Every such
 * option takes it (`--idle-timeout`, `--lifetime`, `--worker-ttl`,
 * `--death-timeout`, `--close-worker-grace`, `--lease-timeout`): one taking it
 * and the next refusing it left scripts guessing. Dask's `parse_timedelta` has
 * no such word; its config says none with null or false, which a command line
 * says by leaving the option out where that is the default.
 */

/** What the help of such an option says. */
export const NO_TIMEOUT_HELP = "inf: never";

/** Whether `text` asks for no timeout. */
export function isNoTimeout(text: string): boolean {
  return text.trim().toLowerCase() === "inf";
}
