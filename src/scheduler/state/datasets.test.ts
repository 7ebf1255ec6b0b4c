import { describe, expect, test } from "vitest";
import type { DatasetMsg } from "../../protocol/messagesClient.ts";
import { InvalidStimulus } from "./errors.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function cluster(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
  return s;
}

function publish(clientId: string, name: string, keys: string[], override?: boolean) {
  return t.fromClient({
    op: "publish-dataset",
    name,
    keys,
    data: { keys },
    ...(override !== undefined ? { override } : {}),
    clientId,
  });
}

function get(clientId: string, name: string, submission?: number) {
  return t.fromClient({
    op: "get-dataset",
    name,
    clientId,
    ...(submission !== undefined ? { submission } : {}),
  });
}

function unpublish(clientId: string, name: string) {
  return t.fromClient({ op: "unpublish-dataset", name, clientId });
}

/** c1 computed a and b; both in memory. */
function withResults(): SchedulerState {
  const s = cluster();
  s.handleStimulus(t.updateGraph("c1", { a: t.task(), b: t.task() }, ["a", "b"]));
  for (const key of ["a", "b"]) {
    const ts = s.tasks.get(key);
    s.handleStimulus(t.taskFinished(ts?.processingOn?.address as string, key, ts?.runId as number));
  }
  return s;
}

describe("datasets", () => {
  test("a published key outlives its publisher; another client gets it, then its news", () => {
    const s = withResults();
    const out = s.handleStimulus(publish("c1", "ds", ["a"]));
    expect(out.map((m) => m.msg)).toMatchObject([{ op: "dataset-published", error: null }]);
    const left = s.handleStimulus(t.fromClient({ op: "close-client", clientId: "c1" }));
    // b goes; a stays for the dataset.
    expect(t.summarize(left)).toEqual(["w2 free-keys b"]);
    expect(s.tasks.get("a")?.state).toBe("memory");
    const got = s.handleStimulus(get("c2", "ds", 4));
    expect(t.summarize(got)).toEqual(["client:c2 dataset a", "client:c2 key-in-memory a"]);
    expect(got[0].msg).toMatchObject({
      found: true,
      keys: ["a"],
      data: { keys: ["a"] },
      submission: 4,
    } satisfies Partial<DatasetMsg>);
    expect(s.clients.get("c2")?.lastSubmission).toBe(4);
    s.validateState();
  });

  test("a name is taken unless overridden; the override lets go only the keys it drops", () => {
    const s = withResults();
    s.handleStimulus(publish("c1", "ds", ["a", "b"]));
    const taken = s.handleStimulus(publish("c1", "ds", ["a"]));
    expect(taken[0].msg).toMatchObject({ error: expect.stringMatching(/already exists/) });
    s.handleStimulus(t.releaseKeys("c1", ["a", "b"]));
    expect(s.tasks.get("a")?.state).toBe("memory");
    const over = s.handleStimulus(publish("c1", "ds", ["a"], true));
    expect(t.summarize(over).sort()).toEqual(["client:c1 dataset-published", "w2 free-keys b"]);
    expect(s.tasks.get("a")?.state).toBe("memory");
    expect(s.datasets.get("ds")?.keys).toEqual(["a"]);
    s.validateState();
  });

  test("unknown keys are refused, changing nothing", () => {
    const s = withResults();
    const out = s.handleStimulus(publish("c1", "ds", ["a", "zz"]));
    expect(out[0].msg).toMatchObject({ error: "unknown keys (released or cancelled): zz" });
    expect(s.datasets.size).toBe(0);
    expect(s.clients.has("published-ds")).toBe(false);
    s.validateState();
  });

  test("unpublishing lets the keys go; a second time says there was none", () => {
    const s = withResults();
    s.handleStimulus(publish("c1", "ds", ["a"]), t.releaseKeys("c1", ["a"]));
    const out = s.handleStimulus(unpublish("c2", "ds"));
    expect(t.summarize(out).sort()).toEqual(["client:c2 dataset-unpublished", "w1 free-keys a"]);
    expect(out.find((m) => m.msg.op === "dataset-unpublished")?.msg).toMatchObject({
      existed: true,
    });
    expect(s.clients.has("published-ds")).toBe(false);
    const again = s.handleStimulus(unpublish("c2", "ds"));
    expect(again[0].msg).toMatchObject({ existed: false });
    const missing = s.handleStimulus(get("c2", "ds"));
    expect(missing.map((m) => m.msg)).toMatchObject([{ op: "dataset", found: false, keys: [] }]);
    s.validateState();
  });

  test("a forced cancel takes the key from the dataset; a get then cancels it for the getter", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    s.handleStimulus(publish("c1", "ds", ["a"]));
    s.handleStimulus(t.cancelKeys("c1", ["a"], true));
    expect(s.tasks.has("a")).toBe(false);
    s.validateState();
    const got = s.handleStimulus(get("c2", "ds"));
    expect(t.summarize(got)).toEqual(["client:c2 dataset a", "client:c2 cancelled-keys a"]);
  });

  test("a dataset's keys are computed even if its publisher released them at once", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(publish("c1", "ds", ["b"]), t.releaseKeys("c1", ["b"]));
    expect(s.tasks.get("b")?.state).toBe("waiting");
    const a = s.tasks.get("a");
    s.handleStimulus(t.taskFinished(a?.processingOn?.address as string, "a", a?.runId as number));
    expect(s.tasks.get("b")?.state).toBe("processing");
    s.validateState();
  });

  test("malformed requests and the stand-in's id are refused", () => {
    const s = cluster();
    expect(() => s.handleStimulus(publish("c1", "", []))).toThrow(InvalidStimulus);
    expect(() =>
      s.handleStimulus(
        t.fromClient({ op: "publish-dataset", name: "x", keys: [1], data: null, clientId: "c" }),
      ),
    ).toThrow(/keys/);
    expect(() => s.handleStimulus(get("c1", "x", -1))).toThrow(/submission/);
    expect(() => s.handleStimulus(publish("published-x", "x", []))).toThrow(/reserved/);
  });
});
