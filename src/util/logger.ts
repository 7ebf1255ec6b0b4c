import { type DestinationStream, type Logger, pino } from "pino";

/**
 * A pino logger of weft's: JSON lines to `destination` (stderr by default).
 * Errors are logged with their causes nested (`err.cause`) and their messages
 * as they are: pino's default serializer appends every cause's message to the
 * error's own, and weft's messages already quote their cause ("send to … failed:
 * <why>"), which then printed twice.
 */
export function weftLogger(
  name: string | undefined,
  level: string,
  destination: DestinationStream = pino.destination(2),
): Logger {
  return pino(
    {
      ...(name === undefined ? {} : { name }),
      level,
      serializers: { err: pino.stdSerializers.errWithCause },
    },
    destination,
  );
}
