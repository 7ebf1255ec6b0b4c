/**
 * Why `weft scheduler` or `weft worker` could not listen where it was told, in
 * the words of the flag that told it: Node's own error names neither the flag
 * nor the address given (`getaddrinfo ENOTFOUND typo` for `--listen
 * tcp://typo:0`, `cannot serve HTTP at typo:0: ENOTFOUND` for `--http-address`).
 */

import { parseHostPort, splitScheme } from "../../util/address.ts";

/** Where the command was told to listen: its flags' values as given. */
export interface ListenFlags {
  /** Not given for an embedded cluster (weft run), which listens on no TCP address. */
  readonly listen?: string;
  /**
   * Whether `listen` is the command's default (the user typed no --listen): a failure
   * there is said of the default, with --listen as the way to another address.
   */
  readonly listenIsDefault?: boolean;
  readonly httpAddress?: string;
}

/** Node's error of a listen or a name lookup: a lookup's names its host. */
type ListenError = NodeJS.ErrnoException & { readonly hostname?: string };

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: "the address is in use (EADDRINUSE)",
  EADDRNOTAVAIL: "not an address of this machine (EADDRNOTAVAIL)",
  EACCES: "permission denied (EACCES)",
};

function errnoOf(value: unknown): ListenError | null {
  return value instanceof Error && typeof (value as ListenError).code === "string"
    ? (value as ListenError)
    : null;
}

/** The host `--listen` names, or null when it names none (a port alone, inproc://). */
function listenHost(listen: string): string | null {
  try {
    return parseHostPort(splitScheme(listen).location, 0).host;
  } catch {
    return null;
  }
}

/** Why `err`, a failure to listen or resolve, failed; null if not one. */
function why(err: ListenError): string | null {
  if (err.syscall === "getaddrinfo") {
    return `cannot resolve the host ${JSON.stringify(err.hostname)} (${err.code})`;
  }
  if (err.syscall === "listen") return WHY[err.code as string] ?? err.message;
  return null;
}

/** What `err`, a failure to listen or resolve, says of `flag address`; null if not one. */
function said(flag: string, address: string, err: ListenError): string | null {
  const reason = why(err);
  return reason === null ? null : `${flag} ${address}: ${reason}`;
}

/**
 * The message for `err`, the error a start threw, naming `--listen` or
 * `--http-address` and its address when it is a failure to listen there or to
 * resolve its host; `err`'s own message otherwise (a failure to reach the
 * scheduler names its address already).
 */
export function listenFailureMessage(err: unknown, flags: ListenFlags): string {
  const message = err instanceof Error ? err.message : String(err);
  // The HTTP server's failure says where, its cause why (httpEndpoints.ts).
  if (flags.httpAddress !== undefined && message.startsWith("cannot serve HTTP at ")) {
    const cause = errnoOf((err as Error).cause);
    if (cause !== null) return said("--http-address", flags.httpAddress, cause) ?? message;
  }
  const own = errnoOf(err);
  if (own === null || flags.listen === undefined) return message;
  // A name that does not resolve may be the scheduler's, for a worker: only the
  // listening host's is --listen's.
  if (own.syscall === "getaddrinfo" && own.hostname !== listenHost(flags.listen)) return message;
  if (flags.listenIsDefault === true) {
    // "--listen tcp://0.0.0.0:8786: the address is in use" told of a flag nobody typed.
    const reason = why(own);
    return reason === null
      ? message
      : `the default address ${flags.listen} (no --listen given): ${reason}: --listen chooses another`;
  }
  return said("--listen", flags.listen, own) ?? message;
}
