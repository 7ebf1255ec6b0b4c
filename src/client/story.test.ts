import { afterEach, describe, expect, it } from "vitest";
import { runWeft } from "../cli/testContext.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { mergedStory, storiesOfWorkers, storyKeysProblem } from "./story.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

describe("story", () => {
  it("the scheduler and the workers answer a story of 200,000 keys", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const keys = Array.from({ length: 200_000 }, (_, i) => `k-${i}`);
    // Below Client.story, whose rest parameter could not take them either.
    const conn = (
      client as unknown as { conn: { request(op: "story", f: object): Promise<unknown> } }
    ).conn;
    await expect(conn.request("story", { keys })).resolves.toEqual([]);
    const rpc = await client.peers.get(cluster.workers[0].address);
    await expect(rpc.call("get_story", { keys })).resolves.toEqual([]);
  });

  it("merges the scheduler's and the workers' records of a key in time order", async () => {
    const { cluster, client } = await testCluster({ workers: 2, protocol: "tcp" });
    const xs = client.map("inc", [1, 2, 3, 4]);
    const total = client.submit("sum", xs);
    expect(await total).toBe(14);
    const story = await client.story(total.key);
    const where = new Set(story.map((r) => r.where));
    expect(where.has("scheduler")).toBe(true);
    const ran = story.find(
      (r) => r.where !== "scheduler" && r.record[0] === total.key && r.record[2] === "executing",
    );
    expect(ran).toBeDefined();
    expect(cluster.workers.map((w) => w.address)).toContain(ran?.where);
    const times = story.map((r) => r.time as number);
    expect(times.every((t) => typeof t === "number")).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The scheduler's records are Dask's tuples: key, start, finish, recommendations, stimulus id, time.
    const finished = story.find(
      (r) => r.where === "scheduler" && r.record[0] === total.key && r.record[2] === "memory",
    );
    expect(finished?.record[1]).toBe("processing");
    expect(typeof finished?.record[4]).toBe("string");
    // A stimulus id tells its own story.
    const byStimulus = await client.story(finished?.record[4] as string);
    expect(byStimulus.some((r) => r.record[0] === total.key)).toBe(true);
    expect(await client.story("no-such-key")).toEqual([]);
    await expect(client.story()).rejects.toThrow(/story: give at least one key/);
    await expect(client.story(1 as never)).rejects.toThrow(/keys must be non-empty strings/);
  });

  it("weft story KEY SCHEDULER tells it from a running cluster", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    const f = client.submit("inc", 1);
    await f;
    const r = await runWeft(["story", f.key, cluster.address]);
    expect(r).toMatchObject({ code: 0, err: "" });
    const lines = r.out.trimEnd().split("\n");
    expect(
      lines.some((l) => l.includes(" scheduler ") && l.includes("'processing', 'memory'")),
    ).toBe(true);
    expect(lines.some((l) => l.includes(cluster.workers[0].address))).toBe(true);
    const json = await runWeft(["story", f.key, cluster.address, "--json"]);
    expect(JSON.parse(json.out)[0]).toMatchObject({ source: "live" });
    const none = await runWeft(["story", "nothing", cluster.address]);
    expect(none).toMatchObject({
      code: 1,
      err: `weft story: no record of nothing in ${cluster.address}\n`,
    });
    const replay = await runWeft(["story", f.key, cluster.address, "--replay"]);
    expect(replay.code).toBe(2);
    expect(replay.err).toContain("--replay and --follow-log replay a dump");
  });
});

describe("story, apart from a cluster", () => {
  /** Workers that answer `get_story` with `answer`; what they were sent, in `sent`. */
  function answering(answer: unknown) {
    const sent: unknown[] = [];
    const peers = {
      get: async () => ({
        comm: { maxMessageBytes: 1000 },
        call: async (_method: string, args: unknown) => {
          sent.push(args);
          return answer;
        },
      }),
    } as unknown as PeerPool;
    return { peers, sent };
  }

  it("asks each worker with the client's limit, and refuses an answer that is not a list of records", async () => {
    const ok = answering([["k", "released", "waiting", 5]]);
    expect(await storiesOfWorkers(ok.peers, ["tcp://a:1"], ["k"], "client-1")).toEqual([
      { where: "tcp://a:1", time: 5, record: ["k", "released", "waiting", 5] },
    ]);
    expect(ok.sent).toEqual([{ keys: ["k"], who: "client-1", maxMessageBytes: 1000 }]);
    const odd = answering([["k"], "not a record"]);
    await expect(storiesOfWorkers(odd.peers, ["tcp://a:1"], ["k"], "client-1")).rejects.toThrow(
      "story: tcp://a:1 answered get_story with no records",
    );
  });

  it("merges in time order, a record without a time first; refuses a scheduler's answer of no records", () => {
    const worker = { where: "tcp://a:1", time: 2, record: ["k", 2] };
    expect(
      mergedStory(
        [
          ["k", 3],
          ["k", "no time"],
        ],
        [worker],
      ),
    ).toEqual([
      { where: "scheduler", time: null, record: ["k", "no time"] },
      worker,
      { where: "scheduler", time: 3, record: ["k", 3] },
    ]);
    expect(() => mergedStory({ records: [] }, [])).toThrow(
      "story: the scheduler answered with no records",
    );
  });

  it("keys must be non-empty strings", () => {
    expect(storyKeysProblem(["k", ""])).toBe('keys must be non-empty strings, got ""');
    expect(storyKeysProblem(["k"])).toBeNull();
  });
});
