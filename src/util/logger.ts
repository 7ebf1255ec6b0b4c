import { type DestinationStream, type Logger, pino } from "pino";
import { containLogger } from "./containedLogger.ts";

/**
 * A pino logger of weft's: JSON lines to `destination` (stderr by default).
 * Errors are logged with their causes nested (`err.cause`) and their messages
 * as they are: pino's default serializer appends every cause's message to the
 * error's own, and weft's messages already quote their cause ("send to … failed:
 * <why>"), which then printed twice.
 *
 * Stderr is written synchronously, as Node writes `process.stderr` to files,
 * terminals and (on Linux) pipes. pino's asynchronous destination flushes
 * what it still holds when the process exits, and its flush retries a broken
 * pipe forever: a worker whose nanny was killed (the reader of its stderr)
 * never exited, writing its last lines again and again.
 *
 * Contained (see `containedLogger.ts`): a write that fails otherwise than on a
 * broken pipe (a full disk, stderr redirected to one) is said once, not thrown
 * into the command or server logging.
 */
export function weftLogger(
  name: string | undefined,
  level: string,
  destination: DestinationStream = pino.destination({ dest: 2, sync: true }),
): Logger {
  return containLogger(
    pino(
      {
        ...(name === undefined ? {} : { name }),
        level,
        serializers: { err: pino.stdSerializers.errWithCause },
      },
      destination,
    ),
  );
}

/** The levels a weft logger takes, as `--log-level` and `$WEFT_LOG_LEVEL` name them. */
const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * The level `$WEFT_LOG_LEVEL` names (unset or empty: `fallback`), checked: pino's
 * own error for an unknown one (`default level:verbose must be included in custom
 * levels`) named neither the variable nor the levels, and came from a `new Worker`
 * (or scheduler, client) that was given no logger at all.
 */
export function envLogLevel(fallback: string): string {
  const level = process.env.WEFT_LOG_LEVEL;
  if (level === undefined || level === "") return fallback;
  if (!LEVELS.includes(level)) {
    throw new Error(
      `$WEFT_LOG_LEVEL must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(level)}`,
    );
  }
  return level;
}
