import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../client/testCluster.ts";
import { inc } from "../client/testTasks.ts";
import {
  joinedSchedulerDump,
  LOG_ENTRIES_PER_PART,
  TASKS_PER_PART,
} from "../protocol/clusterDump/schedulerParts.ts";
import { schedulerDumpDict } from "./dumpState.ts";

afterEach(closeTestClusters);

type Request = (op: string, fields?: Record<string, unknown>) => Promise<unknown>;

describe("dump-state", () => {
  it("is answered over several turns: a request made after it is answered first; the parts join into the dict", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const n = 2 * TASKS_PER_PART + 1;
    const futures = client.map(
      inc,
      Array.from({ length: n }, (_, i) => i),
    );
    await client.gather(futures);
    const s = cluster.scheduler.state;
    expect(s.log.toArray().length).toBeGreaterThan(LOG_ENTRIES_PER_PART);
    const conn = (client as unknown as { conn: { request: Request } }).conn;
    const answered: string[] = [];
    const dump = conn.request("dump-state", {}).then((reply) => {
      answered.push("dump-state");
      return reply;
    });
    const counters = conn.request("counters", {}).then(() => answered.push("counters"));
    const [reply] = await Promise.all([dump, counters]);
    // Answered in one turn, the scheduler served nothing else meanwhile: 40,000
    // tasks held stalled it for 1.4-2.2 s.
    expect(answered).toEqual(["counters", "dump-state"]);
    const joined = joinedSchedulerDump(reply);
    const whole = schedulerDumpDict(s, { address: cluster.scheduler.address, status: "running" });
    expect(Object.keys(joined.tasks as object)).toHaveLength(n);
    expect(joined).toEqual(whole);
  });

  it("a reply not in parts is refused", () => {
    expect(() => joinedSchedulerDump({ tasks: {} })).toThrow(
      "dump-state: the scheduler's reply is malformed",
    );
  });
});
