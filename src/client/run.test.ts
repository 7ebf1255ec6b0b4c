import { afterEach, describe, expect, it } from "vitest";
import { RunError } from "./errors.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { add, boom, reschedules, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("client.run", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`runs a task function on every worker, by address (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ protocol });
      const addresses = cluster.workers.map((w) => w.address).sort();
      const got = await client.run(add, 40, 2);
      expect(Object.keys(got)).toEqual(addresses);
      expect(Object.values(got)).toEqual([42, 42]);
      // By name too, and on the workers named only.
      expect(await client.runWith({ workers: addresses[1] }, "add", 1, 1)).toEqual({
        [addresses[1]]: 2,
      });
      // Values cross as task values do.
      const map = new Map([["k", new Uint8Array([1, 2])]]);
      const echoed = await client.runWith({ workers: [addresses[0]] }, "identity", map);
      expect(echoed[addresses[0]]).toEqual(map);
      // The arguments too, with what only structured clone carries: a cycle, a BigInt, a Date.
      const cyclic: Record<string, unknown> = { big: 2n ** 70n, when: new Date(0) };
      cyclic.self = cyclic;
      const back = (await client.runWith({ workers: [addresses[0]] }, "identity", cyclic))[
        addresses[0]
      ] as Record<string, unknown>;
      expect(back.self).toBe(back);
      expect(back.big).toBe(2n ** 70n);
      expect(back.when).toEqual(new Date(0));
    });
  }

  it("a failure rejects with the worker's RunError, or is returned with onError", async () => {
    const { cluster, client } = await testCluster();
    const [first] = cluster.workers.map((w) => w.address).sort();
    const err = await client.run(boom, "from run").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err).toMatchObject({ worker: first, exceptionText: "ValueError: from run" });
    expect((err as RunError).tracebackText).not.toBe("");
    const returned = await client.runWith({ onError: "return" }, boom, "again");
    for (const v of Object.values(returned)) expect(v).toBeInstanceOf(RunError);
    // A function no task module defines.
    const unknown = await client.run("nosuch").catch((e: unknown) => e);
    expect((unknown as RunError).exceptionText).toMatch(/nosuch/);
    // Reschedule is for tasks: a run raising it is answered with an error.
    const rescheduled = await client.run(reschedules).catch((e: unknown) => e);
    expect(rescheduled).toBeInstanceOf(RunError);
    expect((rescheduled as RunError).message).toMatch(
      /run: reschedules raised Reschedule, which only a task may/,
    );
  });

  it("a worker named that no connected worker is fails as one that cannot be reached, as in Dask, rather than vanish from the answer", async () => {
    const { client } = await testCluster();
    await expect(client.runWith({ workers: ["0", "nosuch"] }, add, 1, 2)).rejects.toThrow(
      new RunError("nosuch", "no connected worker matches it"),
    );
    const returned = await client.runWith(
      { workers: ["0", "nosuch"], onError: "return" },
      add,
      1,
      2,
    );
    expect(Object.values(returned)).toContain(3);
    expect(returned.nosuch).toBeInstanceOf(RunError);
    expect(Object.keys(returned)).toHaveLength(2);
  });

  for (const executor of ["inline", "threads"] as const) {
    it(`an error names the run, not a made-up task key (${executor})`, async () => {
      const { client } = await testCluster({ executor, workers: 1 });
      // A function returned: the inline executor lets it in, the threads cannot clone it.
      const err = await client.run("identity", () => 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunError);
      const text = (err as RunError).exceptionText;
      expect(text).toMatch(
        /^DataCloneError: (result|arguments) of client\.run\(identity\) cannot be/,
      );
      expect(text).not.toMatch(/task run-/);
    });
  }

  it("holds a worker thread while it runs: two runs on one thread take turns", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const address = cluster.workers[0].address;
    const t0 = performance.now();
    const both = await Promise.all([client.run(slowInc, 1, 150), client.run(slowInc, 2, 150)]);
    // Together they would end after 150 ms; one after the other, after 300 at least.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
    expect(both).toEqual([{ [address]: 2 }, { [address]: 3 }]);
  });

  it("a run waiting for the thread when its worker closes ends at once, saying so", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const worker = cluster.workers[0];
    const runner = (
      worker as unknown as {
        runner: { runFunction(a: Record<string, unknown>): Promise<unknown> };
      }
    ).runner;
    const holding = runner.runFunction({ fn: "slowInc", args: [1, 300] });
    const waiting = runner.runFunction({ fn: "inc", args: [1] }).catch((e: unknown) => e);
    await worker.close();
    await holding.catch(() => {});
    const outcome = await Promise.race([
      waiting,
      new Promise((r) => setTimeout(() => r("still waiting"), 2_000)),
    ]);
    expect((outcome as Error).message).toBe("run: the worker closed");
  });

  it("refuses bad input", async () => {
    const { client } = await testCluster();
    await expect(client.run(42 as never)).rejects.toThrow(
      /run: the function must be a task definition/,
    );
    await expect(client.runWith({ onError: "ignore" as never }, add, 1, 2)).rejects.toThrow(
      'runWith: onError must be "raise" or "return", got "ignore"',
    );
    await expect(client.runWith({ workers: [] }, add, 1, 2)).rejects.toThrow(
      /runWith: workers must be/,
    );
    // A worker that is not there is a failure of its own (below), not an empty answer.
    await expect(client.runWith({ workers: "tcp://10.9.9.9:1" }, add, 1, 2)).rejects.toThrow(
      "run on tcp://10.9.9.9:1 failed: no connected worker matches it",
    );
  });
});
