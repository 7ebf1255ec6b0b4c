import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import type { Comm } from "./comm.ts";
import { listen, setDialer } from "./connect.ts";
import {
  connectWaiting,
  LAST_TRY_FLOOR_MS,
  tryTimeoutWithin,
  type WaitedFailure,
} from "./connectWaiting.ts";
import { ConnectError } from "./errors.ts";
import { connectTcp } from "./tcp.ts";
import { muteServer } from "./testMuteServer.ts";
import { strangerTls, testTls } from "./testTls.ts";
import { answerUnresolvedAtOnce } from "./testUnresolvedHost.ts";

describe("connectWaiting", () => {
  it("waits for a server that starts listening after the first refusal, saying so once", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    let refusals = 0;
    const accepted: Comm[] = [];
    const dialling = connectWaiting(address, {
      timeoutMs: 10_000,
      onFirstFailure: () => refusals++,
    });
    await sleep(400); // refused a few times by now
    const listener = await listen(address, (c) => accepted.push(c));
    try {
      const comm = await dialling;
      expect(refusals).toBe(1);
      await comm.close();
    } finally {
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("fails with the refusal once the time is over, saying how long it tried", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const started = Date.now();
    const err = await connectWaiting(address, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect((err as Error).message).toMatch(/still refused after 300 ms$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("a first failure after the wait is over is the connect's own, not said to be waited past", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    let told = 0;
    const err = await connectWaiting(address, {
      timeoutMs: 1_000,
      waitMs: 0,
      onFirstFailure: () => told++,
    }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect((err as Error).message).not.toMatch(/still refused/);
    expect(told).toBe(0);
  });

  it("a first try made only after a wait was over says so, rather than read as given no wait", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    // A worker's start whose steps before the connect took its whole death timeout.
    const err = await connectWaiting(address, {
      timeoutMs: 1_000,
      waitMs: 300,
      startedAt: Date.now() - 1_000,
    }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect((err as Error).message).toMatch(
      /refused \(ECONNREFUSED\): refused at its first try, made only after the 300 ms wait was over$/,
    );
  });

  it("a first try begun in time that took the whole wait is not said to have come after it", async () => {
    const mute = await muteServer();
    try {
      // The try's timeout is the wait: a millisecond between the start and the try,
      // as a loaded host gives, made it 2999 ms, and its failure at the deadline was
      // said to be a first try "made only after the 3000 ms wait was over".
      const err = await connectWaiting(`tls://${mute.hostPort}`, {
        timeoutMs: 300,
        waitMs: 300,
        startedAt: Date.now() - 5,
        tls: testTls(),
      }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/timed out/);
      expect((err as Error).message).not.toMatch(/first try/);
    } finally {
      await mute.close();
    }
  });

  it("stops at once when its caller is closing", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const err = await connectWaiting(address, { timeoutMs: 60_000, stopped: () => true }).catch(
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
  });

  it("waits past a host name that does not resolve yet, as Dask's connect retries any OSError, saying why", async () => {
    const live = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const accepted: Comm[] = [];
    const listener = await listen(live, (c) => accepted.push(c));
    const failures: WaitedFailure[] = [];
    let asked = 0;
    try {
      // A Kubernetes service or a batch job's host: its name resolves once it is up.
      const comm = await connectWaiting(
        async () => (++asked <= 2 ? "tcp://no-such-host.invalid:1" : live),
        { timeoutMs: 10_000, onFirstFailure: (f) => failures.push(f) },
      );
      expect(comm.peerAddress).toBe(live);
      expect(failures).toEqual([
        {
          address: "tcp://no-such-host.invalid:1",
          reason: expect.stringMatching(
            /^getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
          ),
          refused: false,
          waitedMs: expect.any(Number),
        },
      ]);
      await comm.close();
    } finally {
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("fails at the end of the wait for a host name that never resolves, naming the reason", async ({
    onTestFinished,
  }) => {
    // The resolver's own error, but at once: its timing (over 300 ms on a loaded host) is
    // not what is tested.
    onTestFinished(await answerUnresolvedAtOnce("no-such-host.invalid"));
    const started = Date.now();
    const err = await connectWaiting("tcp://no-such-host.invalid:1", { timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as Error).message).toMatch(
      /^connection to tcp:\/\/no-such-host\.invalid:1 failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid .*: still failing after 300 ms$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("waits past a network not reachable, a try timed out and a reset, telling each reason", async () => {
    const live = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const accepted: Comm[] = [];
    const listener = await listen(live, (c) => accepted.push(c));
    const failures: ConnectError[] = [
      new ConnectError(`connection to ${live} failed`, live, "EHOSTUNREACH", {
        cause: new Error("connect EHOSTUNREACH 10.0.0.1:8786"),
      }),
      new ConnectError(`timed out connecting to ${live} after 100 ms`, live, "ETIMEDOUT"),
      new ConnectError(`connection to ${live} failed`, live, "ECONNRESET", {
        cause: new Error("socket hang up"),
      }),
    ];
    const reasons: string[] = [];
    setDialer((address, o) => {
      const failure = failures.shift();
      return failure === undefined ? connectTcp(address, o) : Promise.reject(failure);
    });
    try {
      const comm = await connectWaiting(live, {
        timeoutMs: 100,
        waitMs: 10_000,
        stillFailingEveryMs: 0,
        onFirstFailure: (f) => reasons.push(f.reason),
        onStillFailing: (f) => reasons.push(f.reason),
      });
      expect(comm.peerAddress).toBe(live);
      expect(reasons).toEqual([
        "connect EHOSTUNREACH 10.0.0.1:8786",
        "timed out after 100 ms",
        "socket hang up (ECONNRESET)",
      ]);
      await comm.close();
    } finally {
      setDialer(null);
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("fails at once on TLS failures, which do not mend: a tcp:// listener, a certificate refused", async () => {
    const accepted: Comm[] = [];
    const plain = await listen("tcp://127.0.0.1:0", (c) => accepted.push(c));
    const stranger = await listen("tls://127.0.0.1:0", () => {}, { tls: strangerTls() });
    try {
      const waiting = { timeoutMs: 5_000, waitMs: 60_000, tls: testTls() };
      const started = Date.now();
      await expect(
        connectWaiting(plain.address.replace("tcp://", "tls://"), waiting),
      ).rejects.toThrow(/the peer closed it during the TLS handshake/);
      await expect(connectWaiting(stranger.address, waiting)).rejects.toThrow(
        /the TLS handshake failed/,
      );
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      for (const c of accepted) c.abort();
      await plain.close();
      await stranger.close();
    }
  });

  it("asks an address function before each try: a refused address gives way to the one it says next", async () => {
    const gone = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const live = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const accepted: Comm[] = [];
    const listener = await listen(live, (c) => accepted.push(c));
    const asked: string[] = [];
    const refused: string[] = [];
    try {
      const comm = await connectWaiting(
        async () => {
          // The first answer is a stale one (a scheduler gone); then the file was written again.
          const next = asked.length === 0 ? gone : live;
          asked.push(next);
          return next;
        },
        { timeoutMs: 10_000, onFirstFailure: (f) => refused.push(f.address) },
      );
      expect(comm.peerAddress).toBe(live);
      expect(asked).toEqual([gone, live]);
      expect(refused).toEqual([gone]);
      await comm.close();
    } finally {
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("waits without end with waitMs Infinity, saying every stillFailingEveryMs that it still waits, until stopped", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const reports: WaitedFailure[] = [];
    let stop = false;
    const err = await connectWaiting(address, {
      timeoutMs: 100, // each try's: not the wait's
      waitMs: Number.POSITIVE_INFINITY,
      stillFailingEveryMs: 300,
      onStillFailing: (f) => {
        reports.push(f);
        // Stopped at the second word, not after a fixed sleep: tries made late on a
        // loaded host moved the words, and the try the stop was seen at, past any sleep.
        if (reports.length === 2) stop = true;
      },
      stopped: () => stop,
    }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatchObject({ address, reason: "refused", refused: true });
    // Each word stillFailingEveryMs after the one before, the first after the wait's start.
    expect(reports[0].waitedMs).toBeGreaterThanOrEqual(300);
    expect(reports[1].waitedMs - reports[0].waitedMs).toBeGreaterThanOrEqual(300);
    // Stopped, not ended by a wait of some length: the time said is the time tried.
    const said = /: still refused after (\d+) ms$/.exec((err as Error).message);
    expect(Number(said?.[1])).toBeGreaterThanOrEqual(reports[1].waitedMs);
  });

  it("tells every stillFailingEveryMs of a try that goes on without an answer, where the first word came at its timeout", async () => {
    const address = "tcp://192.0.2.1:8786"; // dialled by the stand-in below only
    const told: string[] = [];
    const pendingMs: number[] = [];
    // A try that hangs (dropped packets) until it was told pending three times, then
    // times out; then one refused. Ended by the test's marks, not by timers racing
    // the reports' (a report late on a loaded host came after a fixed try's end).
    let timedOut = () => {};
    const hung = new Promise<void>((resolve) => {
      timedOut = resolve;
    });
    let stop = false;
    let tries = 0;
    setDialer(async () => {
      if (++tries === 1) {
        await hung;
        throw new ConnectError(`timed out connecting to ${address}`, address, "ETIMEDOUT");
      }
      throw new ConnectError(`connection to ${address} refused`, address, "ECONNREFUSED");
    });
    try {
      const err = await connectWaiting(address, {
        timeoutMs: 1_000,
        waitMs: 60_000,
        stillFailingEveryMs: 300,
        onTryPending: (p) => {
          told.push(`pending ${p.address}`);
          pendingMs.push(p.pendingMs);
          if (pendingMs.length === 3) timedOut();
        },
        onFirstFailure: (f) => {
          told.push(`failed ${f.reason}`);
          stop = true;
        },
        stopped: () => stop,
      }).catch((e: unknown) => e);
      expect((err as ConnectError).code).toBe("ECONNREFUSED");
      expect(told).toEqual([
        `pending ${address}`,
        `pending ${address}`,
        `pending ${address}`,
        "failed timed out after 1000 ms",
      ]);
      // Each told stillFailingEveryMs after the one before, from the try's start.
      expect(pendingMs[0]).toBeGreaterThanOrEqual(299);
      for (const i of [1, 2]) {
        expect(pendingMs[i] - pendingMs[i - 1]).toBeGreaterThanOrEqual(299);
      }
    } finally {
      setDialer(null);
    }
  });

  it("tells of no try pending once its caller is closing", async () => {
    const address = "tcp://192.0.2.1:8786"; // dialled by the stand-in below only
    const told: number[] = [];
    let stop = false;
    setDialer(async (_, o) => {
      await sleep(o.timeoutMs as number);
      throw new ConnectError(`timed out connecting to ${address}`, address, "ETIMEDOUT");
    });
    try {
      const dialling = connectWaiting(address, {
        timeoutMs: 800,
        stillFailingEveryMs: 200,
        onTryPending: (p) => told.push(p.pendingMs),
        stopped: () => stop,
      }).catch((e: unknown) => e);
      await sleep(300);
      stop = true;
      expect(((await dialling) as ConnectError).code).toBe("ETIMEDOUT");
      expect(told).toHaveLength(1);
    } finally {
      setDialer(null);
    }
  });

  it("bounds each try by what is left of the wait, down to a floor: a try does not overrun waitMs by its timeoutMs", async () => {
    const address = "tcp://192.0.2.1:8786"; // dialled by the stand-in below only
    const tries: { at: number; timeoutMs: number }[] = [];
    // Only the clock the wait reads is faked, moved on by the stand-in by the time each
    // try takes: a try refused 50 ms before the wait's end in real time came after it
    // on a loaded host, and the wait ended before a second try.
    vi.useFakeTimers({ toFake: ["Date"] });
    const started = Date.now();
    // A first try refused late, then tries that hang (dropped packets) until their timeout.
    setDialer(async (_, o) => {
      const timeoutMs = o.timeoutMs as number;
      tries.push({ at: Date.now() - started, timeoutMs });
      if (tries.length === 1) {
        vi.setSystemTime(Date.now() + 450);
        throw new ConnectError(`connection to ${address} refused`, address, "ECONNREFUSED");
      }
      vi.setSystemTime(Date.now() + timeoutMs);
      throw new ConnectError(
        `timed out connecting to ${address} after ${timeoutMs} ms`,
        address,
        "ETIMEDOUT",
      );
    });
    try {
      const err = await connectWaiting(address, { timeoutMs: 30_000, waitMs: 500 }).catch(
        (e: unknown) => e,
      );
      const took = Date.now() - started;
      expect((err as ConnectError).code).toBe("ETIMEDOUT");
      expect((err as Error).message).toMatch(/still failing after 500 ms$/);
      // The first try given the whole wait; the second, begun with 50 ms left, the floor.
      expect(tries).toEqual([
        { at: 0, timeoutMs: 500 },
        { at: 450, timeoutMs: LAST_TRY_FLOOR_MS },
      ]);
      // Without the bound: the second try alone would take 30 s.
      expect(took).toBe(450 + LAST_TRY_FLOOR_MS);
    } finally {
      vi.useRealTimers();
      setDialer(null);
    }
    expect(tryTimeoutWithin(30_000, Number.POSITIVE_INFINITY)).toBe(30_000);
    expect(tryTimeoutWithin(30_000, 2_000)).toBe(2_000);
    expect(tryTimeoutWithin(30_000, -5)).toBe(LAST_TRY_FLOOR_MS);
    expect(tryTimeoutWithin(100, -5)).toBe(100);
  });

  it("ends at once when its signal is aborted, the try in flight too: a TLS handshake that never completes, or the pause between refusals", async () => {
    const mute = await muteServer();
    try {
      const stop = new AbortController();
      const dialling = connectWaiting(`tls://${mute.hostPort}`, {
        timeoutMs: 30_000,
        tls: testTls(),
        signal: stop.signal,
      }).catch((e: unknown) => e);
      await mute.acceptedAtLeast(1);
      stop.abort(new Error("closing"));
      const ended = await Promise.race([dialling, sleep(2_000, "still dialling")]);
      // The caller's reason, not a failure to connect blamed on the server.
      expect((ended as Error).message).toBe("closing");
      await mute.endedAtLeast(1);
    } finally {
      await mute.close();
    }
    // Refused, until the pause between tries has grown to its full second: aborted then.
    const stop = new AbortController();
    let tries = 0;
    let aborted = 0;
    setDialer(async (address, o) => {
      o.signal?.throwIfAborted(); // as connect does
      if (++tries === 6) {
        setTimeout(() => {
          aborted = Date.now();
          stop.abort(new Error("closing"));
        }, 20);
      }
      throw new ConnectError(`connection to ${address} refused`, address, "ECONNREFUSED");
    });
    try {
      const err = await connectWaiting("tcp://192.0.2.1:8786", {
        timeoutMs: 60_000,
        signal: stop.signal,
      }).catch((e: unknown) => e);
      expect((err as Error).message).toBe("closing");
      expect(tries).toBe(6);
      // Before, the pause ran out first: a second.
      expect(Date.now() - aborted).toBeLessThan(500);
    } finally {
      setDialer(null);
    }
  });

  it("fails at once when the address function fails", async () => {
    await expect(
      connectWaiting(() => Promise.reject(new Error("no scheduler file")), { timeoutMs: 60_000 }),
    ).rejects.toThrow("no scheduler file");
  });
});
