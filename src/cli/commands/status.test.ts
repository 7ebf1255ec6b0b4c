import { afterEach, describe, expect, it, vi } from "vitest";
import {
  closeTestClusters,
  eventually,
  extraWorker,
  testCluster,
} from "../../client/testCluster.ts";
import { bytes, counter, inc, slowInc } from "../../client/testTasks.ts";
import { answerUnresolvedAtOnce } from "../../comm/testUnresolvedHost.ts";
import { refusingAddress, runWeft, testContext } from "../testContext.ts";
import { main } from "../weft.ts";
import { clusterStatus, formatStatus } from "./statusAction.ts";

afterEach(closeTestClusters);

describe("weft status", () => {
  it("counts one worker and one thread in the singular; a nanny column says which have one", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const r = await runWeft(["status", cluster.address]);
    expect(r.out.split("\n")[0]).toMatch(/: 1 worker \(1 thread\), /);
    const status = await clusterStatus(client);
    const [w] = status.workers;
    const mixed = formatStatus({
      ...status,
      workers: [
        { ...w, address: "tcp://10.0.0.1:1", nanny: true },
        { ...w, address: "tcp://10.0.0.2:1", nanny: false },
      ],
    }).split("\n");
    expect(mixed[1]).toMatch(/ nanny /);
    expect(mixed[2]).toMatch(/^tcp:\/\/10\.0\.0\.1:1 .* yes /);
    expect(mixed[3]).toMatch(/^tcp:\/\/10\.0\.0\.2:1 .* no /);
  });

  it("prints the workers, the counters and the datasets; --json the same as JSON", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(inc, 1);
    await f;
    await client.publishDataset("results", [f]);
    const r = await runWeft(["status", cluster.address]);
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe(`scheduler ${cluster.address}: 2 workers (2 threads), 1 other client`);
    // A LocalCluster's workers have names ("0", "1") and a nanny: the cluster.
    expect(lines[1]).toMatch(/^worker +name +threads +status +nanny +processing +keys +bytes$/);
    const holder = cluster.scheduler.state.tasks.get(f.key)?.whoHas.values().next().value;
    const row = lines.find((l) => l.startsWith(holder?.address ?? "?"));
    expect(row).toMatch(/ +[01] +1 +running +yes +0 +1 +\d+ B$/);
    expect(lines).toContain('datasets: "results"');
    expect(lines.at(-2)).toMatch(
      /^tasks: 1 known, 1 done \(0 by erring\); reports: 1 finished, 0 erred;/,
    );
    const json = await runWeft(["status", cluster.address, "--json"]);
    const status = JSON.parse(json.out);
    expect(status.workers).toHaveLength(2);
    expect(status.datasets).toEqual(["results"]);
    expect(status.counters).toMatchObject({ tasks: 1, workers: 2, clients: 2 });
  });

  it("says how many of the tasks done erred, a dependent of an erred task included", async () => {
    const { cluster, client } = await testCluster();
    // b errs as its input a did; c is computed.
    const futures = client.compute(
      { a: ["boom", "no"], b: ["inc", "a"], c: ["inc", 1] },
      { keys: ["b", "c"] },
    );
    await expect(futures.b).rejects.toThrow("no");
    expect(await futures.c).toBe(2);
    const r = await runWeft(["status", cluster.address]);
    expect(r.out).toMatch(
      /^tasks: 3 known, 3 done \(2 by erring\); reports: 1 finished, 1 erred;/m,
    );
    // From a scheduler before the counter: the count alone, as before.
    const { tasksDoneErred: _, ...older } = (await clusterStatus(client)).counters;
    const status = { ...(await clusterStatus(client)), counters: older };
    expect(formatStatus(status)).toMatch(/^tasks: 3 known, 3 done; reports:/m);
  });

  it("shows the workers' names, when some worker has one", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const named = await extraWorker(cluster, { name: "gpu-0" });
    const nameless = await extraWorker(cluster);
    try {
      const r = await runWeft(["status", cluster.address]);
      const lines = r.out.split("\n");
      expect(lines[1]).toMatch(/^worker +name +threads +status /);
      expect(lines.find((l) => l.startsWith(named.address))).toMatch(/^\S+ +gpu-0 +\d+ +running /);
      expect(lines.find((l) => l.startsWith(cluster.workers[0].address))).toMatch(
        /^\S+ +0 +1 +running /,
      );
      expect(lines.find((l) => l.startsWith(nameless.address))).toMatch(/^\S+ +- +\d+ +running /);
    } finally {
      await named.close();
      await nameless.close();
    }
  });

  it("shows the resources each worker has, when some worker has one", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const gpu = await extraWorker(cluster, { resources: { GPU: 2, MEM: 8e9 } });
    try {
      const r = await runWeft(["status", cluster.address]);
      const lines = r.out.split("\n");
      // It was not shown: which workers run tasks restricted to GPU could not be told.
      expect(lines[1]).toMatch(/^worker +name +threads +resources +status /);
      expect(lines.find((l) => l.startsWith(gpu.address))).toMatch(
        /^\S+ +- +\d+ +GPU=2,MEM=8000000000 +running /,
      );
      expect(lines.find((l) => l.startsWith(cluster.workers[0].address))).toMatch(
        /^\S+ +0 +1 +- +running /,
      );
    } finally {
      await gpu.close();
    }
  });

  it("shows the actors each worker holds, when some worker holds one", async () => {
    const { cluster, client } = await testCluster();
    const handle = await client.submitWith({ actor: true }, counter).result();
    const r = await runWeft(["status", cluster.address]);
    const lines = r.out.split("\n");
    expect(lines[1]).toMatch(/ bytes +actors$/);
    expect(lines.find((l) => l.startsWith(handle.address))).toMatch(/ 1$/);
    expect(lines.find((l) => l.startsWith("inproc") && !l.startsWith(handle.address))).toMatch(
      / 0$/,
    );
  });

  it("shows what workers with a memory limit spilled, as their heartbeats said", async () => {
    const { cluster, client } = await testCluster({ worker: { memoryLimit: 4000 } });
    const parts = Array.from({ length: 10 }, (_, i) => client.submit(bytes, 1000 + i));
    await client.gather(parts);
    await eventually(
      () => [...cluster.scheduler.state.workers.values()].some((ws) => (ws.spilled?.keys ?? 0) > 0),
      5000,
      "a heartbeat telling of spilled values",
    );
    await eventually(
      () => [...cluster.scheduler.state.workers.values()].every((ws) => ws.memory !== null),
      5000,
      "heartbeats telling of the memory measured",
    );
    const r = await runWeft(["status", cluster.address]);
    expect(r.out.split("\n")[1]).toMatch(/ bytes +memory +limit +spilled$/);
    // The memory its monitor measured (the values held), within 60% of the limit.
    expect(r.out.split("\n")[2]).toMatch(/ \d+(\.\d+)? (B|kiB) +3\.91 kiB +\d+(\.\d+)? kiB$/);
    expect(r.out).toMatch(/ \d+(\.\d+)? kiB$/m);
    const json = JSON.parse((await runWeft(["status", cluster.address, "--json"])).out);
    const spilled = json.workers.reduce(
      (n: number, w: { spilled: { keys: number } }) => n + w.spilled.keys,
      0,
    );
    expect(spilled).toBeGreaterThan(0);
    for (const w of json.workers) expect(w.memory).toBeLessThanOrEqual(0.6 * 4000);
  });

  it("says why it cannot reach a scheduler (exit 2)", async () => {
    const r = await runWeft(["status", "tcp://127.0.0.1:1", "--connect-timeout", "500ms"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft status: connection to tcp:\/\/127\.0\.0\.1:1 refused/m);
    const bad = await runWeft(["status", "tcp://127.0.0.1:1", "--connect-timeout", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      "--connect-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0",
    );
  });

  it("says at once on stderr that it waits for a scheduler that refuses connections, and for how long", async () => {
    const address = await refusingAddress();
    const ctx = testContext();
    const status = main(
      ["node", "weft", "status", address, "--json", "--connect-timeout", "2500"],
      ctx,
    );
    // Said once the command's modules are loaded: not a fixed time on a loaded host.
    await vi.waitFor(() => expect(ctx.stderr.text).not.toBe(""), { timeout: 10_000, interval: 20 });
    expect(ctx.stderr.text).toBe(
      `weft status: waiting for the scheduler at ${address} (refused); giving up after 2.5 s\n`,
    );
    expect(await status).toBe(2);
    const lines = ctx.stderr.text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /^weft status: connection to .* refused.*: still refused after 2500 ms$/,
    );
    expect(ctx.stdout.text).toBe("");
  });

  it("waits for a scheduler whose host name does not resolve (yet), saying why, and fails at the end naming it", async ({
    onTestFinished,
  }) => {
    // The resolver's own error, but at once: its timing (over 400 ms on a loaded host)
    // is not what is tested, and a first lookup outlasting the 600 ms fails otherwise.
    onTestFinished(await answerUnresolvedAtOnce("no-such-host.invalid"));
    const ctx = testContext();
    const started = Date.now();
    const code = await main(
      ["node", "weft", "status", "tcp://no-such-host.invalid:8786", "--connect-timeout", "600ms"],
      ctx,
    );
    expect(code).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    const lines = ctx.stderr.text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^weft status: waiting for the scheduler at tcp:\/\/no-such-host\.invalid:8786 \(getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\); giving up after 0\.6 s$/,
    );
    expect(lines[1]).toMatch(
      /^weft status: connection to tcp:\/\/no-such-host\.invalid:8786 failed: getaddrinfo .*: still failing after 600 ms$/,
    );
  });
});

