/**
 * Comm addresses (`"tcp://10.0.0.1:8786"`, `"[::1]:8786"`,
 * `"inproc://10.0.0.1/1234/5"`): a port of the parsing helpers of
 * `distributed.comm.addressing` and of the backends' `get_address_host`.
 *
 * The worker state machine compares hosts (`get_address_host`) to prefer
 * fetching data from peers on the same machine.
 */

/** The scheme assumed for an address without `scheme://` (dask's `distributed.comm.default-scheme`). */
export const DEFAULT_SCHEME = "tcp";

/** An address split into scheme and the scheme-specific location. */
export interface SchemeAndLocation {
  /** The scheme, e.g. `"tcp"`; {@link DEFAULT_SCHEME} when the address had none. */
  readonly scheme: string;
  /** Everything after the last `://`, e.g. `"127.0.0.1:8786"`. */
  readonly location: string;
}

/** A host:port address fully parsed. */
export interface ParsedAddress {
  /** The scheme, e.g. `"tcp"`; {@link DEFAULT_SCHEME} when the address had none. */
  readonly scheme: string;
  /** Host name or IP, IPv6 without brackets (`"::1"`). May be `""` (all interfaces). */
  readonly host: string;
  /** The port number, 0 to 65535. */
  readonly port: number;
}

/** The port of `distributed.comm.addressing.parse_address`: split on the last `://`. */
export function splitScheme(address: string, strict = false): SchemeAndLocation {
  if (typeof address !== "string") {
    throw new TypeError(`expected an address string, got ${typeof address}`);
  }
  const at = address.lastIndexOf("://");
  if (at < 0) {
    if (strict) {
      throw new Error(
        `Invalid url scheme. Must include protocol like tcp://localhost:8000. Got ${address}`,
      );
    }
    return { scheme: DEFAULT_SCHEME, location: address };
  }
  return { scheme: address.slice(0, at), location: address.slice(at + 3) };
}

/** Python's `int(str)` for a port, plus a range check: clear errors instead of NaN. */
function parsePort(text: string, address: string): number {
  const t = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) {
    throw new Error(`invalid port ${JSON.stringify(text)} in address ${JSON.stringify(address)}`);
  }
  const port = Number(t.replaceAll("_", ""));
  if (port < 0 || port > 65535) {
    throw new Error(`port ${port} out of range 0-65535 in address ${JSON.stringify(address)}`);
  }
  return port + 0;
}

/**
 * The port of `parse_host_port`: parse `"host:port"`, `"[ipv6]:port"`,
 * `"host"` or `"[ipv6]"` (the last two only with `defaultPort`). A leading
 * `scheme://` is ignored. Throws an Error for malformed addresses.
 */
export function parseHostPort(
  address: string,
  defaultPort?: number,
): { readonly host: string; readonly port: number } {
  const original = address;
  const fail = (why: string): never => {
    throw new Error(`invalid address ${JSON.stringify(original)}: ${why}`);
  };
  const useDefault = (): number => {
    if (defaultPort === undefined) {
      throw new Error(`missing port number in address ${JSON.stringify(original)}`);
    }
    return defaultPort;
  };
  if (address.includes("://")) {
    const parts = address.split("://");
    if (parts.length !== 2) fail("more than one '://'");
    address = parts[1];
  }
  let host: string;
  let port: number;
  if (address.startsWith("[")) {
    // IPv6 notation: '[addr]:port' or '[addr]'; the address may contain colons.
    const close = address.indexOf("]");
    if (close < 0) fail("unterminated '['");
    host = address.slice(1, close);
    const tail = address.slice(close + 1);
    if (tail === "") port = useDefault();
    else if (!tail.startsWith(":")) port = fail("expected ':' after ']'");
    else port = parsePort(tail.slice(1), original);
  } else {
    // Generic notation: 'addr:port' or 'addr'.
    const colon = address.lastIndexOf(":");
    if (colon < 0) {
      host = address;
      port = useDefault();
    } else {
      host = address.slice(0, colon);
      if (host.includes(":")) fail("IPv6 hosts must be written in brackets");
      port = parsePort(address.slice(colon + 1), original);
    }
  }
  return { host, port };
}

/**
 * Parse a full address into scheme, host and port. The scheme defaults to
 * {@link DEFAULT_SCHEME}. `inproc://` addresses have no port and are rejected;
 * use {@link getAddressHost} for them.
 */
export function parseAddress(address: string, defaultPort?: number): ParsedAddress {
  const { scheme, location } = splitScheme(address);
  if (scheme === "inproc") {
    throw new Error(`inproc address ${JSON.stringify(address)} has no host:port`);
  }
  const { host, port } = parseHostPort(location, defaultPort);
  return { scheme, host, port };
}

/** Build an address from a scheme and location (`unparse_address`). */
export function unparseAddress(scheme: string, location: string): string {
  return `${scheme}://${location}`;
}

/**
 * The host (name or IP, IPv6 without brackets) an address is located on:
 * `distributed.comm.get_address_host`. `"tcp://1.2.3.4:80"` → `"1.2.3.4"`,
 * `"[::1]:8786"` → `"::1"`, `"inproc://10.0.0.1/1234/5"` → `"10.0.0.1"`.
 * Like the TCP backend it requires a port; throws an Error for malformed input.
 */
export function getAddressHost(address: string): string {
  const { scheme, location } = splitScheme(address);
  if (scheme === "inproc") {
    // inproc locations are "<ip>/<pid>/<n>"; the reference answers the manager's IP.
    const slash = location.indexOf("/");
    const host = slash < 0 ? location : location.slice(0, slash);
    if (host === "") throw new Error(`invalid inproc address ${JSON.stringify(address)}`);
    return host;
  }
  return parseHostPort(location).host;
}

/** {@link getAddressHost}, or null for an address it cannot read. */
export function addressHostOrNull(address: string): string | null {
  try {
    return getAddressHost(address);
  } catch {
    return null;
  }
}

/**
 * True if `names` (worker addresses, hosts or names, as a `workers=` option
 * gives them) names the worker at `address`, on `host`, registered as `name`:
 * by its address, by its host (any worker there), or by its name.
 */
export function namesWorker(
  names: ReadonlySet<string>,
  address: string,
  host: string | null,
  name: string | null = null,
): boolean {
  return (
    names.has(address) || (host !== null && names.has(host)) || (name !== null && names.has(name))
  );
}
