import { describe, expect, test } from "vitest";
import { FIRE_AND_FORGET_CLIENT } from "./clientInfo.ts";
import { InvalidStimulus } from "./errors.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function cluster(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
  return s;
}

function fireAndForget(clientId: string, keys: readonly string[]) {
  return t.fromClient({ op: "fire-and-forget", keys, clientId });
}

function closeClient(clientId: string) {
  return t.fromClient({ op: "close-client", clientId });
}

describe("fire-and-forget", () => {
  test("the task runs to the end after its client left, then its result is let go", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(fireAndForget("c", ["b"]));
    const left = s.handleStimulus(closeClient("c"));
    expect(t.summarize(left)).toEqual([]); // nothing freed: b is still wanted
    expect(s.tasks.get("b")?.state).toBe("waiting");
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(s.tasks.get("b")?.state).toBe("processing");
    const done = s.handleStimulus(t.taskFinished("w1", "b", 2));
    // No one is told (the stand-in has no connection); both results are freed.
    expect(t.summarize(done)).toEqual(["w1 free-keys b,a"]);
    expect(s.tasks.size).toBe(0);
    expect(s.clients.get(FIRE_AND_FORGET_CLIENT)?.wantsWhat.size).toBe(0);
    s.validateState();
  });

  test("a key another client still wants stays in memory for it", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(fireAndForget("c", ["a"]));
    const done = s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(t.summarize(done)).toEqual(["client:c key-in-memory a"]);
    expect(s.tasks.get("a")?.state).toBe("memory");
    expect([...(s.tasks.get("a")?.whoWants ?? [])].map((cs) => cs.id)).toEqual(["c"]);
    s.handleStimulus(t.releaseKeys("c", ["a"]));
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("an erred task is let go too", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(fireAndForget("c", ["a"]), closeClient("c"));
    const out = s.handleStimulus(t.taskErred("w1", "a", 1));
    // Forgotten at once: the worker where it erred is told to free it.
    expect(t.summarize(out)).toEqual(["w1 free-keys a"]);
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("a task erred because a task it needs erred is let go too, with that task (Dask holds it)", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(fireAndForget("c", ["b"]), closeClient("c"));
    expect(s.tasks.get("b")?.state).toBe("waiting");
    s.handleStimulus(t.taskErred("w1", "a", 1));
    expect(s.tasks.size).toBe(0);
    expect(s.clients.get(FIRE_AND_FORGET_CLIENT)?.wantsWhat.size).toBe(0);
    s.validateState();
  });

  test("a worker lost while the task runs: it runs again elsewhere", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(fireAndForget("c", ["a"]), closeClient("c"));
    const first = s.tasks.get("a")?.processingOn?.address as string;
    s.handleStimulus(t.removeWorker(first));
    const other = first === "w1" ? "w2" : "w1";
    expect(s.tasks.get("a")?.processingOn?.address).toBe(other);
    s.handleStimulus(t.taskFinished(other, "a", 2));
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("keys already done or unknown are skipped", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    const on = (key: string) => s.tasks.get(key)?.processingOn?.address as string;
    const run = (key: string) => s.tasks.get(key)?.runId as number;
    s.handleStimulus(t.taskFinished(on("a"), "a", run("a")), t.taskErred(on("b"), "b", run("b")));
    expect([s.tasks.get("a")?.state, s.tasks.get("b")?.state]).toEqual(["memory", "erred"]);
    const out = s.handleStimulus(fireAndForget("c", ["a", "b", "zz"]));
    expect(t.summarize(out)).toEqual([]);
    expect(s.clients.has(FIRE_AND_FORGET_CLIENT)).toBe(false);
    s.handleStimulus(closeClient("c"));
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("its client's cancel leaves the task to the stand-in; a forced one cancels it", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    s.handleStimulus(fireAndForget("c", ["a", "b"]));
    const mine = s.handleStimulus(t.cancelKeys("c", ["a"], false));
    expect(t.summarize(mine)).toEqual(["client:c cancelled-keys a"]);
    expect(s.tasks.get("a")?.state).toBe("processing");
    const forced = s.handleStimulus(t.cancelKeys("c", ["b"], true));
    // The stand-in loses b, without being told.
    expect(t.summarize(forced).sort()).toEqual(["client:c cancelled-keys b", "w2 free-keys b"]);
    expect(s.tasks.has("b")).toBe(false);
    s.validateState();
  });

  test("no client may speak as the stand-in", () => {
    const s = cluster();
    expect(() => s.handleStimulus(closeClient(FIRE_AND_FORGET_CLIENT))).toThrow(InvalidStimulus);
    expect(() => s.handleStimulus(fireAndForget("c", "a" as unknown as string[]))).toThrow(/keys/);
  });
});
