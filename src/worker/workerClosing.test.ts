import { pino } from "pino";
import { expect, it } from "vitest";
import { Client } from "../client/client.ts";
import { muteServer } from "../comm/testMuteServer.ts";
import { testTls } from "../comm/testTls.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { testWorker } from "./testWorker.ts";

it("closing, aborted as the worker closes, ends what a plugin or program dials with it, as the scheduler's does", async () => {
  const scheduler = await new Scheduler({
    listen: "inproc://",
    logger: pino({ level: "silent" }),
  }).listen();
  const mute = await muteServer();
  try {
    const worker = await testWorker(scheduler.address);
    expect(worker.closing.aborted).toBe(false);
    // A TLS handshake the peer never makes: without the signal, waited on up to timeoutMs.
    const dialling = Client.connect(`tls://${mute.hostPort}`, {
      timeoutMs: 60_000,
      logger: pino({ level: "silent" }),
      tls: testTls(),
      signal: worker.closing,
    }).catch((e: unknown) => e);
    // Many such dials at once draw no "possible EventTarget memory leak" warning.
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    const more = Array.from({ length: 12 }, () => {
      const c = new AbortController();
      worker.closing.addEventListener("abort", () => c.abort(), { once: true });
      return c;
    });
    await new Promise((r) => setImmediate(r));
    process.off("warning", onWarning);
    expect(warnings.map((w) => w.name)).toEqual([]);
    await mute.acceptedAtLeast(1);
    await worker.close();
    expect(more.every((c) => c.signal.aborted)).toBe(true);
    expect(worker.closing.aborted).toBe(true);
    const ended = await Promise.race([
      dialling,
      new Promise((r) => setTimeout(r, 2_000, "still dialling")),
    ]);
    expect((ended as Error).message).toBe("the worker is closing");
  } finally {
    await mute.close();
    await scheduler.close();
  }
});
