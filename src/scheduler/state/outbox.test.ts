import { describe, expect, test } from "vitest";
import { ClientInfo } from "./clientInfo.ts";
import { Durations } from "./durations.ts";
import { Outbox } from "./outbox.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";
import { WorkerInfo } from "./workerInfo.ts";

const w1 = () => new WorkerInfo("w1", 1, {}, 0, 0, new Durations(0.5));
const w2 = () => new WorkerInfo("w2", 1, {}, 1, 0, new Durations(0.5));

describe("Outbox", () => {
  test("hands out the messages in order, once", () => {
    const box = new Outbox();
    const ws = w1();
    const cs = new ClientInfo("c");
    box.toWorker(ws, { op: "free-keys", keys: ["a"], stimulusId: "s" });
    box.toClient(cs, {
      op: "cancelled-keys",
      keys: ["x"],
      reason: "r",
      stimulusId: "s",
      submission: 0,
    });
    expect(t.summarize(box.take())).toEqual(["w1 free-keys a", "client:c cancelled-keys x"]);
    expect(box.take()).toEqual([]);
  });

  test("a free-keys joins the one just queued for the worker by the same stimulus", () => {
    const box = new Outbox();
    const [a, b] = [w1(), w2()];
    box.freeKeys(a, "x", "s1");
    box.freeKeys(b, "y", "s1");
    box.freeKeys(a, "z", "s1");
    box.freeKeys(b, "v", "s1");
    box.freeKeys(a, "u", "s2");
    expect(t.summarize(box.take())).toEqual([
      "w1 free-keys x,z",
      "w2 free-keys y,v",
      "w1 free-keys u",
    ]);
  });

  test("never across another message to that worker, so its order of messages holds", () => {
    const box = new Outbox();
    const ws = w1();
    box.freeKeys(ws, "x", "s");
    box.toWorker(ws, { op: "remove-replicas", keys: ["q"], stimulusId: "s" });
    box.freeKeys(ws, "y", "s");
    box.freeKeys(ws, "z", "s");
    expect(t.summarize(box.take())).toEqual([
      "w1 free-keys x",
      "w1 remove-replicas q",
      "w1 free-keys y,z",
    ]);
  });

  test("never into a message already handed out", () => {
    const box = new Outbox();
    const ws = w1();
    box.freeKeys(ws, "x", "s");
    const first = box.take();
    box.freeKeys(ws, "y", "s");
    expect(t.summarize(first)).toEqual(["w1 free-keys x"]);
    expect(t.summarize(box.take())).toEqual(["w1 free-keys y"]);
  });
});

describe("free-keys from the scheduler", () => {
  test("a finished task's released inputs go in one message; its dependent after", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { p: t.task(), q: t.task(), c: t.task(["p", "q"]), e: t.task(["c"]) }, [
        "e",
      ]),
    );
    s.handleStimulus(t.taskFinished("w1", "p", 1), t.taskFinished("w1", "q", 2));
    expect(t.summarize(s.handleStimulus(t.taskFinished("w1", "c", 3)))).toEqual([
      "w1 free-keys q,p",
      "w1 compute-task e",
    ]);
  });

  test("keys released by separate stimuli of one call stay separate messages", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1), t.taskFinished("w1", "b", 2));
    const out = s.handleStimulus(t.releaseKeys("c", ["a"]), t.releaseKeys("c", ["b"]));
    expect(t.summarize(out)).toEqual(["w1 free-keys a", "w1 free-keys b"]);
    const ids = out.map(({ msg }) => msg.stimulusId);
    expect(new Set(ids).size).toBe(2);
  });
});
