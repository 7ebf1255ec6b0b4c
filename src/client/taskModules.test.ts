import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import type { Client } from "./client.ts";
import { TaskModuleError } from "./errors.ts";
import { loadOnWorkers, taskModuleUrl } from "./taskModules.ts";
import {
  beforeRequest,
  CLIENT_TEST_TASKS,
  clusterScratch,
  extraWorker,
  testCluster,
} from "./testCluster.ts";

const REGISTRY = new URL("../worker/taskRegistry.ts", import.meta.url).href;

const scratch = clusterScratch("task-modules");
const extra = scratch.workers;

/** A task module defining `<name>` (doubling its argument), with a name of its own per test. */
function moduleDefining(body = ""): { path: string; name: string } {
  const name = `later.double-${randomUUID()}`;
  const path = join(scratch.dir, `${name}.mjs`);
  writeFileSync(
    path,
    `import { defineTask } from ${JSON.stringify(REGISTRY)};\n` +
      `${body}\ndefineTask(${JSON.stringify(name)}, (x) => 2 * x);\n`,
  );
  return { path, name };
}

/**
 * Edit the module at `path` (its task `name` tripling, not doubling) and check
 * that loading it again is refused and the old code keeps running.
 */
async function expectEditRefused(
  client: Client,
  path: string,
  name: string,
  executor: "inline" | "threads",
): Promise<void> {
  writeFileSync(
    path,
    `import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(name)}, (x) => 3 * x);\n`,
  );
  const err = await client.loadTaskModules(path).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TaskModuleError);
  expect((err as Error).message).toMatch(
    new RegExp(
      `load_task_modules: file:.*later\\.double-.*\\.mjs changed since this ${executor === "inline" ? "process" : "worker"} imported it: a module imported stays imported`,
    ),
  );
  expect(await client.submitWith({ pure: false }, name, 5)).toBe(10);
}

