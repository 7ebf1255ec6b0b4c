import { existsSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { parseHostPort, splitScheme } from "../../util/address.ts";
import { readSchedulerFile } from "../../util/schedulerFile.ts";

/**
 * How long a look at an address waits for an answer. A refusal comes at once; no
 * answer (a host that drops the packets) is no refusal, and is left to the worker's
 * own connection and its timeout.
 */
const PROBE_TIMEOUT_MS = 2_000;

/** What a look at one address found. */
type Reach = "accepts" | "refuses" | "other";

/**
 * Whether something listens at the TCP (or TLS) `address`: a bare connection,
 * closed at once, without a word of weft's protocol or a TLS handshake (the
 * scheduler drops such a connection quietly, as its check of a worker's address
 * does). "other" for what is not a refusal: a timeout, an unknown host, an
 * address that is not tcp:// or tls:// (the worker's own connection says those).
 */
function reach(address: string): Promise<Reach> {
  let host: string;
  let port: number;
  try {
    const { scheme, location } = splitScheme(address);
    if (scheme !== "tcp" && scheme !== "tls") return Promise.resolve("other");
    ({ host, port } = parseHostPort(location));
  } catch {
    return Promise.resolve("other");
  }
  return new Promise((resolve) => {
    const socket = netConnect({ host, port, timeout: PROBE_TIMEOUT_MS });
    let settled = false;
    const done = (found: Reach) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(found);
    };
    socket.once("connect", () => done("accepts"));
    // After a stalled event loop, the timer runs before the poll phase delivers a refusal
    // that came long ago: let it be delivered first (setImmediate runs after the poll).
    socket.once("timeout", () => setImmediate(() => done("other")));
    socket.once("error", (err: NodeJS.ErrnoException) =>
      done(err.code === "ECONNREFUSED" ? "refuses" : "other"),
    );
  });
}

/**
 * The scheduler address in the scheduler file at `path`, once something
 * accepts connections there: a file a scheduler left behind (SIGKILLed, its
 * machine lost) names an address that refuses them, until the scheduler
 * started again (perhaps on another host or port) writes its own. So the file
 * is read again while the address it names refuses, up to `timeoutMs` in all,
 * the wait for the file to appear included. Rejects, saying so, when the file
 * never appears or its address still refuses at the end; any other failure to
 * connect is left to the caller's connection to report. The first refusal is
 * logged to `logger`, as a worker says it waits for its scheduler.
 */
export async function liveSchedulerFromFile(
  path: string,
  timeoutMs: number,
  logger?: Logger,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let pause = 50;
  let told = false;
  for (let first = true; ; first = false) {
    const address = first
      ? await readSchedulerFile(path, { timeoutMs })
      : await readSchedulerFile(path, { timeoutMs: Math.max(0, deadline - Date.now()) }).catch(
          (err: unknown) => {
            // Removed by a scheduler that closed, and not written again by another.
            if (existsSync(path)) throw err;
            throw new Error(
              `the scheduler file ${path} named a scheduler that refused connections, and no other within ${timeoutMs} ms`,
            );
          },
        );
    if ((await reach(address)) !== "refuses") return address;
    if (!told) {
      told = true;
      logger?.info(
        { scheduler: address, schedulerFile: path, waitMs: timeoutMs },
        "the scheduler the scheduler file names refuses connections (gone, or not started yet?): reading the file again until one accepts",
      );
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `the scheduler at ${address} (named by ${path}) still refuses connections after ${timeoutMs} ms: is it running, and its file up to date?`,
      );
    }
    await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    pause = Math.min(pause * 2, 1_000);
  }
}
