import { describe, expect, test } from "vitest";
import { BoundedDeque } from "../../util/boundedDeque.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";
import { StimulusLog, TransitionLog } from "./transitionLog.ts";

describe("the flat logs keep what a bounded deque keeps", () => {
  for (const maxlen of [0, 1, 5, 255, 256, 257, 1023, 1024, 1025, 3000]) {
    test(`maxlen ${maxlen}`, () => {
      for (const n of [0, 1, 3, 256, 257, 513, 1024, 1025, 2049, 7000]) {
        const deque = new BoundedDeque<string>(maxlen);
        const log = new TransitionLog(maxlen);
        const stimuli = new StimulusLog(maxlen);
        for (let i = 0; i < n; i++) {
          deque.push(`k${i}`);
          log.push(`k${i}`, "released", "waiting", [`d${i}`, "waiting"], `s${i}`, i + 0.5);
          stimuli.push(`s${i}`, "worker-message", "task-finished", "w1", `k${i}`, i);
        }
        const want = deque.toArray();
        expect(log.length).toBe(want.length);
        expect(log.toArray().map((e) => e[0])).toEqual(want);
        expect([...log].map((e) => e[3][0])).toEqual(want.map((k) => `d${k.slice(1)}`));
        // Times live in their own column: each record keeps its own.
        expect(log.toArray().map((e) => e[5])).toEqual(want.map((k) => Number(k.slice(1)) + 0.5));
        expect([...stimuli].map((r) => r.key)).toEqual(want);
        expect(stimuli.toArray().at(-1)).toEqual(
          n === 0 || maxlen === 0
            ? undefined
            : {
                stimulusId: `s${n - 1}`,
                kind: "worker-message",
                op: "task-finished",
                origin: "w1",
                key: `k${n - 1}`,
                time: n - 1,
              },
        );
      }
    });
  }
});

describe("recommendations made outside a transition", () => {
  test("are not kept from one stimulus to the next", () => {
    // One slot: the update-graph handler recommends the new tasks, and every
    // task-finished makes the queue recommend the next one, outside any transition.
    const s = new SchedulerState({ validate: true, workerSaturation: 1 });
    s.handleStimulus(t.registerWorker("w1"));
    const pending = () => (s as unknown as { curRecs: readonly string[] | null }).curRecs;
    for (let round = 0; round < 3; round++) {
      const keys = [`a${round}`, `b${round}`, `c${round}`];
      const tasks = Object.fromEntries(keys.map((k) => [k, t.task()]));
      s.handleStimulus(t.updateGraph("c", tasks, keys));
      expect(pending()).toBeNull();
      for (let running = s.workers.get("w1")?.processing.keys().next().value; running; ) {
        s.handleStimulus(t.taskFinished("w1", running.key, running.runId, 8));
        expect(pending()).toBeNull();
        running = s.workers.get("w1")?.processing.keys().next().value;
      }
      expect(keys.map((k) => s.tasks.get(k)?.state)).toEqual(["memory", "memory", "memory"]);
      s.handleStimulus(t.releaseKeys("c", keys));
      expect(pending()).toBeNull();
    }
  });
});
