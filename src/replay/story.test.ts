import { beforeAll, describe, expect, it } from "vitest";
import type { ClusterDump } from "../protocol/clusterDump.ts";
import { formatStory, storyJson } from "./formatStory.ts";
import { comparableRecord } from "./records.ts";
import { loadDump, replayLoadedDump } from "./replayDump.ts";
import { clusterStory, SCHEDULER, schedulerStory } from "./story.ts";
import { sharedPath } from "./testPaths.ts";

let tree: ClusterDump;

beforeAll(async () => {
  tree = await loadDump(sharedPath("dumps", "tree.msgpack.gz"));
});

function inTimeOrder(times: (number | null)[]): boolean {
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) < (times[i - 1] ?? 0)) return false;
  return true;
}

describe("cluster stories", () => {
  it("tells a key's story across the scheduler and the workers, in time order", () => {
    const lines = clusterStory(tree, ["inc-41"]);
    const where = new Set(lines.map((l) => l.where));
    expect(where).toEqual(new Set([SCHEDULER, "tcp://127.0.0.1:42687", "tcp://127.0.0.1:33899"]));
    expect(inTimeOrder(lines.map((l) => l.time))).toBe(true);
    // Computed on one worker, fetched by the other.
    const texts = lines.map((l) => `${l.where} ${l.text}`);
    expect(texts).toContain(
      "tcp://127.0.0.1:42687 ('inc-41', 'compute-task', 'released', 'compute-task-1795992522.7055285')",
    );
    expect(
      texts.some((t) => t.startsWith("tcp://127.0.0.1:33899 ('inc-41', 'fetch', 'flight'")),
    ).toBe(true);
    expect(texts.some((t) => t.startsWith("scheduler ('inc-41', 'processing', 'memory'"))).toBe(
      true,
    );
    expect(lines.every((l) => l.source === "dump")).toBe(true);
  });

  it("tells a stimulus id's story, and several keys at once", () => {
    const sid = "gather-dep-success-1795992522.7214494";
    const lines = clusterStory(tree, [sid]);
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.every((l) => l.record.includes(sid))).toBe(true);
    const both = clusterStory(tree, ["inc-41", "add-4-0"]);
    expect(both.length).toBeGreaterThan(clusterStory(tree, ["inc-41"]).length);
  });

  it("uses the replayed workers' logs with a replay", () => {
    const { states } = replayLoadedDump(tree, { followLog: true });
    const dumped = clusterStory(tree, ["inc-41"]);
    const replayed = clusterStory(tree, ["inc-41"], { replayed: states });
    const workerLines = (ls: typeof dumped, source: string) =>
      ls.filter((l) => l.where !== SCHEDULER && l.source === source);
    // The Worker's own records (request-dep, receive-dep) are not the state machine's.
    const stateMachineOnly = workerLines(dumped, "dump").filter(
      (l) => !["request-dep", "receive-dep"].includes(String(l.record[0])),
    );
    // Sets (gather keys) print in their own order: compare the records reduced.
    const reduced = (ls: typeof dumped) =>
      ls.map((l) => comparableRecord([...l.record, l.time]).canonical);
    expect(reduced(workerLines(replayed, "replay"))).toEqual(reduced(stateMachineOnly));
    expect(inTimeOrder(replayed.map((l) => l.time))).toBe(true);
  });

  it("shows a scheduler record that does not end with a time whole", () => {
    const sid = "update-graph-1";
    const dump: ClusterDump = {
      ...tree,
      scheduler: {
        ...tree.scheduler,
        transitionLog: [
          ["x", "released", "waiting", { x: "processing" }, sid],
          ["x", "released"],
          ["x", "waiting", "processing", {}, sid, 5.5],
        ],
      },
    };
    const lines = clusterStory(dump, ["x"]);
    expect(lines.map((l) => [l.time, l.text])).toEqual([
      [null, `('x', 'released', 'waiting', {'x': 'processing'}, '${sid}')`],
      [null, "('x', 'released')"],
      [5.5, `('x', 'waiting', 'processing', {}, '${sid}')`],
    ]);
  });

  it("renders an integer beyond 2**53 in a record as JSON", () => {
    const dump: ClusterDump = {
      ...tree,
      scheduler: {
        ...tree.scheduler,
        transitionLog: [["x", "released", "waiting", { x: 2n ** 60n }, "s", 5.5]],
      },
    };
    const json = JSON.stringify(storyJson(clusterStory(dump, ["x"])));
    expect(JSON.parse(json)[0].record[3]).toEqual({ x: "1152921504606846976" });
  });

  it("finds a scheduler record by its key, a recommendation or its stimulus id", () => {
    const log = [
      ["x", "released", "waiting", { y: "processing" }, "s1", 1],
      ["z", "waiting", "processing", {}, "s2", 2],
      ["w", "processing", "memory", {}, "s3", 3],
    ];
    const keys = (wanted: string[]) => schedulerStory(new Set(wanted), log).map((t) => t[0]);
    expect(keys(["x"])).toEqual(["x"]);
    expect(keys(["y"])).toEqual(["x"]);
    expect(keys(["s2"])).toEqual(["z"]);
    expect(keys(["processing", "memory", "nothing"])).toEqual([]);
  });

  it("aligns the places of the records", () => {
    const at = (where: string, text: string) =>
      ({ time: 1, where, source: "dump", record: [], text }) as const;
    expect(
      formatStory([at("scheduler", "(a)"), at("tcp://10.0.0.1:1", "(b)")]).split("\n"),
    ).toEqual([
      "1970-01-01T00:00:01.000000Z  scheduler          (a)",
      "1970-01-01T00:00:01.000000Z  tcp://10.0.0.1:1   (b)",
    ]);
    expect(storyJson([{ ...at("scheduler", "(a)"), source: "replay" }])).toEqual([
      { time: 1, where: "scheduler", source: "replay", record: [] },
    ]);
  });

  it("renders text and JSON", () => {
    const lines = clusterStory(tree, ["inc-41"]);
    const text = formatStory(lines).split("\n");
    expect(text).toHaveLength(lines.length);
    expect(text[0]).toMatch(/^2026-11-29T22:48:42\.\d{6}Z {2}scheduler /);
    const json = storyJson(lines) as { where: string; record: unknown[] }[];
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(clusterStory(tree, ["no-such-key"])).toEqual([]);
  });
});
