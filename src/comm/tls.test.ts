import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseHostPort } from "../util/address.ts";
import type { Comm } from "./comm.ts";
import { connect, listen } from "./connect.ts";
import { ConnectError, isNetworkError } from "./errors.ts";
import { commPair, iterationError } from "./testPair.ts";
import { strangerTls, TEST_TLS_FILES, testTls } from "./testTls.ts";
import { loadTlsCredentials, tlsCredentialsProblem } from "./tls.ts";
import { unauthorizedPeerReason } from "./tlsRefusals.ts";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

/** A tls:// listener with the test cluster's credentials; the comms it accepted, the peers it refused. */
async function tlsListener() {
  const accepted: Comm[] = [];
  const refused: { peer: string; reason: string }[] = [];
  const listener = await listen("tls://127.0.0.1:0", (c) => accepted.push(c), {
    tls: testTls(),
    onRefusedPeer: (peer, reason) => refused.push({ peer, reason }),
  });
  cleanup.push(async () => {
    for (const c of accepted) c.abort();
    await listener.close();
  });
  return { listener, accepted, refused };
}

/** Wait until `list` has `n` entries, at most 5 s. */
async function untilLength(list: readonly unknown[], n: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (list.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}

describe("tls transport", () => {
  it("refuses a peer whose certificate another CA signed, both ways", async () => {
    const { listener, accepted } = await tlsListener();
    // A stranger dialling in, trusting the cluster's CA: the server refuses its certificate.
    // With TLS 1.3 the client's side of the handshake ends before the server's verdict,
    // which then resets the connection (an orderly close says nothing of it), saying why.
    const intruder = { ...strangerTls(), ca: testTls().ca };
    const comm = await connect(listener.address, { tls: intruder, timeoutMs: 5000 });
    const closed = await comm.closed;
    expect(closed.error?.message).toMatch(
      /^connection to tls:\/\/127\.0\.0\.1:\d+ closed before anything arrived: the peer may have refused this process.s TLS certificate/,
    );
    expect(isNetworkError(closed.error)).toBe(true);
    // One that does not trust the cluster's CA refuses the server's certificate.
    const err = await connect(listener.address, { tls: strangerTls(), timeoutMs: 5000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as Error).message).toMatch(
      /^connection to tls:\/\/127\.0\.0\.1:\d+ failed: the TLS handshake failed: /,
    );
    expect(isNetworkError(err)).toBe(true);
    // A stranger listening: the cluster's client refuses the server's certificate.
    const stranger = await listen("tls://127.0.0.1:0", () => {}, { tls: strangerTls() });
    cleanup.push(() => stranger.close());
    const err2 = await connect(stranger.address, { tls: testTls(), timeoutMs: 5000 }).catch(
      (e: unknown) => e,
    );
    expect(err2).toBeInstanceOf(ConnectError);
    expect((err2 as Error).message).toMatch(/TLS handshake failed/);
    expect(accepted).toEqual([]);
  });

  it("an orderly close by a listener that sent nothing ends the dialler's comm orderly, as on tcp://", async () => {
    const listener = await listen("tls://127.0.0.1:0", (c) => void c.close(), { tls: testTls() });
    cleanup.push(() => listener.close());
    const comm = await connect(listener.address, { tls: testTls(), timeoutMs: 5000 });
    expect(await iterationError(comm)).toBeNull();
    expect((await comm.closed).error).toBeNull();
  });

  it("a plain tcp:// client gets nothing through; the listener goes on", async () => {
    const { listener, accepted } = await tlsListener();
    const plain = await connect(listener.address.replace("tls://", "tcp://"), { timeoutMs: 5000 });
    await plain.send({ hello: "in clear" }).catch(() => {});
    const closed = await plain.closed;
    expect(plain.isClosed).toBe(true);
    expect(closed).toBeDefined();
    expect(accepted).toEqual([]);
    // A member still gets in.
    const member = await connect(listener.address, { tls: testTls(), timeoutMs: 5000 });
    cleanup.push(() => member.abort());
    await member.send("hi");
    while (accepted.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(await accepted[0].recv()).toBe("hi");
  });

  it("tells the listener's process why it refused each peer, and not of a port check", async () => {
    const { listener, accepted, refused } = await tlsListener();
    const { port } = parseHostPort(listener.address.slice("tls://".length));
    // A port check (the scheduler's of a worker's address): connected, closed, no word.
    const probe = netConnect(port, "127.0.0.1");
    await new Promise((resolve) => probe.once("connect", resolve));
    probe.destroy();
    // A certificate another CA signed.
    const intruder = await connect(listener.address, {
      tls: { ...strangerTls(), ca: testTls().ca },
      timeoutMs: 5000,
    });
    await intruder.closed;
    await untilLength(refused, 1);
    // No certificate at all.
    const anonymous = tlsConnect({
      port,
      host: "127.0.0.1",
      ca: testTls().ca,
      checkServerIdentity: () => undefined,
    });
    anonymous.on("error", () => {});
    await new Promise((resolve) => anonymous.once("close", resolve));
    await untilLength(refused, 2);
    // Not TLS: weft's framing in the clear, and HTTP.
    const plain = await connect(listener.address.replace("tls://", "tcp://"), { timeoutMs: 5000 });
    await plain.send({ hello: "in clear" }).catch(() => {});
    await plain.closed;
    await untilLength(refused, 3);
    const http = netConnect(port, "127.0.0.1", () => http.write("GET / HTTP/1.0\r\n\r\n"));
    http.on("error", () => {});
    await new Promise((resolve) => http.once("close", resolve));
    await untilLength(refused, 4);
    expect(refused.map((r) => r.reason)).toEqual([
      "its TLS certificate is not signed by this cluster's CA (DEPTH_ZERO_SELF_SIGNED_CERT): give it a certificate of the CA in --tls-ca-file",
      "it showed no TLS certificate: give it --tls-cert and --tls-key (and --tls-ca-file)",
      "it does not speak TLS: is it given a tcp:// address for this tls:// one?",
      "it sent an HTTP request, not a TLS handshake",
    ]);
    for (const r of refused) expect(r.peer).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    expect(accepted).toEqual([]);
    // A member still gets in, and is no refusal.
    const member = await connect(listener.address, { tls: testTls(), timeoutMs: 5000 });
    cleanup.push(() => member.abort());
    await member.send("hi");
    await untilLength(accepted, 1);
    expect(await accepted[0].recv()).toBe("hi");
    expect(refused).toHaveLength(4);
  });

  it("an onRefusedPeer that throws or rejects is a process warning; the listener goes on", async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((w) => {
      warned.push(String(w));
    });
    cleanup.push(() => spy.mockRestore());
    let calls = 0;
    const accepted: Comm[] = [];
    const listener = await listen("tls://127.0.0.1:0", (c) => accepted.push(c), {
      tls: testTls(),
      onRefusedPeer: (_peer, reason) => {
        // Before, the throw (from the socket's event) was the process's uncaught exception.
        if (++calls === 1) throw new RangeError(`cannot log: ${reason}`);
        return Promise.reject(new RangeError("cannot log later"));
      },
    });
    cleanup.push(async () => {
      for (const c of accepted) c.abort();
      await listener.close();
    });
    // A certificate another CA signed (refused once the handshake is done) ...
    const intruder = await connect(listener.address, {
      tls: { ...strangerTls(), ca: testTls().ca },
      timeoutMs: 5000,
    });
    await intruder.closed;
    await untilLength(warned, 1);
    // ... and a peer not speaking TLS (refused in the handshake).
    const plain = await connect(listener.address.replace("tls://", "tcp://"), { timeoutMs: 5000 });
    await plain.send({ hello: "in clear" }).catch(() => {});
    await plain.closed;
    await untilLength(warned, 2);
    expect(warned).toEqual([
      expect.stringMatching(
        /^listen onRefusedPeer failed: RangeError: cannot log: its TLS certificate is not signed/,
      ),
      "listen onRefusedPeer failed: RangeError: cannot log later",
    ]);
    const member = await connect(listener.address, { tls: testTls(), timeoutMs: 5000 });
    cleanup.push(() => member.abort());
    await member.send("hi");
    await untilLength(accepted, 1);
    expect(await accepted[0].recv()).toBe("hi");
  });

  it("names the certificate problems an operator meets", () => {
    expect(unauthorizedPeerReason("CERT_HAS_EXPIRED")).toBe(
      "its TLS certificate has expired (CERT_HAS_EXPIRED)",
    );
    expect(unauthorizedPeerReason("CERT_NOT_YET_VALID")).toMatch(
      /^its TLS certificate is not valid yet/,
    );
    expect(unauthorizedPeerReason("SOMETHING_ELSE")).toBe(
      "its TLS certificate was refused (SOMETHING_ELSE)",
    );
  });

  it("tls:// dialling a tcp:// listener: both ends say the other speaks TLS, or does not", async () => {
    const accepted: Comm[] = [];
    const plain = await listen("tcp://127.0.0.1:0", (c) => accepted.push(c));
    cleanup.push(() => plain.close());
    const err = await connect(plain.address.replace("tcp://", "tls://"), {
      tls: testTls(),
      timeoutMs: 5000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as Error).message).toMatch(
      /^connection to tls:\/\/127\.0\.0\.1:\d+ failed: the peer closed it during the TLS handshake: does it listen on tcp:\/\/ rather than tls:\/\/, or refuse this process's certificate/,
    );
    await untilLength(accepted, 1);
    const closed = await accepted[0].closed;
    expect(closed.error?.message).toMatch(
      /it reads as the start of a TLS handshake: is the peer given a tls:\/\/ address for this tcp:\/\/ one\?$/,
    );
  });

  it("carries a message larger than a frame whole, with bytes out of band", async () => {
    const p = await commPair("tls://127.0.0.1:0", { tls: testTls(), maxFrameBytes: 1000 });
    cleanup.push(async () => {
      p.client.abort();
      p.server.abort();
      await p.listener.close();
    });
    const big = new Uint8Array(100_000).map((_, i) => i % 251);
    await p.client.send({ big, text: "x".repeat(5000) });
    const got = (await p.server.recv()) as { big: Uint8Array; text: string };
    expect(Buffer.from(got.big).equals(Buffer.from(big))).toBe(true);
    expect(got.text).toHaveLength(5000);
    expect(p.server.peerAddress).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
  });

  it("tls:// without credentials says what is missing", async () => {
    await expect(listen("tls://127.0.0.1:0", () => {})).rejects.toThrow(
      /tls:\/\/ needs TLS credentials \(the tls option: ca, cert, key; on the command line --tls-ca-file, --tls-cert, --tls-key\)/,
    );
    await expect(async () => connect("tls://127.0.0.1:1")).rejects.toThrow(
      /tls:\/\/ needs TLS credentials/,
    );
  });

  it("loading credentials refuses what is not the three paths, rather than read a file named undefined", () => {
    expect(() => loadTlsCredentials(null as never)).toThrow(
      new TypeError("loadTlsCredentials: expected { caFile, certFile, keyFile }, got null"),
    );
    expect(() => loadTlsCredentials({ ...TEST_TLS_FILES, ca: "ca.pem" } as never)).toThrow(
      'loadTlsCredentials: unknown option "ca" (the options are caFile, certFile, keyFile)',
    );
    const { caFile: _, ...noCa } = TEST_TLS_FILES;
    expect(() => loadTlsCredentials(noCa as never)).toThrow(
      new TypeError("loadTlsCredentials: caFile must be the path of a PEM file, got undefined"),
    );
  });

  it("loading credentials names the file that cannot be read or holds no PEM", () => {
    expect(loadTlsCredentials(TEST_TLS_FILES).ca.toString()).toContain("BEGIN CERTIFICATE");
    expect(() =>
      loadTlsCredentials({ ...TEST_TLS_FILES, keyFile: "/nonexistent/key.pem" }),
    ).toThrow(/^cannot read the TLS key \/nonexistent\/key\.pem: ENOENT/);
    const dir = mkdtempSync(join(tmpdir(), "weft-tls-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const junk = join(dir, "junk.pem");
    writeFileSync(junk, "not a certificate");
    expect(() => loadTlsCredentials({ ...TEST_TLS_FILES, caFile: junk })).toThrow(
      `the TLS CA file ${junk} holds no PEM block (-----BEGIN …)`,
    );
    // A link to /dev/zero was read forever, a FIFO until a writer came: refused unread.
    const zero = join(dir, "zero.pem");
    symlinkSync("/dev/zero", zero);
    const fifo = join(dir, "fifo.pem");
    execFileSync("mkfifo", [fifo]);
    expect(() => loadTlsCredentials({ ...TEST_TLS_FILES, certFile: zero })).toThrow(
      new Error(
        `cannot read the TLS certificate ${zero}: it is a character device, not a regular file`,
      ),
    );
    expect(() => loadTlsCredentials({ ...TEST_TLS_FILES, caFile: fifo })).toThrow(
      new Error(
        `cannot read the TLS CA file ${fifo}: it is a FIFO (named pipe), not a regular file`,
      ),
    );
    // A key where the CA's certificate belongs: OpenSSL takes it, then refuses every peer.
    expect(() => loadTlsCredentials({ ...TEST_TLS_FILES, caFile: TEST_TLS_FILES.keyFile })).toThrow(
      `the TLS CA file ${TEST_TLS_FILES.keyFile} holds no certificate (a -----BEGIN CERTIFICATE----- block): is it a key?`,
    );
    expect(tlsCredentialsProblem({ ...testTls(), ca: testTls().key })).toBe(
      "tls: the TLS credentials cannot be used: the CA holds no certificate (a -----BEGIN CERTIFICATE----- block): is it a key?",
    );
    // A key that is not the certificate's.
    const mismatched = {
      ...TEST_TLS_FILES,
      keyFile: TEST_TLS_FILES.keyFile.replace("key.pem", "other-key.pem"),
    };
    expect(() => loadTlsCredentials(mismatched)).toThrow(
      /^the TLS credentials cannot be used: .*key values mismatch \(the certificate and the key must be a pair, and all three PEM\)$/,
    );
    expect(tlsCredentialsProblem({ ...testTls(), key: strangerTls().key })).toMatch(
      /^tls: the TLS credentials cannot be used: /,
    );
    expect(tlsCredentialsProblem({ ca: "x", cert: 1, key: "y" })).toBe(
      "tls.cert must be PEM text (a string or a Buffer)",
    );
    expect(tlsCredentialsProblem(testTls())).toBeNull();
  });
});
