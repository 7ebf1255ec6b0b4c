import { describe, expect, it } from "vitest";
import { cliScheduler, cliWorker, runWeft, testContext } from "../testContext.ts";
import { isNoTimeout } from "./noTimeout.ts";

describe("inf, for no timeout", () => {
  it("is the word, in any case, and no other", () => {
    expect(isNoTimeout("inf")).toBe(true);
    expect(isNoTimeout(" INF ")).toBe(true);
    expect(isNoTimeout("infinity")).toBe(false);
    expect(isNoTimeout("0")).toBe(false);
  });

  it("every scheduler and worker option with a timeout that may be none takes it", async () => {
    const ctx = testContext();
    // --idle-timeout inf was refused ("invalid time unit"), while --lease-timeout inf was taken.
    const { scheduler, stop, done } = await cliScheduler(
      {
        listen: "tcp://127.0.0.1:0",
        logLevel: "silent",
        workerTtl: "inf",
        leaseTimeout: "inf",
        idleTimeout: "inf",
        closeWorkerGrace: "inf",
      },
      ctx,
    );
    try {
      expect(scheduler.options).toMatchObject({
        workerTtlMs: Number.POSITIVE_INFINITY,
        leaseTimeoutMs: Number.POSITIVE_INFINITY,
        idleTimeoutMs: null,
        closeWorkerGraceMs: Number.POSITIVE_INFINITY,
      });
      const workerCtx = testContext();
      const { worker, done: workerDone } = await cliWorker(scheduler.address, workerCtx, {
        lifetime: "inf",
        deathTimeout: "inf",
      });
      expect(worker.options).toMatchObject({ lifetimeMs: null, deathTimeoutMs: null });
      await worker.close();
      await workerDone;
      expect(workerCtx.exitCode, workerCtx.stderr.text).toBe(0);
    } finally {
      stop();
      await done;
    }
    expect(ctx.exitCode, ctx.stderr.text).toBe(0);
  });

  it("a --lifetime of inf is none: --lifetime-stagger needs another", async () => {
    const r = await runWeft([
      "worker",
      "tcp://127.0.0.1:1",
      "--lifetime",
      "inf",
      "--lifetime-stagger",
      "5m",
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /--lifetime-stagger and --lifetime-restart need --lifetime other than inf/,
    );
  });
});
