import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import { STILL_FAILING_EVERY_MS } from "../comm/connectWaiting.ts";
import { muteServer } from "../comm/testMuteServer.ts";
import { testTls } from "../comm/testTls.ts";
import { answerUnresolvedAtOnce } from "../comm/testUnresolvedHost.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Client } from "./client.ts";
import { eventually } from "./testCluster.ts";

describe("Client.connect to a scheduler not listening yet", () => {
  it("waits for it (started together with the client), within timeoutMs, as Dask's client", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line).msg) },
    );
    const connecting = Client.connect(address, { timeoutMs: 10_000, logger });
    // Started once refused, not after a fixed sleep: a try still to come then would connect.
    const waitLine = "the scheduler refuses connections (not started yet?): trying again";
    await eventually(() => lines.includes(waitLine), 5_000, "the first refusal");
    const scheduler = await Scheduler.start({ listen: address, logger: pino({ level: "silent" }) });
    try {
      const client = await connecting;
      await client.setMetadata("a", 1); // a round trip: the scheduler answers it
      expect(await client.getMetadata("a")).toBe(1);
      await client.close();
      expect(lines.filter((l) => l === waitLine)).toHaveLength(1);
    } finally {
      await scheduler.close();
    }
  });

  it("fails once timeoutMs is over, saying how long it was refused", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    await expect(
      Client.connect(address, { timeoutMs: 300, logger: pino({ level: "silent" }) }),
    ).rejects.toThrow(/still refused after 300 ms/);
  });

  it("tells onWaiting once, at once, that it waits, why and for how long", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const notices: unknown[] = [];
    const connecting = Client.connect(address, {
      timeoutMs: 10_000,
      logger: pino({ level: "silent" }),
      onWaiting: (notice) => notices.push(notice),
    });
    // At the first refusal; then a few more before the scheduler starts, told no more.
    await eventually(() => notices.length > 0, 5_000, "the first notice");
    await sleep(200);
    expect(notices).toEqual([{ address, reason: "refused", waitMs: 10_000 }]);
    const scheduler = await Scheduler.start({ listen: address, logger: pino({ level: "silent" }) });
    try {
      const client = await connecting;
      await client.close();
      expect(notices).toHaveLength(1);
    } finally {
      await scheduler.close();
    }
  });

  it("waits for a scheduler whose host name does not resolve (yet), saying why; its onWaiting throwing is logged", async ({
    onTestFinished,
  }) => {
    // The resolver's own error, but at once: its timing (over 400 ms on a loaded host)
    // is not what is tested, and a first lookup outlasting the wait fails otherwise.
    onTestFinished(await answerUnresolvedAtOnce("no-such-host.invalid"));
    const lines: { msg: string; reason?: string }[] = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const started = Date.now();
    await expect(
      Client.connect("tcp://no-such-host.invalid:8786", {
        timeoutMs: 400,
        logger,
        onWaiting: () => {
          throw new Error("a broken callback");
        },
      }),
    ).rejects.toThrow(
      /getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid.*: still failing after 400 ms$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^the scheduler cannot be reached \(getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\): trying again$/,
      ),
      "Client option onWaiting threw",
    ]);
  });

  it("the rejection of an async onWaiting is logged as a throw is", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line).msg) },
    );
    // Before, the rejection was unhandled: the process ended.
    await expect(
      Client.connect(address, {
        timeoutMs: 300,
        logger,
        onWaiting: async () => Promise.reject(new Error("a broken async callback")),
      }),
    ).rejects.toThrow(/still refused after 300 ms/);
    expect(lines).toContain("Client option onWaiting threw");
  });

  it("logs every 10 s that a try has had no answer (a TLS handshake never made), as a worker does, where it said nothing until the try's timeout", async () => {
    const mute = await muteServer();
    const lines: { msg: string; pendingMs?: number }[] = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const address = `tls://${mute.hostPort}`;
    // The 10 s run on fake timers: the TLS handshake waited on is real, and never comes.
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"],
    });
    try {
      const connecting = Client.connect(address, {
        timeoutMs: STILL_FAILING_EVERY_MS + 2_000,
        logger,
        tls: testTls(),
      }).catch((e: unknown) => e);
      await mute.acceptedAtLeast(1);
      await vi.advanceTimersByTimeAsync(STILL_FAILING_EVERY_MS + 1_000);
      expect(lines.map((l) => l.msg)).toEqual([
        `still waiting for the scheduler at ${address}: a connection to it has had no answer for 10 s`,
      ]);
      // Its timeout, a second later.
      await vi.advanceTimersByTimeAsync(1_500);
      expect((await connecting) as Error).toBeInstanceOf(Error);
    } finally {
      vi.useRealTimers();
      await mute.close();
    }
  }, 30_000);

  it("signal aborted ends the connect at once, with its reason: a try that has no answer, the register-client handshake, a signal aborted already", async () => {
    const mute = await muteServer();
    const silent = { timeoutMs: 60_000, logger: pino({ level: "silent" }), tls: testTls() };
    try {
      for (const address of [`tls://${mute.hostPort}`, `tcp://${mute.hostPort}`]) {
        const stop = new AbortController();
        const connecting = Client.connect(address, { ...silent, signal: stop.signal }).catch(
          (e: unknown) => e,
        );
        await mute.acceptedAtLeast(address.startsWith("tls") ? 1 : 2);
        await sleep(100); // over tcp://, in the handshake by now
        stop.abort(new Error("stopped"));
        const ended = await Promise.race([connecting, sleep(2_000, "still connecting")]);
        expect((ended as Error).message).toBe("stopped");
      }
      await mute.endedAtLeast(2);
      const aborted = AbortSignal.abort(new Error("stopped before"));
      await expect(
        Client.connect(`tls://${mute.hostPort}`, { ...silent, signal: aborted }),
      ).rejects.toThrow(/^stopped before$/);
      await expect(
        Client.connect(`tls://${mute.hostPort}`, { ...silent, signal: {} as AbortSignal }),
      ).rejects.toThrow(/^Client option signal must be an AbortSignal, got \{\}$/);
    } finally {
      await mute.close();
    }
  });

  it("refuses an onWaiting that is not a function", async () => {
    await expect(
      Client.connect("tcp://127.0.0.1:1", { onWaiting: "yes" as unknown as () => void }),
    ).rejects.toThrow('Client option onWaiting must be a function, got "yes"');
  });
});
