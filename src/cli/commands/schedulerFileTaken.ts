/**
 * `weft scheduler --scheduler-file FILE` where FILE names a scheduler still running:
 * a second scheduler given the same path by mistake (a job script run twice, a
 * scheduler started again while the first was not stopped) wrote its own address
 * over the first's, sending the workers and clients that read the file later
 * (nannies' workers started again, a restart's) to it; closing, it removed the file,
 * and they then waited for a file that never came back, the first scheduler still
 * running. So the address the file names is asked its `identity`: a weft scheduler
 * answering there refuses the file. Whatever else is there replaces it: nothing
 * listening (a scheduler SIGKILLed, its machine lost), or a program that accepts
 * connections but answers as no scheduler (the port taken by another program since,
 * a network that accepts every connection), said in a note. Dask's scheduler writes
 * over the file whatever it names.
 */

import { readFile } from "node:fs/promises";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { rpc } from "../../comm/rpc.ts";
import { TcpComm } from "../../comm/tcp.ts";
import { secureContextFor, type TlsCredentials } from "../../comm/tls.ts";
import { parseAddress, splitScheme } from "../../util/address.ts";
import { deviceProblem } from "../../util/regularFile.ts";
import { addressIn } from "../../util/schedulerFile.ts";
import { showValue } from "../../util/showValue.ts";

/** How long the address a scheduler file names is given to say what it is, in all. */
const PROBE_MS = 2_000;

/** What answers at the address a scheduler file names (see {@link whatAnswersIn}). */
export type FileAddressAnswer =
  /** No file, none readable, or nothing accepts connections at its address: replaced. */
  | { readonly kind: "nothing" }
  /** A weft scheduler answered `identity`: the file is refused. */
  | {
      readonly kind: "scheduler";
      readonly address: string;
      /** Its ID. */
      readonly id: string;
      /** The ID the file holds, undefined if none (a file written by hand). */
      readonly fileId: string | undefined;
    }
  /** Something accepts connections but answers as no weft scheduler (`why`): replaced, said so. */
  | { readonly kind: "other"; readonly address: string; readonly why: string }
  /** A `tls://` address this scheduler cannot ask (no TLS handshake, `why`): refused. */
  | { readonly kind: "unasked"; readonly address: string; readonly why: string };

/**
 * What answers at the address the scheduler file at `path`, holding `text` (as
 * {@link schedulerFileText} read it; null: none there), names, asked within
 * `probeMs` in all: first whether it accepts a TCP connection, then, over weft's
 * protocol, its `identity`. A `tls://` address is asked over TLS with `tls`, this
 * scheduler's own credentials, its certificate not checked: a scheduler of the
 * cluster, or of one with other certificates, refuses this one's certificate, and
 * is told from a program that speaks no TLS or answers as no scheduler. A peer that
 * accepts and never answers (a sink) is given up at `probeMs`; garbage, an error or
 * a closed connection is an answer from no scheduler.
 */
export async function whatAnswersIn(
  path: string,
  text: string | null,
  tls: TlsCredentials | undefined,
  probeMs: number = PROBE_MS,
): Promise<FileAddressAnswer> {
  if (text === null) return { kind: "nothing" };
  let address: string;
  let host: string;
  let port: number;
  let fileId: string | undefined;
  try {
    address = addressIn(path, text);
    ({ host, port } = parseAddress(address));
    const id = (JSON.parse(text) as { id?: unknown }).id;
    fileId = typeof id === "string" ? id : undefined;
  } catch {
    return { kind: "nothing" };
  }
  const deadline = Date.now() + probeMs;
  if (!(await acceptsTcp(host, port, probeMs))) return { kind: "nothing" };
  const secure = splitScheme(address).scheme === "tls";
  if (secure && tls === undefined) {
    return {
      kind: "unasked",
      address,
      why: "this scheduler has no TLS credentials (--tls-ca-file, --tls-cert, --tls-key) to ask it with",
    };
  }
  const left = (): number => Math.max(1, deadline - Date.now());
  const dialled = await dial(host, port, secure ? tls : undefined, left());
  if (dialled === "silent") return silent(address, probeMs);
  if (dialled === "refused") return { kind: "nothing" }; // gone since the first look
  if ("refusedUs" in dialled) return { kind: "unasked", address, why: dialled.refusedUs };
  if ("failed" in dialled) return { kind: "other", address, why: dialled.failed };
  const { socket } = dialled;
  // A weft TLS listener drops a certificate it refuses with a reset, before any byte.
  let heard = false;
  let reset = false;
  socket.on("data", () => {
    heard = true;
  });
  socket.on("error", (err: NodeJS.ErrnoException) => {
    reset ||= err.code === "ECONNRESET";
  });
  const comm = new TcpComm(socket, undefined, undefined, false, secure ? "tls" : "tcp");
  const giveUp = AbortSignal.timeout(left());
  try {
    const answer = await rpc(comm).call("identity", {}, { signal: giveUp });
    const { type, id } = (answer ?? {}) as { type?: unknown; id?: unknown };
    if (type === "Scheduler" && typeof id === "string") {
      return { kind: "scheduler", address, id, fileId };
    }
    return { kind: "other", address, why: `it answered identity with ${showValue(answer)}` };
  } catch (err) {
    if (secure && reset && !heard) {
      return {
        kind: "unasked",
        address,
        why: "it closed the TLS connection before answering, refusing this scheduler's certificate?",
      };
    }
    if (giveUp.aborted) return silent(address, probeMs);
    return { kind: "other", address, why: `it answered no identity: ${(err as Error).message}` };
  } finally {
    comm.abort();
  }
}

