/**
 * A server's HTTP endpoints, as Dask's schedulers and workers serve them next to
 * their dashboard: `/health` for load balancers and orchestrators, `/metrics` for
 * Prometheus, a little JSON. Plain HTTP, read-only (GET and HEAD), on an address
 * of its own (`--http-address`); it shares nothing with the cluster's comms.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { asError } from "../util/asError.ts";
import { metricsNamespaceProblem } from "../util/metricsName.ts";
import { reportRefusedConnections } from "./refusedConnections.ts";

/** What a route answers. */
export interface HttpReply {
  /** Default 200. */
  readonly status?: number;
  readonly contentType: string;
  /** Text is sent as UTF-8. */
  readonly body: string | Uint8Array;
}

/** A route's handler: called for each GET (or HEAD) of its path. */
export type HttpRoute = () => HttpReply | Promise<HttpReply>;

/** Where to listen, parsed from `--http-address`. */
export interface HttpAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parse an HTTP listening address as Dask's `--dashboard-address` takes it:
 * `:8787` or `8787` (every interface), `host:8787`, `[::1]:8787`, or with
 * `http://` before it. Port 0: any free port. Throws a clear error otherwise.
 */
export function parseHttpAddress(address: string): HttpAddress {
  if (typeof address !== "string") {
    throw new TypeError(`HTTP address must be a string such as ":8787", got ${typeof address}`);
  }
  const bare = address.trim().replace(/^http:\/\//, "");
  const bad = () =>
    new TypeError(
      `HTTP address must be [host]:port (":8787", "127.0.0.1:8787", "[::1]:0"), got ${JSON.stringify(address)}`,
    );
  let host: string;
  let port: string;
  const ipv6 = /^\[([^\]]+)\]:(\d+)$/.exec(bare);
  if (ipv6 !== null) {
    host = ipv6[1] as string;
    port = ipv6[2] as string;
  } else if (/^\d+$/.test(bare)) {
    host = "";
    port = bare;
  } else {
    const colon = bare.lastIndexOf(":");
    if (colon < 0 || bare.indexOf(":") !== colon) throw bad();
    host = bare.slice(0, colon);
    port = bare.slice(colon + 1);
    if (!/^\d+$/.test(port) || /[\s/]/.test(host)) throw bad();
  }
  const n = Number(port);
  if (!Number.isSafeInteger(n) || n > 65_535) throw bad();
  return { host: host === "" ? "0.0.0.0" : host, port: n };
}

/** The HTTP options of a scheduler or worker, checked: `httpAddress` (null: none) and `metricsNamespace` (default `weft`). */
export function resolveHttpOptions(
  o: { readonly httpAddress?: string | null; readonly metricsNamespace?: string },
  owner: "Scheduler" | "Worker",
): { httpAddress: string | null; metricsNamespace: string } {
  const httpAddress = o.httpAddress ?? null;
  if (httpAddress !== null) {
    try {
      parseHttpAddress(httpAddress);
    } catch (err) {
      throw new TypeError(`${owner} option httpAddress: ${(err as Error).message}`);
    }
  }
  const metricsNamespace = o.metricsNamespace ?? "weft";
  const problem = metricsNamespaceProblem(metricsNamespace);
  if (problem !== null) throw new TypeError(`${owner} option ${problem}`);
  return { httpAddress, metricsNamespace };
}

/**
 * The most connections the endpoints hold at once by default: a scrape or a page
 * takes one, a browser a few. The server shares its process's file descriptors
 * with the cluster's comms: a flood of idle connections would otherwise take
 * them all, and workers, clients and peers could no longer connect.
 */
export const MAX_CONNECTIONS = 128;

/** What {@link HttpEndpoints.start} bounds. */
export interface HttpLimits {
  /** Milliseconds for a request's head to come, and that a connection may go without a byte moving (default 10 s). */
  readonly requestMs?: number;
  /** Connections held at once; those beyond are closed as they come (default {@link MAX_CONNECTIONS}). */
  readonly maxConnections?: number;
  /**
   * Hears how many connections were closed for being beyond `maxConnections`:
   * the first at once, then at most every 10 s (see `reportRefusedConnections`).
   */
  readonly onRefused?: (refused: number) => void;
}

/** A running HTTP server of a few read-only routes. */
export class HttpEndpoints {
  private constructor(
    private readonly server: Server,
    private readonly bound: AddressInfo,
    private readonly stopReporting: () => void,
  ) {}

