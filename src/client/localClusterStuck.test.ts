import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { importModule } from "../util/importModule.ts";
import { LocalCluster } from "./localCluster.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-cluster-stuck-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const clusters: LocalCluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close(0);
});

const silent = () => pino({ level: "silent" });

/**
 * Import the preload at `path` as a start does, so that a short start deadline
 * is not spent on its first import (slow on a loaded host) before its
 * weftSetup, the step the test bounds, has begun.
 */
async function warmed(path: string): Promise<string> {
  await importModule(pathToFileURL(path).href);
  return path;
}
const never = () => new Promise(() => {});

/**
 * A preload whose weftSetup fails on the worker named "0" and never ends on
 * the others: its file.
 */
function failingThenStuck(name: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `export function weftSetup(w) {
  if (w.options.name === "0") throw new Error("worker 0 cannot start");
  return new Promise(() => {});
}
`,
  );
  return path;
}

// Short: without the fix these hang until the timeout.
describe("a LocalCluster whose parts never finish starting or closing", { timeout: 15_000 }, () => {
  it("start(): a worker that fails has those still starting closed, and the start fails with its error", async () => {
    const preload = failingThenStuck("start.mjs");
    const t0 = performance.now();
    await expect(
      LocalCluster.start({
        workers: 3,
        executor: "inline",
        logger: silent(),
        worker: { preload: [preload] },
      }),
    ).rejects.toThrow(
      /^LocalCluster: a worker failed to start: preload .*start\.mjs: worker 0 cannot start$/,
    );
    expect(performance.now() - t0).toBeLessThan(8_000);
  });

  it("scale(n): likewise, the scale failing with the first error", async () => {
    const preload = failingThenStuck("scale.mjs");
    const cluster = await LocalCluster.start({
      workers: 0,
      executor: "inline",
      logger: silent(),
      worker: { preload: [preload] },
    });
    clusters.push(cluster);
    const t0 = performance.now();
    await expect(cluster.scale(3)).rejects.toThrow(
      /^scale: a worker failed to start: preload .*scale\.mjs: worker 0 cannot start$/,
    );
    expect(performance.now() - t0).toBeLessThan(8_000);
    expect(cluster.workerCount).toBe(0);
  });

  it("close(timeout): a scheduler plugin's and a worker plugin's close that never end are waited on up to the timeout", async () => {
    const cluster = await LocalCluster.start({
      workers: 1,
      executor: "inline",
      logger: silent(),
      scheduler: { plugins: [{ name: "stuck", close: never }] },
    });
    await cluster.workers[0].addPlugin({ teardown: never }, "stuck");
    const t0 = performance.now();
    await cluster.close(0.2);
    // Before, 5 s for the worker and 30 s for the scheduler.
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(cluster.scheduler.status).toBe("closed");
    expect(cluster.workers[0].status).toBe("closed");
  });

  it("close(timeout) refuses a timeout that is not a number of seconds ≥ 0, closing nothing", async () => {
    const cluster = await LocalCluster.start({ workers: 0, executor: "inline", logger: silent() });
    clusters.push(cluster);
    for (const bad of [-1, Number.NaN, "5", null]) {
      await expect(cluster.close(bad as number)).rejects.toThrow(
        /^LocalCluster.close: timeout must be a number of seconds ≥ 0, got /,
      );
    }
    expect(cluster.scheduler.status).toBe("running");
    await cluster.close(Number.POSITIVE_INFINITY);
    expect(cluster.scheduler.status).toBe("closed");
  });

  it("start({ startTimeoutMs }): a scheduler whose preload's weftSetup never ends is closed, its preload torn down, and the start fails naming it", async () => {
    const tornDown = join(dir, "scheduler-torn-down");
    const preload = join(dir, "stuck-scheduler.mjs");
    writeFileSync(
      preload,
      `import { writeFileSync } from "node:fs";
export function weftSetup() { return new Promise(() => {}); }
export function weftTeardown() { writeFileSync(${JSON.stringify(tornDown)}, ""); }
`,
    );
    // Warm: else the deadline may come during its import, with no weftSetup begun to tear down.
    await warmed(preload);
    await expect(
      LocalCluster.start({
        workers: 1,
        executor: "inline",
        protocol: "tcp",
        logger: silent(),
        scheduler: { preload: [preload] },
        startTimeoutMs: 300,
      }),
    ).rejects.toThrow(
      /^LocalCluster: the cluster did not start within startTimeoutMs \(300 ms\): the scheduler was still running its preload modules' weftSetup \(file:\/\/.*stuck-scheduler\.mjs\); everything started was closed$/,
    );
    expect(existsSync(tornDown)).toBe(true);
  });

  it("start({ startTimeoutMs }): workers still starting then are closed, and the start fails naming them and their step", async () => {
    const preload = join(dir, "stuck-worker.mjs");
    writeFileSync(
      preload,
      'export function weftSetup(w) { return w.options.name === "0" ? undefined : new Promise(() => {}); }\n',
    );
    // Warm: else worker "0" may still be importing it at the deadline.
    await warmed(preload);
    const start = (workers: number) =>
      LocalCluster.start({
        workers,
        executor: "inline",
        logger: silent(),
        worker: { preload: [preload] },
        startTimeoutMs: 300,
      });
    const setUp = `running its preload modules' weftSetup \\(file:\\/\\/.*stuck-worker\\.mjs\\)`;
    await expect(start(3)).rejects.toThrow(
      new RegExp(
        `^LocalCluster: the cluster did not start within startTimeoutMs \\(300 ms\\): workers "1", "2" were each still ${setUp}; everything started was closed$`,
      ),
    );
    await expect(start(2)).rejects.toThrow(
      new RegExp(`\\(300 ms\\): worker "1" was still ${setUp}; everything started was closed$`),
    );
  });

  it("start({ startTimeoutMs }): workers setting up a cluster's worker plugin that never ends are named at that step", async () => {
    const tasks = join(dir, "stuck-plugin-tasks.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(new URL("../worker/taskRegistry.ts", import.meta.url).href)};
defineTask("stuck.pluginFactory", () => ({ setup: () => new Promise(() => {}) }));
`,
    );
    // As a client's registerWorkerPlugin before the workers came: sent in their register reply.
    const preload = join(dir, "records-stuck-plugin.mjs");
    writeFileSync(
      preload,
      'export function weftSetup(s) { s.workerPlugins.push({ name: "stuck", fn: "stuck.pluginFactory", args: [] }); }\n',
    );
    await warmed(preload);
    await expect(
      LocalCluster.start({
        workers: 2,
        executor: "inline",
        logger: silent(),
        taskModules: [tasks],
        scheduler: { preload: [preload] },
        startTimeoutMs: 500,
      }),
    ).rejects.toThrow(
      /^LocalCluster: the cluster did not start within startTimeoutMs \(500 ms\): workers "0", "1" were each still setting up the cluster's worker plugin "stuck"; everything started was closed$/,
    );
  });

  it("start({ startTimeoutMs }) past while a scheduler or worker whose weftSetup failed tears its preloads down names that failure, not a weftSetup still running", async () => {
    const preload = join(dir, "failing-setup.mjs");
    writeFileSync(
      preload,
      `export async function weftSetup() { throw new Error("no GPU here"); }
export function weftTeardown() { return new Promise((resolve) => setTimeout(resolve, 1_000)); }
`,
    );
    // Warm: else the deadline may come during its import, before its weftSetup failed.
    await warmed(preload);
    const tearingDown =
      "tearing down its preload modules, preload file:\\/\\/.*failing-setup\\.mjs having failed: no GPU here; everything started was closed$";
    for (const [part, still] of [
      ["scheduler", "the scheduler was"],
      ["worker", 'worker "0" was'],
    ] as const) {
      await expect(
        LocalCluster.start({
          workers: 1,
          executor: "inline",
          logger: silent(),
          [part]: { preload: [preload] },
          startTimeoutMs: 300,
        }),
      ).rejects.toThrow(new RegExp(`\\(300 ms\\): ${still} still ${tearingDown}`));
    }
  });

  it("start({ startTimeoutMs }) refuses a bound that is not a positive number of ms, starting nothing", async () => {
    for (const bad of [0, -5, Number.NaN, "1000", 2 ** 31]) {
      await expect(
        LocalCluster.start({ workers: 0, logger: silent(), startTimeoutMs: bad as number }),
      ).rejects.toThrow(
        /^LocalCluster option startTimeoutMs must be a positive number of ms, at most /,
      );
    }
    const cluster = await LocalCluster.start({
      workers: 1,
      executor: "inline",
      logger: silent(),
      startTimeoutMs: null,
    });
    clusters.push(cluster);
    expect(cluster.workerCount).toBe(1);
  });
});
