/**
 * Where a worker listens and the address it tells peers, for `weft worker`.
 * A worker listening on every interface (`tcp://0.0.0.0:port`, or `tls://`) advertises
 * the address of the interface that routes to the scheduler (found with a
 * connected UDP socket, which sends nothing), on the same port; port 0 is
 * resolved to a free port first, so that both agree. While the scheduler's name
 * does not resolve, it advertises the machine's first external address.
 */

import { createSocket } from "node:dgram";
import { createServer, isIPv6 } from "node:net";
import { parseHostPort, splitScheme } from "../../util/address.ts";

/** The local IP address used to reach `host` (a name or an address). */
export function localAddressToward(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIPv6(host) ? "udp6" : "udp4");
    socket.on("error", (err) => {
      socket.close();
      reject(err);
    });
    // A name that does not resolve comes to this callback as its argument, not as an
    // error event: the socket is then unbound (0.0.0.0), no address of this machine.
    socket.connect(9, host, (err?: Error) => {
      if (err instanceof Error) {
        socket.close();
        reject(err);
        return;
      }
      const { address } = socket.address();
      socket.close();
      resolve(address);
    });
  });
}

/** A TCP port free on `host` right now. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: host === "" ? undefined : host, port: 0 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const bracket = (host: string): string => (host.includes(":") ? `[${host}]` : host);

/**
 * `{listen, contact}` for a worker asked to listen at `listen` and to
 * register with `scheduler`: `contact` is null unless `listen` is on every
 * interface.
 */
export async function workerAddresses(
  listen: string,
  scheduler: string,
): Promise<{ listen: string; contact: string | null }> {
  const toScheduler = splitScheme(scheduler);
  if (toScheduler.scheme === "inproc") {
    throw new Error(
      `${scheduler}: an inproc:// scheduler lives in another process's memory; give its tcp://host:port`,
    );
  }
  const { scheme, location } = splitScheme(listen);
  if (scheme !== "tcp" && scheme !== "tls") return { listen, contact: null };
  const { host, port: asked } = parseHostPort(location, 0);
  if (host !== "" && host !== "0.0.0.0" && host !== "::") return { listen, contact: null };
  // No route to look up toward a scheduler that is not a TCP one: connecting says what is
  // wrong with its address (`foo://x` was reported as a missing port number).
  if (toScheduler.scheme !== "tcp" && toScheduler.scheme !== "tls") {
    return { listen, contact: null };
  }
  const target = parseHostPort(toScheduler.location).host;
  let ip: string;
  try {
    ip = await localAddressToward(target === "" || target === "0.0.0.0" ? "127.0.0.1" : target);
  } catch {
    // A scheduler name that does not resolve yet (a service, a batch job's host), which
    // the worker waits for: it advertises this machine's first external address (the
    // Worker's own choice for a wildcard listener), not one routed toward the scheduler.
    return { listen, contact: null };
  }
  // The scheduler is reached over IPv6: listening on 0.0.0.0 (IPv4 only, the default)
  // would refuse the advertised address; `::` takes IPv6 and IPv4 alike.
  const any = host === "::" || isIPv6(ip) ? "::" : "0.0.0.0";
  const port = asked === 0 ? await freePort(any) : asked;
  return {
    listen: `${scheme}://${bracket(any)}:${port}`,
    contact: `${scheme}://${bracket(ip)}:${port}`,
  };
}