  /**
   * Listen at `address` ({@link parseHttpAddress}) and answer `routes` (by exact
   * path; the query is ignored). `/` lists the routes. Rejects with a clear
   * error if the address cannot be listened on (in use, not this machine's).
   * `onError` hears of a route that threw (it answered 500). A connection that
   * has not sent a whole request's head within `requestMs` (default 10 s) is
   * closed: a scrape or a page is one short request, and an idle or trickling
   * client would otherwise hold a socket for Node's default of a minute or more.
   * Nor may a connection go `requestMs` without a byte moving: a client that
   * asked and stopped reading the answer would otherwise hold its socket, and
   * the part of the body not yet sent, for ever (Node's default). At most
   * `maxConnections` are held at once (see {@link MAX_CONNECTIONS}).
   */
  static async start(
    address: string,
    routes: Readonly<Record<string, HttpRoute>>,
    onError: (path: string, err: Error) => void = () => {},
    { requestMs = 10_000, maxConnections = MAX_CONNECTIONS, onRefused = () => {} }: HttpLimits = {},
  ): Promise<HttpEndpoints> {
    const { host, port } = parseHttpAddress(address);
    const table = new Map(Object.entries(routes));
    const server = createServer(
      {
        headersTimeout: requestMs,
        requestTimeout: requestMs,
        // Node checks these timeouts only this often (default 30 s).
        connectionsCheckingInterval: Math.max(1, Math.min(1_000, requestMs / 4)),
      },
      (req, res) => {
        void answer(req, res, table, onError);
      },
    );
    // A scrape is one short request: no keep-alive connection holds close() back.
    server.keepAliveTimeout = 1_000;
    // Without a 'timeout' listener, Node destroys a socket idle this long.
    server.setTimeout(requestMs);
    // Node closes connections beyond this as they are accepted.
    server.maxConnections = maxConnections;
    const stopReporting = reportRefusedConnections(server, onRefused);
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => {
        const why = (err as NodeJS.ErrnoException).code ?? err.message;
        reject(new Error(`cannot serve HTTP at ${host}:${port}: ${why}`, { cause: err }));
      };
      server.once("error", failed);
      server.listen(port, host, () => {
        server.off("error", failed);
        resolve();
      });
    });
    server.unref();
    return new HttpEndpoints(server, server.address() as AddressInfo, stopReporting);
  }

  /** The port listened on (the one chosen, for port 0). */
  get port(): number {
    return this.bound.port;
  }

  /** `http://host:port`, with the host listened on (`0.0.0.0`: every interface). */
  get url(): string {
    const host = this.bound.family === "IPv6" ? `[${this.bound.address}]` : this.bound.address;
    return `http://${host}:${this.bound.port}`;
  }

  /** Stop listening and end open connections. Idempotent. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) {
        resolve();
        return;
      }
      this.stopReporting();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/**
 * The path a request target names, without its query: `/health?x=1` and the
 * absolute form `http://host:8787/health`, which HTTP/1.1 servers must take
 * (RFC 9112 §3.2.2), are both `/health`.
 */
function routePath(target: string): string {
  const origin = /^https?:\/\/[^/?#]*/i.exec(target);
  const rest = origin === null ? target : target.slice(origin[0].length);
  const path = rest.split("?")[0] ?? "";
  return path === "" ? "/" : path;
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  routes: ReadonlyMap<string, HttpRoute>,
  onError: (path: string, err: Error) => void,
): Promise<void> {
  const path = routePath(req.url ?? "/");
  const head = req.method === "HEAD";
  const send = (status: number, contentType: string, body: string | Uint8Array, extra = {}) => {
    res.writeHead(status, {
      "Content-Type": contentType,
      "Content-Length": Buffer.byteLength(body),
      ...extra,
    });
    res.end(head ? undefined : body);
  };
  if (req.method !== "GET" && !head) {
    send(405, "text/plain; charset=utf-8", "only GET and HEAD\n", { Allow: "GET, HEAD" });
    return;
  }
  const route = routes.get(path);
  if (route === undefined) {
    const list = [...routes.keys()].sort().join("\n");
    send(
      path === "/" ? 200 : 404,
      "text/plain; charset=utf-8",
      `${path === "/" ? "" : `no route ${path}; `}routes:\n${list}\n`,
    );
    return;
  }
  try {
    const reply = await route();
    send(reply.status ?? 200, reply.contentType, reply.body);
  } catch (err) {
    const e = asError(err);
    onError(path, e);
    if (!res.headersSent) send(500, "text/plain; charset=utf-8", `${e.name}: ${e.message}\n`);
  }
}

/** `/health`: `ok` while `healthy()`, else 503 with `status()`. */
export function healthRoute(healthy: () => boolean, status: () => string): HttpRoute {
  return () =>
    healthy()
      ? { contentType: "text/plain; charset=utf-8", body: "ok\n" }
      : { status: 503, contentType: "text/plain; charset=utf-8", body: `${status()}\n` };
}

/** `/metrics`: what `registry` (prom-client's) collects, in Prometheus' text format. */
export function metricsRoute(registry: {
  readonly contentType: string;
  metrics(): Promise<string>;
}): HttpRoute {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

/** A JSON reply. */
export function jsonReply(value: unknown): HttpReply {
  return { contentType: "application/json", body: `${JSON.stringify(value)}\n` };
}
