import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import type { ResolvedWorkerOptions } from "../../worker/workerOptions.ts";
import { TEST_WORKER_ARGS, testContext } from "../testContext.ts";
import { workerCommand } from "./worker.ts";
import { runWorker } from "./workerAction.ts";

let scheduler: Scheduler;
beforeAll(async () => {
  scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
});
afterAll(() => scheduler.close());

/** The options a `weft worker` given `more` started with; the worker closed again. */
async function optionsWith(
  more: Partial<Parameters<typeof runWorker>[1]>,
): Promise<ResolvedWorkerOptions> {
  // runWorker itself, not cliWorker, which waits for a worker that never starts.
  const ctx = testContext();
  let seen: ResolvedWorkerOptions | null = null;
  await runWorker(scheduler.address, { ...TEST_WORKER_ARGS, ...more }, ctx, (w) => {
    seen = w.options;
    return w.close();
  });
  expect(ctx.stderr.text).toBe("");
  if (seen === null) throw new Error("the worker did not start");
  return seen;
}

/** What a `weft worker` given `more` said as it refused to start (exit 2, no worker started). */
async function refusedStart(
  more: Partial<Parameters<typeof runWorker>[1]>,
  address = scheduler.address,
): Promise<string> {
  const ctx = testContext();
  let started = false;
  await runWorker(address, { ...TEST_WORKER_ARGS, ...more }, ctx, (w) => {
    started = true;
    return w.close();
  });
  expect(started, ctx.stderr.text).toBe(false);
  expect(ctx.exitCode, ctx.stderr.text).toBe(2);
  return ctx.stderr.text;
}

