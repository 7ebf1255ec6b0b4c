/**
 * Scheduler regressions found by the cluster simulator (src/sim), rebuilt by
 * hand from the failing runs' stories; each is named after its seed.
 */

import { expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function computeOn(
  out: readonly SchedulerMessage[],
  key: string,
): { worker: string; runId: number } {
  const found = t.computeTasks(out).find((c) => c.msg.key === key);
  if (found === undefined) throw new Error(`no compute-task for ${key} in ${t.summarize(out)}`);
  return { worker: found.worker, runId: found.msg.runId };
}

/** Move `key` from `victim` to `thief` with a confirmed steal; returns the new run id. */
function steal(s: SchedulerState, key: string, victim: string, thief: string): number {
  s.handleStimulus(t.stealRequest(key, victim, thief, `steal-${key}-${victim}`));
  s.handleStimulus(t.stealResponse(victim, key, "ready", `steal-${key}-${victim}`));
  const task = s.tasks.get(key);
  expect(task?.processingOn?.address).toBe(thief);
  return task?.runId ?? -1;
}

test("seed 5537: a stale release does not free the input of a task just placed on its holder", () => {
  const s = new SchedulerState({ validate: true, allowedFailures: 0 });
  s.handleStimulus(t.registerWorker("tcp://a:1"), t.registerWorker("tcp://b:1"));
  let out = s.handleStimulus(
    t.updateGraph("c", { S: t.task(), K: t.task(["S"]), M: t.task(["S"]) }, ["K", "M"]),
  );
  const sAt = computeOn(out, "S");
  const x = sAt.worker;
  const y = x === "tcp://a:1" ? "tcp://b:1" : "tcp://a:1";
  out = s.handleStimulus(t.taskFinished(x, "S", sAt.runId));
  // K and M go next to their input; move both to the other worker.
  for (const key of ["K", "M"]) {
    const at = s.tasks.get(key)?.processingOn?.address;
    if (at !== y) steal(s, key, x, y);
  }
  const mRun = s.tasks.get("M")?.runId ?? -1;
  s.handleStimulus(t.taskFinished(y, "M", mRun));
  expect(s.tasks.get("M")?.state).toBe("memory");
  expect(s.tasks.get("K")?.state).toBe("processing");

  // y dies: K (running there) errs at once (allowedFailures 0), which made S
  // look unneeded; M, held only by y, is recomputed next to S, on x.
  out = s.handleStimulus(t.removeWorker(y));
  const toX = t.summarize(out).filter((m) => m.startsWith(x));
  expect(toX).toContain(`${x} compute-task M`);
  expect(toX).not.toContain(`${x} free-keys S`);
  expect(s.tasks.get("S")?.state).toBe("memory");
  expect(s.tasks.get("M")?.state).toBe("processing");
  s.validateState();
});

test("seed 6430: a task that errs on its way back to waiting leaves its inputs' waiters", () => {
  // B runs on y with inputs A (on x), C2 and C1 (only on y, C1 added last);
  // C1's input D erred after C1 was computed. When y dies, C1 is released and
  // errs (recommending B erred), then C2's release recommends B waiting: B
  // goes processing → released (keeping its place among its inputs' waiters)
  // → waiting, finds C1 erred and errs. It must leave A's waiters.
  const s = new SchedulerState({ validate: true });
  const x = "tcp://x:1";
  const y = "tcp://y:1";
  s.handleStimulus(t.registerWorker(x, 1, { S: 1 }), t.registerWorker(y, 1, { R: 1 }));
  const onX = { resources: { S: 1 } };
  const onY = { resources: { R: 1 } };
  let out = s.handleStimulus(
    t.updateGraph(
      "c",
      {
        A: t.task([], onX),
        D: t.task([], onX),
        C2: t.task([], onY),
        C1: t.task(["D"], onY),
        B: t.task(["A", "C1", "C2"], onY),
      },
      ["B", "D"],
    ),
  );
  const finish = (key: string): void => {
    const ts = s.tasks.get(key);
    const worker = ts?.processingOn?.address ?? "";
    out = s.handleStimulus(t.taskFinished(worker, key, ts?.runId ?? -1));
  };
  for (const key of ["A", "D", "C2", "C1"]) finish(key);
  expect(s.tasks.get("B")?.state).toBe("processing");
  // D is lost, recomputed, and errs; C1 keeps its result.
  s.handleStimulus(t.fromWorker(x, { op: "release-worker-data", key: "D" }));
  const d = s.tasks.get("D");
  expect(d?.state).toBe("processing");
  s.handleStimulus(t.taskErred(x, "D", d?.runId ?? -1));
  expect(s.tasks.get("D")?.state).toBe("erred");
  expect(s.tasks.get("C1")?.state).toBe("memory");

  s.handleStimulus(t.removeWorker(y));
  const b = s.tasks.get("B");
  expect(b?.state).toBe("erred");
  expect(b !== undefined && s.tasks.get("A")?.waiters.has(b)).toBe(false);
  // C2, lost with y, was sent back to waiting for B (then processing: it
  // went to no-worker, as no running worker supplies R), before B, still
  // processing, was its waiter. B erred instead of waiting: nothing needs C2
  // any more, and it must not stay in no-worker (asking adaptive scaling for
  // a worker) to be computed for nobody once one with R joins.
  expect(s.tasks.get("C2")?.state).toBe("released");
  out = s.handleStimulus(t.registerWorker("tcp://z:1", 1, { R: 1 }));
  expect(t.summarize(out)).toEqual([]);
  s.validateState();
});
