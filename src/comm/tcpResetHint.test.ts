/**
 * The hint a reset connection's error carries (“after a message of N was sent to it:
 * larger than the peer's --max-message-bytes?”) is given only where a size limit can be
 * why: not to a peer that said which sizes it takes (a client killed while it gathered
 * an answer it had said it could take is gone, not over a limit).
 */

import { type AddressInfo, createServer, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import type { Comm } from "./comm.ts";
import { connect } from "./connect.ts";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

const MIB = 2 ** 20;

/** A comm to a peer that resets the connection once the first bytes of a message arrive (killed mid-transfer). */
async function dyingPeer(): Promise<Comm> {
  const server = createServer((socket: Socket) => {
    socket.once("data", () => socket.resetAndDestroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const comm = await connect(`tcp://127.0.0.1:${port}`);
  cleanup.push(() => {
    comm.abort();
    server.close();
  });
  return comm;
}

/** The errors of `comm`'s close and of the send `sent`, once the peer reset the connection. */
async function resetErrors(comm: Comm, sent: Promise<unknown>): Promise<string[]> {
  const { error } = await comm.closed;
  const errors = [error, await sent].filter((e): e is Error => e instanceof Error);
  expect(errors.length).toBeGreaterThan(0);
  for (const e of errors) expect(e.message).toMatch(/ECONNRESET|EPIPE/);
  return errors.map((e) => e.message);
}

it("a peer whose limit is not known, reset after a large message: the hint names the message", async () => {
  const comm = await dyingPeer();
  const sent = comm.send(new Uint8Array(4 * MIB)).catch((e: unknown) => e);
  for (const message of await resetErrors(comm, sent)) {
    expect(message).toMatch(/ \(after a message of 4\.00 MiB was sent to it: .*\)$/);
  }
});

it("an answer sent within the limit its requester said, the requester gone mid-answer: no hint", async () => {
  const comm = await dyingPeer();
  const own = comm.maxMessageBytes as number;
  // As serveRpc sends the answer to a get_data that said the requester's limit (here its
  // default, the same as this end's): a reset then is the requester gone, not its limit.
  const limit = { maxMessageBytes: own, whose: "the maxMessageBytes of client-1" };
  const sent = comm.send(new Uint8Array(4 * MIB), limit).catch((e: unknown) => e);
  for (const message of await resetErrors(comm, sent)) {
    expect(message).not.toContain("after a message of");
  }
});

it("a peer that told its limit (limitSendsTo), even one not below this end's, reset after a large message: no hint", async () => {
  for (const told of ["equal", "above"] as const) {
    const comm = await dyingPeer();
    const own = comm.maxMessageBytes as number;
    comm.limitSendsTo?.(told === "equal" ? own : own * 2, "the maxMessageBytes of client-1");
    const sent = comm.send(new Uint8Array(4 * MIB)).catch((e: unknown) => e);
    for (const message of await resetErrors(comm, sent)) {
      expect(message, told).not.toContain("after a message of");
    }
  }
});
