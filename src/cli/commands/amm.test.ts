import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { inc } from "../../client/testTasks.ts";
import { runWeft } from "../testContext.ts";

afterEach(closeTestClusters);

describe("weft amm", () => {
  it("status, run-once, start and stop a scheduler's active memory manager, one line each", async () => {
    const { cluster, client } = await testCluster({
      scheduler: { activeMemoryManager: false, activeMemoryManagerIntervalMs: 60_000 },
    });
    // x on the first worker, copied to the second for y: held twice.
    const [first, second] = cluster.workers.map((w) => w.address);
    const x = client.submitWith({ workers: [first] }, inc, 1);
    const y = client.submitWith({ workers: [second] }, inc, x);
    expect(await client.gather([x, y])).toEqual([2, 3]);
    const holders = async () => (await client.whoHas([x]))[x.key] ?? [];
    for (let i = 0; i < 400 && (await holders()).length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await holders()).toHaveLength(2);
    const amm = (...args: string[]) => runWeft(["amm", ...args, cluster.address]);

    expect(await amm("status")).toEqual({
      code: 0,
      out: "active memory manager: stopped\n",
      err: "",
    });
    expect(await amm("run-once")).toEqual({
      code: 0,
      out: "active memory manager: ran one round; asked workers to drop 1 replica\n",
      err: "",
    });
    expect(await holders()).toHaveLength(1);
    expect((await amm("run-once")).out).toBe(
      "active memory manager: ran one round; no replica to drop\n",
    );
    expect(await amm("start")).toEqual({
      code: 0,
      out: "active memory manager: running (every 60000 ms)\n",
      err: "",
    });
    expect(cluster.scheduler.amm.running).toBe(true);
    expect((await amm("status")).out).toBe("active memory manager: running (every 60000 ms)\n");
    expect(await amm("stop")).toEqual({
      code: 0,
      out: "active memory manager: stopped\n",
      err: "",
    });
    expect(cluster.scheduler.amm.running).toBe(false);
  });

  it("--help for each subcommand; bad usage and a scheduler that cannot be reached are exit 2", async () => {
    for (const action of ["start", "stop", "status", "run-once"]) {
      const help = await runWeft(["amm", action, "--help"]);
      expect(help.code, action).toBe(0);
      expect(help.out, action).toMatch(new RegExp(`^Usage: weft amm ${action} \\[options\\]`));
      expect(help.out, action).toContain("--scheduler-file <path>");
    }
    // The interval is the scheduler's: `weft amm start` has no such option, and refuses it.
    const start = await runWeft(["amm", "start", "--help"]);
    expect(start.out).toContain("the scheduler's --active-memory-manager-interval");
    const top = await runWeft(["amm", "--help"]);
    expect(top.code).toBe(0);
    expect(top.out).toMatch(/^Usage: weft amm /);
    expect(top.out).toMatch(/\n {2}run-once \[options\] \[scheduler\] /);

    const alone = await runWeft(["amm"]);
    expect(alone.code).toBe(2);
    expect(alone.err).toMatch(/^Usage: weft amm /);
    for (const args of [
      ["amm", "restart", "tcp://127.0.0.1:1"],
      ["amm", "restart", "--help"],
      ["help", "amm", "restart"],
    ]) {
      const r = await runWeft(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(/^error: unknown command 'restart'\n/);
      expect(r.out, args.join(" ")).toBe("");
    }
    const extra = await runWeft(["amm", "start", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2"]);
    expect(extra.code).toBe(2);
    expect(extra.err).toMatch(/^error: too many arguments for 'start'/);
    const unnamed = await runWeft(["amm", "stop"]);
    expect(unnamed).toEqual({
      code: 2,
      out: "",
      err: "weft amm stop: give the scheduler's address or --scheduler-file, neither was given\n",
    });
    const unreachable = await runWeft([
      "amm",
      "status",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "300ms",
    ]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.out).toBe("");
    expect(unreachable.err).toMatch(/^weft amm status: /m);
  });
});
