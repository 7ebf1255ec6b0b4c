import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Client } from "../../client/client.ts";
import type { ResolvedSchedulerOptions } from "../../scheduler/schedulerOptions.ts";
import { machine } from "../../util/testMachine.ts";
import { testContext as context, runWeft } from "../testContext.ts";
import { runScheduler } from "./schedulerAction.ts";
import { schedulerRefusal } from "./testSchedulerRefusal.ts";

vi.mock("node:os", async (importOriginal) => {
  const os = await importOriginal<typeof import("node:os")>();
  return { ...os, networkInterfaces: vi.fn(os.networkInterfaces) };
});
afterEach(() => {
  vi.mocked(networkInterfaces).mockReset();
});

/** Run `weft scheduler --listen <listen>` until it has printed its address; returns the line. */
async function startupLine(listen: string): Promise<{ line: string; address: string }> {
  const ctx = context();
  let address = "";
  await runScheduler({ listen, workerTtl: "30000", logLevel: "silent" }, ctx, (s) => {
    address = s.address;
    return Promise.resolve();
  });
  expect(ctx.stderr.text).toBe("");
  expect(ctx.exitCode).toBe(0);
  return { line: ctx.stdout.text, address };
}

describe("weft scheduler's startup line", () => {
  it("on 0.0.0.0, gives this machine's non-internal IPv4 address, then the listening one", async () => {
    machine("2001:db8::5", "10.0.0.5");
    const { line, address } = await startupLine("tcp://0.0.0.0:0");
    expect(address).toMatch(/^tcp:\/\/0\.0\.0\.0:\d+$/);
    const port = address.split(":").at(-1);
    expect(line).toBe(`scheduler at tcp://10.0.0.5:${port} (listening on ${address})\n`);
  });

  it("on [::], gives this machine's non-internal IPv6 address", async () => {
    machine("10.0.0.5", "2001:db8::5");
    const { line, address } = await startupLine("tcp://[::]:0");
    expect(address).toMatch(/^tcp:\/\/\[::\]:\d+$/);
    const port = address.split(":").at(-1);
    expect(line).toBe(`scheduler at tcp://[2001:db8::5]:${port} (listening on ${address})\n`);
  });

  it("on 0.0.0.0 without a network interface, the listening address alone", async () => {
    machine();
    const { line, address } = await startupLine("tcp://0.0.0.0:0");
    expect(line).toBe(`scheduler at ${address}\n`);
  });

  it("HTTP on every interface: this machine's address, which a browser can open, then 0.0.0.0", async () => {
    machine("10.0.0.5");
    const ctx = context();
    let url = "";
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", httpAddress: ":0" },
      ctx,
      (s) => {
        url = s.httpUrl ?? "";
        return Promise.resolve();
      },
    );
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const port = url.split(":").at(-1);
    expect(ctx.stdout.text.split("\n")[1]).toBe(
      `http at http://10.0.0.5:${port} (listening on ${url})`,
    );
  });

  it("on a concrete address, that address alone", async () => {
    machine("10.0.0.5");
    const { line, address } = await startupLine("tcp://127.0.0.1:0");
    expect(address).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(line).toBe(`scheduler at ${address}\n`);
  });
});

describe("weft scheduler stopping", () => {
  it("exits 1 saying why on stderr when its state machine fails", async () => {
    const ctx = context();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      ctx,
      (s) => {
        vi.spyOn(s.state, "handleStimuli").mockImplementation(() => {
          throw new Error("a bug\n    at somewhere");
        });
        s.dispatch([{ kind: "remove-worker", worker: "tcp://127.0.0.1:1", stimulusId: "r1" }]);
        return s.closed;
      },
    );
    expect(ctx.exitCode).toBe(1);
    expect(ctx.stderr.text).toBe("weft scheduler: stopped: its state machine failed: a bug\n");
  });

  it("exits 0 saying nothing when stopped (SIGINT, SIGTERM)", async () => {
    const ctx = context();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      ctx,
      () => Promise.resolve(),
    );
    expect(ctx.exitCode).toBe(0);
    expect(ctx.stderr.text).toBe("");
  });
});

