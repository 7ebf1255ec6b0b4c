/** What the commands share: logging, parsing of option values (sizes, resources, counts) and waiting for a stop. */

import type { Logger } from "pino";
import { type FrameLimits, frameLimitsProblem } from "../../comm/comm.ts";
import { loadTlsCredentials, type TlsCredentials } from "../../comm/tls.ts";
import { splitScheme } from "../../util/address.ts";
import { parseDecimal } from "../../util/decimal.ts";
import { beyondExactIntegers, EXACT_INTEGER_BOUND } from "../../util/exactInteger.ts";
import { weftLogger } from "../../util/logger.ts";
import { isWholeByteSize, parseBytes } from "../../util/parseBytes.ts";
import { parseTimedelta } from "../../util/parseTimedelta.ts";
import { MAX_TIMER_MS } from "../../util/timers.ts";
import { claimEarlySignal } from "./earlySignal.ts";
import { millisecondsOption } from "./millisecondsOption.ts";
import type { FrameLimitCliOptions, HttpCliOptions, TlsCliOptions } from "./serverOptions.ts";

/** A pino logger writing JSON lines to stderr. */
export function stderrLogger(name: string, level: string): Logger {
  return weftLogger(name, level);
}

/**
 * Resolves on the first of `signals` (default SIGINT and SIGTERM), with the
 * signal's name, or when `stopped` resolves (with null). The signal handlers
 * are removed afterwards, so that a second signal ends the process at once (as
 * Dask's commands do), unless `ignoreRepeats`: then later ones are ignored
 * while the process closes (a worker under a nanny, which its nanny stops).
 * A signal of `signals` that bin/weft.js recorded before anything listened
 * (see {@link claimEarlySignal}) counts as one that comes now.
 */
export function untilSignal(
  stopped: Promise<void> = new Promise(() => {}),
  signals: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"],
  ignoreRepeats = false,
): Promise<string | null> {
  return new Promise((resolve) => {
    const onSignal = (sig: NodeJS.Signals) => {
      cleanup();
      if (ignoreRepeats) for (const s of signals) process.on(s, ignoreSignal);
      resolve(sig);
    };
    const cleanup = () => {
      for (const s of signals) process.removeListener(s, onSignal);
    };
    for (const s of signals) process.once(s, onSignal);
    // One that came while the command's modules loaded, before anything listened.
    const early = claimEarlySignal(signals);
    if (early !== null) onSignal(early);
    void stopped.then(() => {
      cleanup();
      resolve(null);
    });
  });
}

function ignoreSignal(): void {}

/**
 * Log at info that the signal `stoppedBy` (what {@link untilSignal} resolved
 * with, when it was one) stops the server: its log said only that it closed,
 * leaving a reader to guess whether it was stopped, failed or idle (Dask's
 * commands log `Exiting on signal`).
 */
export function logStopSignal(logger: Logger, stoppedBy: unknown): void {
  if (typeof stoppedBy !== "string" || !stoppedBy.startsWith("SIG")) return;
  logger.info({ signal: stoppedBy }, `received ${stoppedBy}; closing`);
}

/**
 * Parse `GPU=1,MEM=4e9` into `{GPU: 1, MEM: 4e9}`; throws a clear error. Pairs
 * apart by spaces are read too, as Dask's `--resources "GPU=2 MEM=10e9"` writes them
 * (spaces around `=` stay inside the pair).
 */