/**
 * A connection to `host:port` (over TLS with `tls`, the peer's certificate not
 * checked) within `timeoutMs`: the socket, or how it failed.
 */
function dial(
  host: string,
  port: number,
  tls: TlsCredentials | undefined,
  timeoutMs: number,
): Promise<
  | "silent"
  | "refused"
  | { readonly refusedUs: string }
  | { readonly failed: string }
  | { readonly socket: Socket }
> {
  return new Promise((resolve) => {
    const socket =
      tls === undefined
        ? netConnect({ host, port })
        : tlsConnect({
            host,
            port,
            secureContext: secureContextFor(tls),
            // Only its identity is asked, and nothing told: who it is, not whom it trusts.
            rejectUnauthorized: false,
            checkServerIdentity: () => undefined,
          });
    const connected = tls === undefined ? "connect" : "secureConnect";
    const onConnect = (): void => done({ socket });
    const onError = (err: NodeJS.ErrnoException & { reason?: unknown }): void => {
      if (err.code === "ECONNREFUSED") {
        done("refused");
        return;
      }
      // OpenSSL's message is its error queue, on lines: its reason says it.
      const why = `${typeof err.reason === "string" ? err.reason : err.message} (${err.code})`;
      // A TLS server that refused this scheduler's certificate: an alert, or a reset.
      if (tls !== undefined && (err.code === "ECONNRESET" || /alert/.test(why))) {
        done({
          refusedUs: `it ended the TLS handshake, refusing this scheduler's certificate? (${why})`,
        });
      } else {
        done({ failed: `${tls === undefined ? "" : "the TLS handshake failed: "}${why}` });
      }
    };
    const timer = setTimeout(() => done("silent"), timeoutMs);
    const done = (outcome: Awaited<ReturnType<typeof dial>>): void => {
      clearTimeout(timer);
      socket.removeListener(connected, onConnect);
      socket.removeListener("error", onError);
      if (typeof outcome !== "object" || !("socket" in outcome)) {
        socket.on("error", () => {}); // what comes after giving up is nothing to tell
        socket.destroy();
      }
      resolve(outcome);
    };
    socket.once(connected, onConnect);
    socket.once("error", onError);
  });
}

/** A peer at `address` that accepted a connection and said nothing within `probeMs`. */
function silent(address: string, probeMs: number): FileAddressAnswer {
  return {
    kind: "other",
    address,
    why: `it accepts connections but did not answer within ${probeMs / 1000} s`,
  };
}

/** Whether `host:port` accepts a TCP connection within `timeoutMs` (closed at once). */
function acceptsTcp(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = netConnect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * The text of the file at `path` (a symlink followed), null when there is none or it
 * cannot be read: looked at again once the scheduler listens, to tell whether another
 * scheduler wrote the file while this one started.
 */
export async function schedulerFileText(path: string): Promise<string | null> {
  // Unread, a FIFO waiting for a writer, /dev/zero without end: writing it says what it is.
  if ((await deviceProblem(path)) !== null) return null;
  return readFile(path, "utf8").catch(() => null);
}

/**
 * Why the file at `path`, holding `text` (null: none there), is not to be written over
 * though it names no scheduler running: it is no scheduler file (a file of the user's
 * given by mistake), which writing, then removing as the scheduler closes, would lose.
 * Null for none, an empty one (made ahead by a job script), or a scheduler file.
 */
export function notSchedulerFileMessage(path: string, text: string | null): string | null {
  if (text === null || text.trim() === "") return null;
  try {
    addressIn(path, text);
    return null;
  } catch (err) {
    return `${(err as Error).message}: written over, what it holds would be lost. Give another --scheduler-file, or remove it`;
  }
}

/**
 * Why `weft scheduler` does not start with the scheduler file at `path`, given what
 * answers at its address; null when it starts (nothing there, or no scheduler).
 */
export function schedulerFileTakenMessage(path: string, found: FileAddressAnswer): string | null {
  if (found.kind === "nothing" || found.kind === "other") return null;
  const { address } = found;
  if (found.kind === "unasked") {
    return (
      `the scheduler file ${path} names ${address}, which accepts connections, but this scheduler ` +
      `cannot ask it what it is (${found.why}): it may be a scheduler still running with other ` +
      `certificates, whose workers and clients would come to this one. Stop it first, or give ` +
      `another --scheduler-file (if what listens at ${address} is no scheduler of yours, remove the file)`
    );
  }
  if (found.fileId === undefined || found.fileId === found.id) {
    return (
      `the scheduler file ${path} names a scheduler still running at ${address} (${found.id} answers there): ` +
      `written over, its workers and clients would come to this one. Stop that scheduler first, ` +
      `or give another --scheduler-file`
    );
  }
  // The file is stale, but whoever reads it now joins the cluster running there.
  return (
    `the scheduler file ${path} names ${found.fileId} at ${address}, where another scheduler, ` +
    `${found.id}, now runs: whoever reads the file joins that cluster, and written over, its ` +
    `workers and clients would come to this one. Stop that scheduler first, or give another ` +
    `--scheduler-file (if that cluster is not to be found through this file, remove it)`
  );
}

/**
 * The note `weft scheduler` writes on stderr when it replaces the scheduler file at
 * `path` though its address accepts connections; null when there is nothing to say.
 */
export function replacedFileNote(path: string, found: FileAddressAnswer): string | null {
  if (found.kind !== "other") return null;
  return `the scheduler file ${path} named ${found.address}, where no weft scheduler answers (${found.why}): replacing it`;
}