describe("Client.loadTaskModules", () => {
  for (const executor of ["inline", "threads"] as const) {
    it(`workers there and joining later run the module's tasks (${executor})`, async () => {
      const { cluster, client } = await testCluster({ executor, threadsPerWorker: 2 });
      const { path, name } = moduleDefining();
      await expect(client.submit(name, 1)).rejects.toThrow(/UnknownTaskFunctionError/);
      const loaded = await client.loadTaskModules(path);
      const addresses = cluster.workers.map((w) => w.address).sort();
      expect(Object.keys(loaded)).toEqual(addresses);
      for (const names of Object.values(loaded)) expect(names).toContain(name);
      // Every thread of every worker: more tasks than threads, at once.
      const doubled = await client.gather(
        Array.from({ length: 12 }, (_, i) => client.submitWith({ pure: false }, name, i)),
      );
      expect(doubled).toEqual(Array.from({ length: 12 }, (_, i) => 2 * i));
      // A worker joining later imports it as it registers.
      // One thread: the number is not what is checked of it, and each costs a start.
      const late = await extraWorker(cluster, {
        executor: executor === "threads" ? "piscina" : "inline",
        nthreads: 1,
      });
      extra.push(late);
      expect(late.taskNames).toContain(name);
      expect(await client.submitWith({ workers: [late.address] }, name, 50)).toBe(100);
      // Loading it again changes nothing.
      expect(Object.keys(await client.loadTaskModules(pathToFileURL(path)))).toHaveLength(3);
    });
  }

  it("a module that fails to import rejects, naming the worker, and is not kept", async () => {
    const { cluster, client } = await testCluster();
    const broken = moduleDefining('throw new Error("broken at import");');
    const first = cluster.workers.map((w) => w.address).sort()[0];
    const err = await client.loadTaskModules(broken.path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskModuleError);
    expect(err).toMatchObject({ worker: first });
    expect((err as Error).message).toMatch(
      /^loading task modules on .* failed: .*broken at import/,
    );
    // The scheduler did not keep it: a worker joining later starts.
    const late = await extraWorker(cluster);
    extra.push(late);
    expect(late.status).toBe("running");
    const missing = await client
      .loadTaskModules(join(scratch.dir, "nope.mjs"))
      .catch((e: unknown) => e);
    expect((missing as Error).message).toMatch(/no such file on this worker's machine: file:/);
    await expect(client.loadTaskModules([])).rejects.toThrow("loadTaskModules: no module given");
    await expect(client.loadTaskModules("https://example.com/t.mjs")).rejects.toThrow(
      "loadTaskModules: not a file URL or path: https://example.com/t.mjs",
    );
  });

  for (const executor of ["inline", "threads"] as const) {
    it(`a module that does not parse rejects saying where (${executor})`, async () => {
      const { client } = await testCluster({ executor, workers: 1, threadsPerWorker: 1 });
      const broken = moduleDefining("const y = [1, 2;");
      const err = await client.loadTaskModules(broken.path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskModuleError);
      // Node.js says what, not where; tsx's loader says line 1, column 1.
      expect((err as Error).message).toContain(
        `SyntaxError: Unexpected token ';' (${broken.path}:2: const y = [1, 2;)`,
      );
    });
  }

  for (const executor of ["inline", "threads"] as const) {
    it(`a module that threw as it loaded, fixed on disk, is imported when loaded again, also after a restart (${executor})`, async () => {
      // Two threads, each importing it again; one worker: a second would check nothing more.
      const { client } = await testCluster({ executor, workers: 1, threadsPerWorker: 2 });
      const { path, name } = moduleDefining('throw new Error("broken at import");');
      await expect(client.loadTaskModules(path)).rejects.toThrow(/broken at import/);
      // Unchanged, it fails as before.
      await expect(client.loadTaskModules(path)).rejects.toThrow(/broken at import/);
      writeFileSync(
        path,
        `import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(name)}, (x) => 3 * x);\n`,
      );
      for (const names of Object.values(await client.loadTaskModules(path)))
        expect(names).toContain(name);
      const tripled = await client.gather(
        Array.from({ length: 8 }, (_, i) => client.submitWith({ pure: false }, name, i)),
      );
      expect(tripled).toEqual(Array.from({ length: 8 }, (_, i) => 3 * i));
      // The workers a restart starts (in this process) import it too.
      await client.restart();
      expect(await client.submitWith({ pure: false }, name, 5)).toBe(15);
    });
  }

  for (const executor of ["inline", "threads"] as const) {
    it(`a module changed on disk since it was loaded is refused, rather than answered OK with the old code running (${executor})`, async () => {
      // The digests are the worker's, not a thread's: one worker of one thread.
      const { client } = await testCluster({ executor, workers: 1, threadsPerWorker: 1 });
      const { path, name } = moduleDefining();
      await client.loadTaskModules(path);
      // Loading it again unchanged changes nothing.
      await client.loadTaskModules(path);
      await expectEditRefused(client, path, name, executor);
    });
  }

  for (const executor of ["inline", "threads"] as const) {
    it(`a module the workers imported as they started (the taskModules option), changed on disk since, is refused too (${executor})`, async () => {
      const { path, name } = moduleDefining();
      const { client } = await testCluster({
        executor,
        workers: 1,
        threadsPerWorker: 1,
        taskModules: [CLIENT_TEST_TASKS, pathToFileURL(path)],
      });
      expect(await client.submitWith({ pure: false }, name, 5)).toBe(10);
      await expectEditRefused(client, path, name, executor);
    });
  }

  for (const executor of ["inline", "threads"] as const) {
    for (const how of ["taskModules", "loadTaskModules"] as const) {
      it(`a module changed on disk, then client.restart(): ${executor === "inline" ? "refused still, the process keeping the old code" : "the new threads import the new code, and its load is accepted"} (${executor}, ${how})`, async () => {
        const { path, name } = moduleDefining();
        // One worker of one thread: what is checked is the worker's, and a restart's new pool.
        const { client } = await testCluster({
          executor,
          workers: 1,
          threadsPerWorker: 1,
          taskModules: [CLIENT_TEST_TASKS, ...(how === "taskModules" ? [pathToFileURL(path)] : [])],
        });
        if (how === "loadTaskModules") await client.loadTaskModules(path);
        expect(await client.submitWith({ pure: false }, name, 5)).toBe(10);
        writeFileSync(
          path,
          `import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(name)}, (x) => 3 * x);\n`,
        );
        await client.restart();
        if (executor === "inline") {
          // The new workers imported it in the process's module cache: Node.js gave them the old module.
          const err = await client.loadTaskModules(path).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(TaskModuleError);
          expect((err as Error).message).toMatch(
            /load_task_modules: file:.*later\.double-.*\.mjs changed since this process imported it: a module imported stays imported/,
          );
          expect(await client.submitWith({ pure: false }, name, 5)).toBe(10);
        } else {
          await client.loadTaskModules(path);
          expect(await client.submitWith({ pure: false }, name, 5)).toBe(15);
        }
      });
    }
  }

  it("a worker that joins as the scheduler records the modules is asked first: one failing keeps them from being recorded", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    // Imported on a worker's main thread only (inline), it fails on one running pool threads.
    const { path } = moduleDefining(
      'import { isMainThread } from "node:worker_threads";\n' +
        'if (!isMainThread) throw new Error("not on a pool thread");',
    );
    beforeRequest(client, "load-task-modules", async () => {
      extra.push(await extraWorker(cluster, { executor: "piscina", nthreads: 1 }));
    });
    const err = await client.loadTaskModules(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskModuleError);
    expect((err as TaskModuleError).worker).toBe(extra[0].address);
    expect((err as Error).message).toContain("not on a pool thread");
    // Nothing kept: a worker running pool threads still joins.
    expect(cluster.scheduler.taskModules).toEqual([]);
    const later = await extraWorker(cluster, { executor: "piscina", nthreads: 1 });
    extra.push(later);
    expect(later.status).toBe("running");
  });

  it("taskModuleUrl: paths resolve against the current directory, file URLs stay", () => {
    expect(taskModuleUrl("/a/b.mjs")).toBe("file:///a/b.mjs");
    expect(taskModuleUrl("b.mjs")).toBe(pathToFileURL(join(process.cwd(), "b.mjs")).href);
    expect(taskModuleUrl(new URL("file:///x/y.ts"))).toBe("file:///x/y.ts");
    expect(() => taskModuleUrl(new URL("http://h/y.ts"))).toThrow(/not a file URL/);
    // A file URL given as a string comes out as the URL class spells it.
    expect(taskModuleUrl("file:/x/../y.ts")).toBe("file:///y.ts");
    expect(() => taskModuleUrl("")).toThrow('loadTaskModules: expected a path or file URL, got ""');
  });

  it("an answer without status OK and a list of tasks is an error naming the worker", async () => {
    for (const answer of [{ status: "error", tasks: [] }, { status: "OK" }]) {
      const peers = {
        get: async () => ({ call: async () => answer }),
      } as unknown as PeerPool;
      const err = await loadOnWorkers(peers, ["tcp://a:1"], ["file:///t.mjs"]).catch((e) => e);
      expect(err).toBeInstanceOf(TaskModuleError);
      expect(err).toMatchObject({ worker: "tcp://a:1" });
      expect((err as TaskModuleError).reason).toBe(`malformed answer: ${JSON.stringify(answer)}`);
    }
  });
});