describe("weft worker's options", () => {
  it("reach the worker, each of them", async () => {
    expect(
      await optionsWith({
        name: "w-1",
        resources: "GPU=2",
        memoryLimit: "8GiB",
        memoryTarget: "0.5",
        memorySpill: "off",
        memoryPause: "0.9",
        memoryTerminate: "1",
        validate: true,
        allowUploads: true,
        lifetime: "1h",
        lifetimeStagger: "5m",
        deathTimeout: "60000",
      }),
    ).toMatchObject({
      name: "w-1",
      resources: { GPU: 2 },
      memoryTarget: 0.5,
      memorySpill: false,
      memoryPause: 0.9,
      memoryTerminate: 1,
      validate: true,
      acceptUploads: true,
      lifetimeMs: 3_600_000,
      lifetimeStaggerMs: 300_000,
      lifetimeRestart: false,
      deathTimeoutMs: 60_000,
      connectTimeoutMs: 5000,
      nthreads: 1,
    });
  });

  it("take a duration with a unit for the times of ms, and refuse a --lifetime of 0 or shorter than its stagger in their words", async () => {
    // Both were refused ("must be a positive integer, got 1m"), for a number was all they took.
    expect(await optionsWith({ deathTimeout: "1m", connectTimeout: "5s" })).toMatchObject({
      deathTimeoutMs: 60_000,
      connectTimeoutMs: 5000,
    });
    // It was "Worker option lifetimeMs must be a positive integer, got 0".
    expect(await refusedStart({ lifetime: "0" })).toBe(
      "weft worker: cannot start: --lifetime must be at least 1 ms (leave it out for none; Dask reads 0 so), got 0\n",
    );
    // It was "Worker option lifetimeStaggerMs (300000) must be at most lifetimeMs (60000)".
    expect(await refusedStart({ lifetime: "1m", lifetimeStagger: "5m" })).toBe(
      "weft worker: cannot start: --lifetime-stagger (5m) must be at most --lifetime (1m): the worker's lifetime is --lifetime give or take it\n",
    );
  });

  it("name --tasks and --preload by their flags when the Worker refuses a module", async () => {
    for (const [flag, args] of [
      ["--tasks", { tasks: ["/no/such/tasks.mjs"] }],
      ["--preload", { preload: ["/no/such/setup.mjs"] }],
    ] as const) {
      // It was "Worker option taskModules: no such file: …", an option never given.
      expect(await refusedStart(args)).toMatch(
        new RegExp(`^weft worker: cannot start: ${flag}: no such file: /no/such/`),
      );
    }
  });

  it("name every option the Worker refuses by its flag, not by the API's name", async () => {
    // Each was "Worker option spillDirectory: …", "memoryLimit 64 kiB is too small …":
    // options of the API a command-line user never gave.
    const cases: [Partial<Parameters<typeof runWorker>[1]>, RegExp][] = [
      [{ name: "" }, /^--name must be a non-empty string, got ""$/],
      [{ contactAddress: "bogus" }, /^--contact-address must be an address peers can connect to/],
      [{ httpAddress: ":99999" }, /^--http-address: HTTP address must be \[host\]:port/],
      [{ metricsNamespace: "bad name" }, /^--metrics-namespace must be a Prometheus name/],
      [
        { memoryLimit: "1GiB", spillDirectory: "/no/such/dir" },
        /^--spill-directory: no such directory: "\/no\/such\/dir"$/,
      ],
      [
        { memoryLimit: "1GiB", spillDirectory: "/proc" },
        /^--spill-directory \/proc cannot be written in \(\w+\): /,
      ],
      [
        { memoryLimit: "1GiB", memoryTarget: "0.99", memoryTerminate: "0.5" },
        /^--memory-target \(0\.99\) must be below --memory-pause \(0\.8\): /,
      ],
      [
        { memoryLimit: "64kB" },
        /^--memory-limit 62\.50 kiB is too small: .* \(--memory-terminate\); give a larger limit, or measure only the task values held \(--memory-measure managed\)$/,
      ],
    ];
    for (const [args, said] of cases) {
      const text = await refusedStart(args);
      expect(text.replace(/^weft worker: cannot start: /, "").trimEnd()).toMatch(said);
      expect(text).not.toMatch(/Worker option|memoryLimit|spillDirectory|memoryMeasure/);
    }
  });

  it("take the top of (0, 1] for --memory-target", async () => {
    // Below every threshold left on: terminating at 1 would leave it no room.
    expect(
      await optionsWith({
        memoryLimit: "8GiB",
        memoryTarget: "1",
        memorySpill: "off",
        memoryPause: "off",
        memoryTerminate: "off",
      }),
    ).toMatchObject({ memoryTarget: 1, memoryTerminate: false });
  });

  it("refuse the memory options without --memory-limit, which they are shares of (exit 2)", async () => {
    // Without a budget the worker neither spills, pauses nor terminates: they were ignored.
    expect(await refusedStart({ memoryTerminate: "0.9" })).toBe(
      "weft worker: cannot start: --memory-terminate applies with --memory-limit only: without a memory budget nothing is spilled, paused or terminated\n",
    );
    expect(
      await refusedStart({ memoryTarget: "0.5", spillDirectory: "/tmp", memoryPause: "off" }),
    ).toBe(
      "weft worker: cannot start: --memory-target, --spill-directory, --memory-pause apply with --memory-limit only: without a memory budget nothing is spilled, paused or terminated\n",
    );
    expect(
      await optionsWith({ memoryLimit: "auto", memorySpill: "0.75", spillDirectory: "/tmp" }),
    ).toMatchObject({ memorySpill: 0.75, spillDirectory: "/tmp" });
  });

  it("refuse numbers in another base or padded, which Number read (exit 2)", async () => {
    for (const [more, message] of [
      [{ nthreads: "0x2" }, "--nthreads must be a positive integer, got 0x2"],
      [
        { memoryLimit: "1GiB", memoryTarget: "0x1" },
        "--memory-target must be a number in (0, 1], got 0x1",
      ],
      [
        { memoryLimit: "1GiB", memorySpill: " 0.5 " },
        "--memory-spill must be a number in (0, 1] or off, got  0.5 ",
      ],
      [{ resources: "GPU=0b1" }, 'bad resource "GPU=0b1": expected NAME=AMOUNT, e.g. GPU=1'],
    ] as const) {
      expect(await refusedStart(more)).toContain(message);
    }
  });

  it("refuse a --contact-address at port 0, or without a host, saying which it lacks (exit 2)", async () => {
    // Both were "a TCP address needs a host and a port", of an address that gave a port.
    const refusal = (address: string, why: string) =>
      `weft worker: cannot start: --contact-address must be an address peers can connect to, such as tcp://10.0.0.1:4000, got ${JSON.stringify(address)}: ${why}\n`;
    expect(await refusedStart({ contactAddress: "tcp://typo:0" })).toBe(
      refusal(
        "tcp://typo:0",
        "port 0 cannot be connected to (it means any free port to a listener): give the port the worker listens on",
      ),
    );
    expect(await refusedStart({ contactAddress: "tcp://:4000" })).toBe(
      refusal("tcp://:4000", "it names no host"),
    );
  });

  it("refuse a --contact-address on a wildcard host, which no peer on another host can dial (exit 2)", async () => {
    // Taken before: the worker registered at tcp://0.0.0.0:4000, and a peer elsewhere
    // fetching from it dialled its own machine.
    for (const [address, host] of [
      ["tcp://0.0.0.0:4000", "0.0.0.0"],
      ["tcp://[::]:4000", "::"],
    ]) {
      expect(await refusedStart({ contactAddress: address })).toBe(
        `weft worker: cannot start: --contact-address must be an address peers can connect to, such as tcp://10.0.0.1:4000, got ${JSON.stringify(address)}: ${host} means every interface to a listener, no address a peer on another host can connect to: give the worker's own host name or IP\n`,
      );
    }
  });

  it("refuse a scheduler at port 0 at once, which they waited for until stopped (exit 2)", async () => {
    // --death-timeout bounds the wait that was, should the refusal be gone.
    expect(await refusedStart({ deathTimeout: "500" }, "tcp://127.0.0.1:0")).toContain(
      'port 0 in address "tcp://127.0.0.1:0" cannot be connected to (it means any free port to a listener)',
    );
  });

  it("join --resources given more than once, as one list", async () => {
    // Commander keeps an option's last value: the GPU was dropped without a word.
    const cmd = workerCommand(testContext()).action(() => {});
    const given = ["--resources", "GPU=1", "--resources", "MEM=8e9"];
    await cmd.parseAsync([scheduler.address, ...given], { from: "user" });
    const { resources } = cmd.opts<{ resources: string }>();
    expect(resources).toBe("GPU=1,MEM=8e9");
    expect(await optionsWith({ resources })).toMatchObject({ resources: { GPU: 1, MEM: 8e9 } });
  });

  it("leave the worker's defaults alone when not given", async () => {
    expect(await optionsWith({})).toMatchObject({
      resources: {},
      validate: false,
      acceptUploads: false,
      deathTimeoutMs: null,
    });
  });
});