describe("weft retire", () => {
  it("retires the workers named, or --n the scheduler picks; exit 1 if one is not", async () => {
    const { cluster } = await testCluster({ workers: 3 });
    const [first] = cluster.workers;
    const named = await runWeft(["retire", cluster.address, first.address]);
    expect(named).toEqual({ code: 0, out: `retired ${first.address}\n`, err: "" });
    await eventually(() => first.status === "closed", 5000, "the retired worker closed");
    const n = await runWeft(["retire", cluster.address, "--n", "1", "--json"]);
    expect(n.code).toBe(0);
    expect(JSON.parse(n.out)).toMatchObject({ retired: [expect.any(String)], failed: [] });
    expect(cluster.scheduler.state.workers.size).toBe(1);
    const unknown = await runWeft(["retire", cluster.address, "tcp://10.9.9.9:1"]);
    expect(unknown.code).toBe(1);
    expect(unknown.out).toBe("not retired tcp://10.9.9.9:1: no connected worker matches it\n");
    // The one worker left holds nothing and runs nothing: it can be spared.
    const idle = await runWeft(["retire", cluster.address, "--idle"]);
    expect(idle).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^retired tcp:|^retired inproc:/),
    });
    expect(cluster.scheduler.state.workers.size).toBe(0);
    // None left to spare: said so, still exit 0 (as Dask's retire_workers returns nothing).
    const nothing = await runWeft(["retire", cluster.address, "--n", "2"]);
    expect(nothing).toEqual({
      code: 0,
      out: "no worker retired: the scheduler found none it could spare\n",
      err: "",
    });
  });

  it("--n picks busy workers too, those running fewest tasks first, as its --help says", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const busy = [1, 2, 3].map((x) => client.submit(slowInc, x, 60_000));
    await eventually(
      () => [...cluster.scheduler.state.workers.values()].every((ws) => ws.processing.size > 0),
      5000,
      "both workers run a task",
    );
    // Ties go to fewer bytes (none held here), then the lower address.
    const [fewer] = [...cluster.scheduler.state.workers.values()].sort(
      (a, b) => a.processing.size - b.processing.size || (a.address < b.address ? -1 : 1),
    );
    const n = await runWeft(["retire", cluster.address, "--n", "1"]);
    expect(n).toEqual({ code: 0, out: `retired ${fewer.address}\n`, err: "" });
    for (const f of busy) f.release();
    const help = await runWeft(["retire", "--help"]);
    expect(help.out.replace(/\s+/g, " ")).toContain(
      "--n <n> retire this many workers, picked by the scheduler: those running fewest tasks",
    );
  });

  it("refuses bad usage (exit 2)", async () => {
    const none = await runWeft(["retire", "tcp://127.0.0.1:1"]);
    expect(none).toMatchObject({ code: 2, err: expect.stringContaining("or give --n") });
    const both = await runWeft(["retire", "tcp://127.0.0.1:1", "w", "--n", "1"]);
    expect(both.err).toContain("give workers, --n or --idle, only one of them");
    const idleToo = await runWeft(["retire", "tcp://127.0.0.1:1", "--n", "1", "--idle"]);
    expect(idleToo).toMatchObject({ code: 2, err: expect.stringContaining("only one of them") });
    const zero = await runWeft(["retire", "tcp://127.0.0.1:1", "--n", "0"]);
    expect(zero).toMatchObject({ code: 2, err: expect.stringContaining("--n must be a positive") });
    // Not exact in a double: read as 1e20, it was refused by the client, as exit 1.
    const huge = await runWeft(["retire", "tcp://127.0.0.1:1", "--n", "99999999999999999999"]);
    expect(huge).toMatchObject({
      code: 2,
      err: "weft retire: --n must be at most 9007199254740991 (Number.MAX_SAFE_INTEGER), got 99999999999999999999\n",
    });
    for (const command of ["retire", "restart"]) {
      const empty = await runWeft([command, "tcp://127.0.0.1:1", "w", ""]);
      expect(empty).toMatchObject({
        code: 2,
        err: expect.stringMatching(
          new RegExp(`^weft ${command}: an empty worker selector names no worker`),
        ),
      });
    }
  });

  it("takes a worker's host:port without its scheme, as the scheduler's address is taken", async () => {
    const { cluster } = await testCluster({ workers: 2, protocol: "tcp" });
    const [first] = cluster.workers;
    const hostPort = first.address.replace(/^tcp:\/\//, "");
    const r = await runWeft(["retire", cluster.address, hostPort]);
    expect(r).toEqual({ code: 0, out: `retired ${first.address}\n`, err: "" });
  });
});