describe("weft scheduler --idle-timeout", () => {
  it("closes by itself once idle that long (exit 0); refuses a bad duration (exit 2)", async () => {
    const ctx = context();
    const started = Date.now();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", idleTimeout: "0.3s" },
      ctx,
      (s) => s.closed,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ctx.exitCode).toBe(0);
    expect(ctx.stderr.text).toBe("");
    expect(await schedulerRefusal({ idleTimeout: "later" })).toMatch(
      /^weft scheduler: cannot start: --idle-timeout must be a duration such as 1h, 30m or 90s: /,
    );
    // It was "Scheduler option idleTimeoutMs must be a number of ms > 0 and at most …".
    expect(await schedulerRefusal({ idleTimeout: "0" })).toBe(
      "weft scheduler: cannot start: --idle-timeout must be at least 1 ms (leave it out for none; Dask reads 0 so), got 0\n",
    );
  });
});

describe("weft scheduler --http-address", () => {
  it("prints where the HTTP endpoints are, and serves them while it runs", async () => {
    const ctx = context();
    let health = "";
    await runScheduler(
      {
        listen: "tcp://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        httpAddress: "127.0.0.1:0",
      },
      ctx,
      async (s) => {
        health = await (await fetch(`${s.httpUrl}/health`)).text();
      },
    );
    expect(ctx.exitCode).toBe(0);
    expect(ctx.stdout.text).toMatch(
      /^scheduler at tcp:\/\/127\.0\.0\.1:\d+\nhttp at http:\/\/127\.0\.0\.1:\d+\n$/,
    );
    expect(health).toBe("ok\n");
  });

  it("a bad address or namespace: exit 2, saying which by its flag", async () => {
    // They named the Scheduler's options (Scheduler option httpAddress), never given.
    for (const [given, message] of [
      [
        { httpAddress: "nowhere" },
        /^weft scheduler: cannot start: --http-address: HTTP address must be \[host\]:port/,
      ],
      [
        { metricsNamespace: "a-b" },
        /^weft scheduler: cannot start: --metrics-namespace must be a Prometheus name/,
      ],
    ] as const) {
      const ctx = context();
      await runScheduler(
        { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...given },
        ctx,
        () => Promise.resolve(),
      );
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).toMatch(message);
      expect(ctx.stdout.text).toBe("");
    }
  });
});

