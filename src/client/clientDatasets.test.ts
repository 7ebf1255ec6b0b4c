import { describe, expect, it } from "vitest";
import type { DatasetMsg } from "../protocol/messagesClient.ts";
import { ClientDatasets, type DatasetHost } from "./clientDatasets.ts";
import { encodeDataset } from "./datasets.ts";
import { Future, type FutureHost } from "./future.ts";
import { KeyRecord } from "./keyRecord.ts";

/**
 * A client for {@link ClientDatasets}: its records, what it sent the
 * scheduler, the answers handed to requests (taken by a request waiting
 * unless `waiting` is false), and the keys its futures let go of; what it
 * asks the scheduler, in `asked`, is answered with `reply(msg)`, and
 * `releases` is its count of `client-releases-keys` sent.
 */
function standIn(waiting = true) {
  const asked: Record<string, unknown>[] = [];
  const control = {
    releases: 0,
    reply: (_msg: Record<string, unknown>): unknown => ({}),
  };
  const records = new Map<string, KeyRecord>();
  const sent: { op: string; keys: readonly string[] }[] = [];
  const answers: unknown[] = [];
  const failures: Error[] = [];
  const dropped: string[] = [];
  const futureHost = {
    id: "client-1",
    addRef: (key: string) => {
      let rec = records.get(key);
      if (rec === undefined) records.set(key, (rec = new KeyRecord(key)));
      rec.refs++;
      return rec;
    },
    dropRef: (key: string) => {
      dropped.push(key);
    },
  } as unknown as FutureHost;
  const host = {
    id: "client-1",
    futureHost,
    requests: {
      ask: async (msg: Record<string, unknown>) => {
        asked.push(msg);
        return control.reply(msg);
      },
      stimulusId: (op: string) => `${op}-1`,
      answer: (_id: string, answer: unknown) => {
        answers.push(answer);
        return waiting;
      },
      fail: (_id: string, err: Error) => {
        failures.push(err);
        return waiting;
      },
    },
    record: (key: string) => records.get(key),
    releasesSent: () => control.releases,
    nextSubmission: () => 4,
    send: (msg: { op: string; keys: readonly string[] }) => sent.push(msg),
    checkOpen: () => {},
  } as unknown as DatasetHost;
  return { host, futureHost, records, sent, answers, failures, dropped, asked, control };
}

/** The `dataset` message of `value` (futures of `keys` made on `futureHost`). */
function datasetMsg(futureHost: FutureHost, keys: string[], submission?: number): DatasetMsg {
  const value = keys.map((k) => new Future(futureHost, k));
  const { data } = encodeDataset(value, () => {});
  for (const f of value) f.release();
  return {
    op: "dataset",
    name: "d",
    found: true,
    keys,
    data,
    stimulusId: "get-dataset-1",
    ...(submission !== undefined ? { submission } : {}),
  };
}

describe("ClientDatasets.receive", () => {
  it("answers with futures of the keys, naming fresh those the client held none of, taking the submission", () => {
    const c = standIn();
    const msg = datasetMsg(c.futureHost, ["x", "y"], 7);
    c.records.clear();
    new Future(c.futureHost, "x");
    new ClientDatasets(c.host).receive(msg);
    expect(c.answers).toHaveLength(1);
    const answer = c.answers[0] as { found: boolean; value: Future[]; fresh: string[] };
    expect(answer.found).toBe(true);
    expect(answer.value.map((f) => f.key)).toEqual(["x", "y"]);
    expect(answer.fresh).toEqual(["y"]);
    expect(c.records.get("x")?.submission).toBe(7);
    expect(c.records.get("y")?.submission).toBe(7);
  });

  it("wants a key anew that the client had cancelled", () => {
    const c = standIn();
    const msg = datasetMsg(c.futureHost, ["x"]);
    const rec = c.records.get("x") as KeyRecord;
    rec.status = "cancelled";
    new ClientDatasets(c.host).receive(msg);
    expect(rec.status).toBe("pending");
  });

  it("wants a key anew whose submission could not be sent", () => {
    const c = standIn();
    const msg = datasetMsg(c.futureHost, ["x"]);
    const rec = c.records.get("x") as KeyRecord;
    rec.status = "error";
    rec.unsent = true;
    new ClientDatasets(c.host).receive(msg);
    expect(rec.status).toBe("pending");
    expect(rec.unsent).toBe(false);
  });

  it("lets go of the futures when no request waits for the answer", () => {
    const c = standIn(false);
    const msg = datasetMsg(c.futureHost, ["x", "y"]);
    c.dropped.length = 0;
    new ClientDatasets(c.host).receive(msg);
    expect(c.dropped.sort()).toEqual(["x", "y"]);
  });

  it("fails the request on a malformed dataset, and lets the scheduler release the keys held by none", () => {
    const c = standIn();
    c.records.set("x", new KeyRecord("x"));
    const malformed: DatasetMsg = {
      op: "dataset",
      name: "d",
      found: true,
      keys: ["x", "y"],
      data: "not a dataset",
      stimulusId: "get-dataset-1",
    };
    new ClientDatasets(c.host).receive(malformed);
    expect(c.failures.map((e) => e.message)).toEqual([
      'getDataset: the scheduler sent a malformed dataset "d"',
    ]);
    expect(c.answers).toEqual([]);
    expect(c.sent.map(({ op, keys }) => ({ op, keys }))).toEqual([
      { op: "client-releases-keys", keys: ["y"] },
    ]);
    // One whose keys the client all holds: nothing to let go of, nothing sent.
    const datasets = new ClientDatasets(c.host);
    datasets.receive({ ...malformed, keys: ["x"] });
    expect(c.failures).toHaveLength(2);
    expect(c.sent).toHaveLength(1);
  });
});

describe("ClientDatasets.get", () => {
  it("asks as a submission, and wants the fresh keys again only if a release went out meanwhile", async () => {
    const c = standIn();
    const datasets = new ClientDatasets(c.host);
    c.control.reply = () => ({ op: "dataset", found: true, value: 1, fresh: ["y"] });
    await datasets.get("d");
    expect(c.asked).toMatchObject([{ op: "get-dataset", name: "d", submission: 4 }]);
    expect(c.sent).toEqual([]);
    c.control.reply = () => {
      c.control.releases++;
      return { op: "dataset", found: true, value: 1, fresh: ["y"] };
    };
    await datasets.get("d");
    expect(c.sent).toMatchObject([{ op: "client-desires-keys", keys: ["y"], submission: 4 }]);
  });

  it("held datasets ask nothing of a closed client", async () => {
    const c = standIn();
    const closed = {
      ...c.host,
      checkOpen: () => {
        throw new Error("the client is closed");
      },
    } as DatasetHost;
    const held = new ClientDatasets(closed).held;
    await expect(async () => held.publish("Variable.set", "v", [1])).rejects.toThrow("closed");
    await expect(held.get("v")).rejects.toThrow("closed");
    await expect(held.unpublish("v")).rejects.toThrow("closed");
    expect(c.asked).toEqual([]);
  });
});
