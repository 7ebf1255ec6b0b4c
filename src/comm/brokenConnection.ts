/**
 * What a log says of a connection its peer broke (a worker killed, a client's
 * process crashing): an expected event in a distributed runtime, told in one
 * line naming the peer, the system error code and the reason, without the
 * transport's stack, which says nothing of the peer and is kept at debug. Dask
 * logs a worker whose comm closes unexpectedly the same way, without a traceback
 * ("Received 'close-stream' from …; closing.", "Worker … closed unexpectedly"
 * hold no stack; `handle_worker` logs a `CommClosedError` at info).
 */

import { isNetworkError } from "./errors.ts";

/** The levels this needs of a logger; a pino logger, and rpc's CommLogger, have them. */
export interface BrokenConnectionLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

/** The first system error code (`ECONNRESET`, `EPIPE`) along `err`'s causes, or null. */
export function systemErrorCode(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && typeof e === "object" && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** `err`'s message on one line, or its text when it is no Error. */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, "; ");
}

/**
 * Logs that the connection to a peer broke: at `level` in one line with `peer`'s
 * fields (`{ worker: address }`, `{ client: id }`), the error's code and reason,
 * and the error with its stack at debug, for whoever needs the transport's frames.
 * An error that is no network failure (bytes that could not be read, a bug) is
 * logged at `level` with its stack, as before: that stack may say where it is.
 */
export function logBrokenConnection(
  logger: BrokenConnectionLogger,
  level: "warn" | "error",
  peer: Record<string, unknown>,
  err: unknown,
  msg: string,
): void {
  if (!isNetworkError(err)) {
    logger[level]({ ...peer, err }, msg);
    return;
  }
  logger[level]({ ...peer, code: systemErrorCode(err), reason: reasonOf(err) }, msg);
  logger.debug?.({ ...peer, err }, `${msg} (the error with its stack)`);
}