describe("weft scheduler --preload", () => {
  it("imports the modules and calls their weftSetup as it starts; a missing one is exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-preload-cli-"));
    try {
      const mod = join(dir, "setup.mjs");
      writeFileSync(
        mod,
        "export const seen = [];\nexport function weftSetup(s) { seen.push(s.address); }\n",
      );
      const ctx = context();
      let address = "";
      await runScheduler(
        { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", preload: [mod] },
        ctx,
        (s) => {
          address = s.address;
          return Promise.resolve();
        },
      );
      expect(ctx.exitCode).toBe(0);
      const { seen } = (await import(pathToFileURL(mod).href)) as { seen: string[] };
      expect(seen).toEqual([address]);
      const bad = context();
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          preload: [join(dir, "missing.mjs")],
        },
        bad,
        () => Promise.resolve(),
      );
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr.text).toMatch(
        /^weft scheduler: cannot start: --preload: no such file: .*missing\.mjs\n$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with --tasks, runs their functions for clients (runOnScheduler); a missing module is exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-tasks-cli-"));
    try {
      const mod = join(dir, "schedulerTasks.mjs");
      const weft = new URL("../../client/index.ts", import.meta.url).href;
      writeFileSync(
        mod,
        `import { defineTask } from ${JSON.stringify(weft)};\n` +
          'export const twice = defineTask("cliTwice", (x) => 2 * x);\n',
      );
      const ctx = context();
      let answer: unknown;
      await runScheduler(
        { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", tasks: [mod] },
        ctx,
        async (s) => {
          const client = await Client.connect(s.address, { logger: pino({ level: "silent" }) });
          try {
            answer = await client.runOnScheduler("cliTwice", 21);
          } finally {
            await client.close();
          }
        },
      );
      expect(ctx.exitCode).toBe(0);
      expect(answer).toBe(42);
      const bad = context();
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          tasks: [join(dir, "missing.mjs")],
        },
        bad,
        () => Promise.resolve(),
      );
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr.text).toMatch(
        /^weft scheduler: cannot start: --tasks: no such file: .*missing\.mjs\n$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("weft scheduler's options", () => {
  /** The options the scheduler started with, given `more` on top of the required ones. */
  async function optionsWith(
    more: Partial<Parameters<typeof runScheduler>[0]>,
  ): Promise<ResolvedSchedulerOptions> {
    let seen: ResolvedSchedulerOptions | null = null;
    const ctx = context();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...more },
      ctx,
      (s) => {
        seen = s.options;
        return Promise.resolve();
      },
    );
    expect(ctx.stderr.text).toBe("");
    if (seen === null) throw new Error("the scheduler did not start");
    return seen;
  }

  it("a --worker-ttl under 2 s, or a TTL or interval that is no positive whole number of ms or too long for a timer: exit 2, saying which", async () => {
    const refusal = async (more: Record<string, string>): Promise<string> => {
      const ctx = context();
      let started = false;
      await runScheduler(
        { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...more },
        ctx,
        async (s) => {
          started = true;
          await s.close();
        },
      );
      expect(started).toBe(false);
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stdout.text).toBe("");
      return ctx.stderr.text;
    };
    // Workers heartbeat every second: 300 (seconds meant) removed every worker within a second.
    for (const ttl of ["300", "1999", "1s"]) {
      expect(await refusal({ workerTtl: ttl })).toBe(
        `weft scheduler: cannot start: --worker-ttl must be at least 2000 ms (workers heartbeat every second: a shorter TTL removes healthy ones), got ${ttl}\n`,
      );
    }
    expect(await refusal({ workerTtl: "30 secs" })).toMatch(
      /^weft scheduler: cannot start: --worker-ttl must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 30 secs: not a duration: "30 secs": invalid time unit "secs" \(valid: .*\)\n$/,
    );
    expect(await refusal({ workStealingInterval: "0" })).toBe(
      "weft scheduler: cannot start: --work-stealing-interval must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0\n",
    );
    expect(await refusal({ workStealingInterval: "0.5ms" })).toBe(
      "weft scheduler: cannot start: --work-stealing-interval must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0.5ms\n",
    );
    // In the option's words, as the other timeouts are (it was the Scheduler option's name).
    expect(await refusal({ activeMemoryManagerInterval: "99999999999" })).toBe(
      "weft scheduler: cannot start: --active-memory-manager-interval must be at most 2147483647 ms (about 24.8 days), got 99999999999\n",
    );
    expect(await refusal({ workStealingInterval: "3e9" })).toBe(
      "weft scheduler: cannot start: --work-stealing-interval must be at most 2147483647 ms (about 24.8 days), got 3e9\n",
    );
    expect((await optionsWith({ workerTtl: "2000" })).workerTtlMs).toBe(2000);
    expect(await refusal({ closeWorkerGrace: "0" })).toBe(
      "weft scheduler: cannot start: --close-worker-grace must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0\n",
    );
    // Past a timer's range the Scheduler refused it as "Scheduler option leaseTimeoutMs".
    expect(await refusal({ leaseTimeout: "3e9" })).toBe(
      "weft scheduler: cannot start: --lease-timeout must be at most 2147483647 ms (about 24.8 days), got 3e9\n",
    );
    // Clients refresh every third of it: 30 (seconds meant, Dask's 30s) gave 30 ms, and a
    // client whose event loop stalled 40 ms now and then lost its lock to another client.
    for (const lease of ["30", "999", "0.5s"]) {
      expect(await refusal({ leaseTimeout: lease })).toBe(
        `weft scheduler: cannot start: --lease-timeout must be at least 1000 ms (clients refresh their leases every third of it: a shorter one takes locks from clients busy for a moment; a bare number is milliseconds), got ${lease}\n`,
      );
    }
    expect((await optionsWith({ leaseTimeout: "1s" })).leaseTimeoutMs).toBe(1000);
    expect(await refusal({ leaseTimeout: "0s" })).toBe(
      "weft scheduler: cannot start: --lease-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0s\n",
    );
    expect(await refusal({ closeWorkerGrace: "3e9" })).toBe(
      "weft scheduler: cannot start: --close-worker-grace must be at most 2147483647 ms (about 24.8 days), got 3e9\n",
    );
  });

  it("--work-stealing-interval with --no-work-stealing: exit 2, as no round runs to be timed", async () => {
    // It was ignored; --idle-timeout ends a scheduler that would start all the same.
    const r = await runWeft([
      "scheduler",
      "--listen",
      "tcp://127.0.0.1:0",
      "--log-level",
      "silent",
      "--idle-timeout",
      "1s",
      "--no-work-stealing",
      "--work-stealing-interval",
      "50",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: "weft scheduler: cannot start: --work-stealing-interval and --no-work-stealing contradict each other: no round of work stealing runs\n",
    });
  });

  it("--close-worker-grace is parsed from the command line as the other durations are", async () => {
    const r = await runWeft([
      "scheduler",
      "--listen",
      "tcp://127.0.0.1:0",
      "--log-level",
      "silent",
      "--close-worker-grace",
      "1.5",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: "weft scheduler: cannot start: --close-worker-grace must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 1.5\n",
    });
  });

  it("take a duration with a unit (the Dask habit: 5m, 60s), a bare number staying ms", async () => {
    // Each was refused: "--worker-ttl must be a positive integer, got 5m".
    expect(
      await optionsWith({
        workerTtl: "5m",
        leaseTimeout: "1.5h",
        workStealingInterval: "250ms",
        activeMemoryManagerInterval: "3s",
        closeWorkerGrace: "2 minutes",
      }),
    ).toMatchObject({
      workerTtlMs: 300_000,
      leaseTimeoutMs: 5_400_000,
      workStealingIntervalMs: 250,
      activeMemoryManagerIntervalMs: 3000,
      closeWorkerGraceMs: 120_000,
    });
    // A TTL is no timer's wait: it may exceed a timer's range, as it always could.
    expect((await optionsWith({ workerTtl: "30d" })).workerTtlMs).toBe(30 * 86_400_000);
  });

  it("--lease-timeout inf never expires leases, as leaseTimeoutMs: Infinity", async () => {
    expect((await optionsWith({ leaseTimeout: "inf" })).leaseTimeoutMs).toBe(Infinity);
  });

  it("reach the scheduler, each of them, and their defaults otherwise", async () => {
    expect(
      await optionsWith({
        workerTtl: "45000",
        leaseTimeout: "6000",
        validate: true,
        checkWorkerAddress: false,
        workStealing: false,
        workStealingInterval: "250",
        activeMemoryManager: false,
        activeMemoryManagerInterval: "3000",
        closeWorkerGrace: "5000",
      }),
    ).toMatchObject({
      workerTtlMs: 45_000,
      leaseTimeoutMs: 6000,
      validate: true,
      checkWorkerAddress: false,
      workStealing: false,
      workStealingIntervalMs: 250,
      activeMemoryManager: false,
      activeMemoryManagerIntervalMs: 3000,
      closeWorkerGraceMs: 5000,
    });
    expect(await optionsWith({})).toMatchObject({
      workerTtlMs: 30_000,
      leaseTimeoutMs: 30_000,
      validate: false,
      checkWorkerAddress: true,
      workStealing: true,
      workStealingIntervalMs: 100,
      activeMemoryManager: true,
      activeMemoryManagerIntervalMs: 2000,
      closeWorkerGraceMs: 100_000,
    });
  });
});
