import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runWeft } from "../cli/testContext.ts";
import { dumpFileName } from "../protocol/clusterDump/write.ts";
import { loadDump, replayLoadedDump } from "../replay/replayDump.ts";
import { clusterStory, SCHEDULER } from "../replay/story.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { workerDumps } from "./clusterDump.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "weft-dump-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(closeTestClusters);

describe("dumpClusterState", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`writes a dump that weft replay replays exactly and weft story reads (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 2, protocol });
      // A tree of adds over 64 incs: transfers between the workers at every level.
      let layer = client.map(
        "inc",
        Array.from({ length: 64 }, (_, i) => i),
      );
      while (layer.length > 1) {
        const next = [];
        for (let i = 0; i < layer.length; i += 2)
          next.push(client.submit("add", layer[i], layer[i + 1]));
        layer = next;
      }
      const total = layer[0];
      expect(await total).toBe((64 * 65) / 2);
      for (const format of ["msgpack", "yaml"] as const) {
        const path = await client.dumpClusterState(join(dir, `${protocol}-dump`), { format });
        expect(path).toBe(
          join(dir, `${protocol}-dump.${format === "msgpack" ? "msgpack.gz" : "yaml"}`),
        );
        const dump = await loadDump(path);
        expect([...dump.workers.keys()].sort()).toEqual(
          cluster.workers.map((w) => w.address).sort(),
        );
        expect(dump.unavailableWorkers.size).toBe(0);
        expect(dump.scheduler.tasks.get(total.key)?.state).toBe("memory");
        const { report } = replayLoadedDump(dump);
        expect(report.ok).toBe(true);
        for (const w of report.workers) {
          expect(w.events.replayed).toBe(w.events.inLog);
          expect(w.transitionCounter).toMatchObject({ comparable: true, equal: true });
        }
        // The workers fetched inputs from each other: transfers are in the logs replayed.
        const fetched = [...dump.workers.values()].some((w) =>
          w.stimulusLog.some((ev) => ev.cls === "GatherDepSuccessEvent"),
        );
        expect(fetched).toBe(true);
        // The layout of docs/dump-format.md's "Dumps written by weft".
        const packages = { weft: expect.any(String), node: process.version };
        expect(dump.versions.scheduler).toMatchObject({ packages });
        for (const v of Object.values(dump.versions.workers)) expect(v).toMatchObject({ packages });
        expect(dump.versions.distributed).toBeNull();
        expect(dump.scheduler.raw).toMatchObject({
          id: null,
          task_groups: {},
          memory: {},
          events: {},
          extensions: {},
        });
        for (const w of dump.workers.values()) {
          expect(Object.keys(w.raw.state_parameters as object).sort()).toEqual([
            "address",
            "nthreads",
            "resources",
            "transfer_incoming_bytes_limit",
            "transfer_incoming_bytes_throttle_threshold",
            "transfer_incoming_count_limit",
            "transfer_message_bytes_limit",
            "transition_counter_max",
            "validate",
          ]);
          expect(w.raw).toMatchObject({
            config: { distributed: { worker: { memory: { transfer: false } } } },
            transfer_incoming_log: [],
            transfer_outgoing_log: [],
          });
        }
        const story = clusterStory(dump, [total.key]);
        const where = new Set(story.map((line) => line.where));
        expect(where.has(SCHEDULER)).toBe(true);
        expect([...where].some((w) => w !== SCHEDULER)).toBe(true);
      }
    });
  }

  it("names the file after the format and refuses bad arguments", async () => {
    expect(dumpFileName("d", "msgpack")).toBe("d.msgpack.gz");
    expect(dumpFileName("d.msgpack.gz", "msgpack")).toBe("d.msgpack.gz");
    expect(dumpFileName("d.yaml", "yaml")).toBe("d.yaml");
    expect(dumpFileName("d.yaml", "msgpack")).toBe("d.yaml.msgpack.gz");
    expect(dumpFileName("d.yaml.gz", "yaml")).toBe("d.yaml.gz");
    expect(dumpFileName("d.YML", "yaml")).toBe("d.YML");
    expect(dumpFileName("d.msgpack", "msgpack")).toBe("d.msgpack");
    expect(dumpFileName("d.msgpack", "yaml")).toBe("d.msgpack.yaml");
    const { client } = await testCluster({ workers: 1 });
    await expect(client.dumpClusterState("")).rejects.toThrow(
      /dumpClusterState: the file name must be a non-empty string/,
    );
    await expect(client.dumpClusterState("x", { format: "json" as never })).rejects.toThrow(
      /format must be "msgpack" or "yaml", got "json"/,
    );
  });

  it("refuses, before asking the cluster, a name it could not write where it points, as weft dump does", async () => {
    const { client } = await testCluster({ workers: 1 });
    const asked: string[] = [];
    const conn = (
      client as unknown as { conn: { request(op: string, ...rest: unknown[]): unknown } }
    ).conn;
    const request = conn.request.bind(conn);
    conn.request = (op, ...rest) => {
      asked.push(op);
      return request(op, ...rest);
    };
    // Each with the code of the file error a write there would fail with, and the path.
    await expect(client.dumpClusterState(join(dir, "no-such-dir", "d"))).rejects.toMatchObject({
      message: `dumpClusterState: ${join(dir, "no-such-dir", "d")}: no such directory: ${join(dir, "no-such-dir")}`,
      code: "ENOENT",
      path: join(dir, "no-such-dir", "d.msgpack.gz"),
    });
    // Not a hidden .msgpack.gz in it, nor DIR.msgpack.gz beside it.
    await expect(client.dumpClusterState(`${dir}/`)).rejects.toMatchObject({
      message: `dumpClusterState: ${dir}/: it names a directory (it ends with /)`,
      code: "EISDIR",
    });
    await expect(client.dumpClusterState(dir)).rejects.toMatchObject({
      message: `dumpClusterState: ${dir}: it is a directory`,
      code: "EISDIR",
    });
    expect(asked).not.toContain("dump-state");
  });

  it("writes a name with any dump extension of its format in that encoding, read back by it", async () => {
    const { client } = await testCluster({ workers: 1 });
    await client.submit("inc", 1);
    const named = [
      ["n.yaml.gz", "yaml", true],
      ["n.yml", "yaml", false],
      ["n.msgpack", "msgpack", false],
    ] as const;
    for (const [name, format, gzipped] of named) {
      const path = await client.dumpClusterState(join(dir, name), { format });
      expect(path).toBe(join(dir, name));
      const bytes = await readFile(path);
      expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(gzipped);
      expect((await loadDump(path)).workers.size).toBe(1);
    }
    // Without a format: gzipped msgpack, named so.
    const plain = await client.dumpClusterState(join(dir, "plain"));
    expect(plain).toBe(join(dir, "plain.msgpack.gz"));
    expect((await loadDump(plain)).workers.size).toBe(1);
  });

  it("weft dump writes the file and says how to read it", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    await client.submit("inc", 41);
    const out = join(dir, "cli");
    const r = await runWeft(["dump", cluster.address, "-o", out, "--format", "yaml"]);
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toContain(`${out}.yaml\n`);
    expect(r.out).toContain(`weft replay ${out}.yaml`);
    const replay = await runWeft(["replay", `${out}.yaml`]);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain("1 worker");
    const bad = await runWeft(["dump", cluster.address, "--format", "xml"]);
    expect(bad).toMatchObject({
      code: 2,
      err: 'weft dump: --format must be msgpack or yaml, got "xml"\n',
    });
  });
});

describe("workerDumps", () => {
  it("puts a worker's error, named, in place of its dump", async () => {
    const peers = {
      get: async (address: string) => {
        if (address === "tcp://b:2") throw new RangeError("no route");
        return { comm: {}, call: async () => ({ status: "running" }) };
      },
    } as unknown as PeerPool;
    expect(await workerDumps(peers, ["tcp://b:2", "tcp://a:1"], "client-1")).toEqual({
      "tcp://a:1": { status: "running" },
      "tcp://b:2": "RangeError: no route",
    });
  });
});
