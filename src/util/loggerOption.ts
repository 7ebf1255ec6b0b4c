/**
 * The `logger` option of a scheduler or a worker: checked, then contained (see
 * `containedLogger.ts`). Contained unchecked, a value that is no logger (a
 * number, an object without its methods) failed at every line, which
 * containment then hid: weft ran on with no log, one report on stderr the
 * only sign. The client and the cluster check theirs with their other options.
 */

import type { Logger } from "pino";
import { containLogger } from "./containedLogger.ts";
import { readSafely } from "./readSafely.ts";
import { showValue } from "./showValue.ts";

/** The methods a logger weft is given must have: a missing `debug` or `trace` is taken as silent. */
const METHODS = ["child", "info", "warn", "error"] as const;

/**
 * `given`, contained, or `fallback()` contained when it is undefined; a
 * TypeError naming `owner`'s option (`"Scheduler"`: "Scheduler option logger
 * must be…") for a value that lacks a logger's methods.
 */
export function loggerOption(owner: string, given: unknown, fallback: () => Logger): Logger {
  if (given === undefined) return containLogger(fallback());
  const isLogger = readSafely(
    () =>
      typeof given === "object" &&
      given !== null &&
      METHODS.every((m) => typeof (given as Record<string, unknown>)[m] === "function"),
    () => false,
  );
  if (!isLogger) {
    const shown = readSafely(
      () => showValue(given),
      (why) => `a value that cannot be read (${why})`,
    );
    throw new TypeError(`${owner} option logger must be a pino logger, got ${shown}`);
  }
  return containLogger(given as Logger);
}
