/**
 * Test helper: a server that accepts connections and never says a byte, the
 * deterministic stand-in for a peer whose connect hangs. Dialled over `tls://`
 * its TLS handshake never completes, so a connect try waits for its timeout
 * (30 s by default), as one to an address whose packets are dropped does.
 */

import { createServer, type Socket } from "node:net";

/** A {@link muteServer}: where it listens, and what it saw. */
export interface MuteServer {
  /** `host:port` it listens at (prefix it with `tcp://` or `tls://`). */
  readonly hostPort: string;
  /** How many connections it accepted so far. */
  readonly accepted: number;
  /** How many of them the dialling side has closed (or reset) so far. */
  readonly ended: number;
  /** Resolves once `n` connections have been accepted. */
  acceptedAtLeast(n: number): Promise<void>;
  /** Resolves once `n` of them have been closed by the dialling side. */
  endedAtLeast(n: number): Promise<void>;
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

/** Listen on 127.0.0.1, on any free port, accepting and never answering. */
export async function muteServer(): Promise<MuteServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let ended = 0;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    // Read and dropped: unread bytes (a TLS ClientHello) would hold back the end of the
    // stream, and the dialling side's close would go unseen.
    socket.resume();
    // A reset as well as a close: either is the dialling side giving up.
    socket.on("error", () => {});
    socket.on("close", () => {
      ended++;
      sockets.delete(socket);
      wake();
    });
    wake();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = () => (done() ? resolve() : waiters.push(check));
      check();
    });
  return {
    hostPort: `127.0.0.1:${address.port}`,
    get accepted() {
      return accepted;
    },
    get ended() {
      return ended;
    },
    acceptedAtLeast: (n) => until(() => accepted >= n),
    endedAtLeast: (n) => until(() => ended >= n),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