export function parseResources(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.replace(/\s*=\s*/g, "=").split(/[\s,]+/)) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    const name = eq > 0 ? part.slice(0, eq).trim() : "";
    const text = part.slice(eq + 1).trim();
    // Not Number: "GPU=" (the amount forgotten) must not declare 0 of it, nor GPU=0x10 16.
    const amount = parseDecimal(text);
    if (name === "" || !Number.isFinite(amount) || amount < 0) {
      throw new Error(`bad resource ${JSON.stringify(part)}: expected NAME=AMOUNT, e.g. GPU=1`);
    }
    // A name given twice kept its last amount without a word.
    if (Object.hasOwn(out, name)) {
      throw new Error(`resource ${JSON.stringify(name)} is given twice`);
    }
    // Defined, not assigned: `__proto__=1` would set the prototype and declare nothing.
    Object.defineProperty(out, name, {
      value: amount,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A duration option as Dask writes one (`1h`, `30 minutes`, `90s`; a bare
 * number is seconds: dask's `parse_timedelta`), in ms; throws a clear error.
 */
export function durationMs(name: string, text: string): number {
  let seconds: number;
  try {
    seconds = parseTimedelta(text);
  } catch (err) {
    throw new Error(`${name} must be a duration such as 1h, 30m or 90s: ${(err as Error).message}`);
  }
  const ms = Math.round(seconds * 1000);
  if (ms > MAX_TIMER_MS) {
    throw new Error(`${name} must be at most about 24.8 days (${MAX_TIMER_MS} ms), got ${text}`);
  }
  return ms;
}

/**
 * {@link durationMs} of at least 1 ms, for a time after which something ends
 * (`--lifetime`, `--idle-timeout`): the Worker and the Scheduler refused 0 in
 * their own options' words (`lifetimeMs`), unknown on a command line. Dask reads
 * 0 as none (its `if lifetime:`), which leaving the option out is here.
 */
export function positiveDurationMs(name: string, text: string): number {
  const ms = durationMs(name, text);
  if (ms < 1) {
    throw new Error(
      `${name} must be at least 1 ms (leave it out for none; Dask reads 0 so), got ${text}`,
    );
  }
  return ms;
}

/** Parse a size option (`512MiB`, `4GB`, `1e6`, dask's `parse_bytes`); throws a clear error. */
export function byteSize(name: string, text: string): number {
  let n: number;
  try {
    // parse_bytes reads a missing number as 1 ("" is 1 byte, "MB" 1 MB): an empty
    // value (an unset variable in a script) must not mean 1-byte frames or messages.
    n = text.trim() === "" ? Number.NaN : parseBytes(text);
  } catch {
    n = Number.NaN;
  }
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`${name} must be a size such as 64MiB or 4GB, got ${JSON.stringify(text)}`);
  }
  // parse_bytes truncates: "1.5" would be 1 byte, a limit no one meant.
  if (!isWholeByteSize(text)) {
    throw new Error(
      `${name} must be a whole number of bytes, got ${JSON.stringify(text)} (a size without a unit is in bytes)`,
    );
  }
  return n;
}

/** `{ httpAddress, metricsNamespace }` to spread into a server's options. */
export function httpFrom(opts: HttpCliOptions): {
  httpAddress?: string;
  metricsNamespace?: string;
} {
  return {
    ...(opts.httpAddress !== undefined ? { httpAddress: opts.httpAddress } : {}),
    ...(opts.metricsNamespace !== undefined ? { metricsNamespace: opts.metricsNamespace } : {}),
  };
}

/**
 * The TLS credentials `--tls-ca-file`, `--tls-cert` and `--tls-key` give,
 * read from their files, as `{ tls }` to spread into options; `{}` when none
 * is given. Throws naming a missing one (all three or none) or a file that
 * cannot be read.
 */
export function tlsFrom(opts: TlsCliOptions): { tls?: TlsCredentials } {
  const given = [
    ["--tls-ca-file", opts.tlsCaFile],
    ["--tls-cert", opts.tlsCert],
    ["--tls-key", opts.tlsKey],
  ] as const;
  const missing = given.filter(([, v]) => v === undefined).map(([flag]) => flag);
  if (missing.length === 3) return {};
  if (missing.length > 0) {
    throw new Error(
      `TLS needs --tls-ca-file, --tls-cert and --tls-key: ${missing.join(", ")} missing`,
    );
  }
  return {
    tls: loadTlsCredentials({
      caFile: opts.tlsCaFile as string,
      certFile: opts.tlsCert as string,
      keyFile: opts.tlsKey as string,
    }),
  };
}

/**
 * Throws when TLS credentials were given (`secure`, from {@link tlsFrom}) for a
 * scheduler address that is not tls://: the connection would go in the clear,
 * the --tls-* options silently unused, which is never what giving them meant.
 */
export function requireTlsScheme(scheduler: string, secure: { tls?: TlsCredentials }): void {
  if (secure.tls === undefined || splitScheme(scheduler).scheme === "tls") return;
  throw new Error(
    `--tls-ca-file, --tls-cert and --tls-key are for a tls:// scheduler, and ${scheduler} is not one: give its tls:// address (over tcp:// nothing would be encrypted)`,
  );
}

/** The limits given by `--max-frame-bytes` / `--max-message-bytes` (throws for bad sizes). */
export function frameLimitsFrom(opts: FrameLimitCliOptions): FrameLimits {
  const limits: FrameLimits = {
    ...(opts.maxFrameBytes !== undefined
      ? { maxFrameBytes: byteSize("--max-frame-bytes", opts.maxFrameBytes) }
      : {}),
    ...(opts.maxMessageBytes !== undefined
      ? { maxMessageBytes: byteSize("--max-message-bytes", opts.maxMessageBytes) }
      : {}),
  };
  const problem =
    frameLimitsProblem(limits) ?? messageFloorProblem(opts.maxMessageBytes, limits.maxMessageBytes);
  if (problem !== null) {
    throw new Error(
      problem
        .replace("maxFrameBytes", "--max-frame-bytes")
        .replace("maxMessageBytes", "--max-message-bytes"),
    );
  }
  return limits;
}

/**
 * The smallest `--max-message-bytes` the command line takes. A cluster's own
 * messages (a worker's registration and heartbeats, a task's completion) take
 * a few hundred bytes to a few KiB; below this a worker cannot even register,
 * and it is far likelier a unit forgotten (`100` for 100 MiB) than a wish.
 */
export const MIN_MAX_MESSAGE_BYTES = 64 * 1024;

function messageFloorProblem(text: string | undefined, bytes: number | undefined): string | null {
  if (text === undefined || bytes === undefined || bytes >= MIN_MAX_MESSAGE_BYTES) return null;
  const unitless = /^[\d.e+]+$/i.test(text.trim()) ? "; a size without a unit is in bytes" : "";
  return `--max-message-bytes must be at least 64KiB (a cluster's own messages, such as a worker's registration and heartbeats, need room), got ${JSON.stringify(text)} (${bytes} bytes${unitless})`;
}

/**
 * `text` as a decimal number, refused if past the exact integers: past 2^53 a number
 * is not (99999999999999999999 reads as 1e20), and the check that then refused it
 * said it must be ≥ 1. Checked first: `1e400`, read as Infinity, is no integer, and
 * was told it must be one, where weft sim and weft logs name the bound.
 */
function exact(name: string, text: string): number {
  const n = parseDecimal(text);
  if (beyondExactIntegers(n))
    throw new Error(`${name} must be ${EXACT_INTEGER_BOUND}, got ${text}`);
  return n;
}

/** Parse a positive integer option; throws a clear error. */
export function positiveInt(name: string, text: string): number {
  const n = exact(name, text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer, got ${text}`);
  return n;
}

/** Parse an integer option ≥ 0; throws a clear error. */
export function nonNegativeInt(name: string, text: string): number {
  const n = exact(name, text);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${name} must be an integer ≥ 0, got ${text}`);
  }
  // -0 (typed so) as 0: kept, it differs from 0 to Object.is, and a division by it is -Infinity.
  return n + 0;
}

/** The most pool threads one process starts (see poolThreads.ts). */
export { MAX_POOL_THREADS } from "../../worker/poolThreads.ts";

/**
 * Parse a timeout or interval option: whole milliseconds (`30000`) or a duration
 * (`30s`: see {@link millisecondsOption}) that a timer can wait; throws a clear error.
 */
export function timeoutMs(name: string, text: string): number {
  return millisecondsOption(name, text, MAX_TIMER_MS, "about 24.8 days");
}
