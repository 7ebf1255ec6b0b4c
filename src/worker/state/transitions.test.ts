/**
 * One test for every entry of the transition table: each drives a fresh WorkerState
 * into the start state with real events, triggers the event that leads to the finish
 * state, and checks the log record of the transition, the instructions and the state.
 */
import { describe, expect, it } from "vitest";
import { AssertionError, PyTypeError } from "../../util/pyErrors.ts";
import { TaskError } from "./errorMessage.ts";
import {
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "./events.ts";
import {
  AddKeysMsg,
  Execute,
  type Instruction,
  LongRunningMsg,
  ReleaseWorkerDataMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  RetryBusyWorkerLater,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
} from "./instructions.ts";
import type { TaskStateState } from "./taskState.ts";
import {
  ADDR,
  acquire,
  compute,
  expectSubsequence,
  FailingStore,
  failure,
  free,
  gatherDep,
  gathered,
  isTransitionRecord,
  networkFailure,
  newWs,
  secede,
  story,
  success,
  W2,
  W3,
} from "./testing.ts";
import { lookupTransition, TRANSITIONS_TABLE } from "./transitions.ts";
import type { WorkerState } from "./workerState.ts";

interface Case {
  pair: readonly [TaskStateState, TaskStateState];
  /** The task that makes the transition. */
  key: string;
  ws?: () => WorkerState;
  /** Drive the task into the start state. */
  setup: (ws: WorkerState) => void;
  /**
   * The task reaches the start state only inside the trigger's chain of transitions
   * (or is created by the trigger), so the start state can't be checked beforehand.
   */
  chain?: true;
  trigger: (ws: WorkerState) => Instruction[];
  check: (ws: WorkerState, instructions: Instruction[]) => void;
}

/** x executing, then cancelled by free-keys (s1, s2). */
const cancelledExecuting = (ws: WorkerState) => {
  ws.handleStimulus(compute("x", "s1"), free(["x"], "s2"));
};
/** x executing, cancelled, then resumed to fetch as a dependency of y held by W2 (s1..s3). */
const resumedFromExecuting = (ws: WorkerState) => {
  ws.handleStimulus(
    compute("x", "s1"),
    free(["x"], "s2"),
    compute("y", "s3", { whoHas: { x: [W2] } }),
  );
};
/** y waiting for x, in flight from W2 (s1). */
const flightForY = (ws: WorkerState) => {
  ws.handleStimulus(compute("y", "s1", { whoHas: { x: [W2] } }));
};
/** y waiting for x, which went missing when W2 failed during the transfer (s1, s2). */
const missingForY = (ws: WorkerState) => {
  ws.handleStimulus(
    compute("y", "s1", { whoHas: { x: [W2] } }),
    new GatherDepNetworkFailureEvent({ worker: W2, totalNbytes: 1, stimulusId: "s2" }),
  );
};
/** x executing and y (same priority) ready behind it on the only thread (s1, s2). */
const readyBehindX = (ws: WorkerState) => {
  ws.handleStimulus(compute("x", "s1"), compute("y", "s2"));
};
/** x executing with {R: 1}, y constrained behind it (s1, s2); the worker has R=1. */
const constrainedBehindX = (ws: WorkerState) => {
  ws.handleStimulus(
    compute("x", "s1", { resourceRestrictions: { R: 1 } }),
    compute("y", "s2", { resourceRestrictions: { R: 1 } }),
  );
};
const withR = () => newWs({ resources: { R: 1 } });

/**
 * Call a transition of the table directly, for an entry no event sequence reaches.
 * Only for transitions that leave the state as it is (so that the task counter, which
 * handleStimulus keeps, stays right).
 */
function directTransition(
  ws: WorkerState,
  key: string,
  finish: Parameters<WorkerState["transition"]>[1],
  stimulusId: string,
): Instruction[] {
  const out: Instruction[] = [];
  const ts = ws.task(key);
  const start = ts.state;
  const recs = ws.transition(ts, finish, stimulusId, out);
  expect(recs === null || recs.size === 0).toBe(true);
  expect(ts.state).toBe(start);
  return out;
}

const CASES: Case[] = [
  // ------------------------------------------------------------------ cancelled
  {
    pair: ["cancelled", "error"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(failure("x", "s3")),
    check: (ws, instructions) => {
      // The scheduler already forgot the task: no task-erred.
      expect(instructions).toEqual([]);
      expect(ws.tasks.has("x")).toBe(false);
      expect(story(ws, "s3")).toEqual([
        ["x", "cancelled", "error", "released", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  {
    pair: ["cancelled", "fetch"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(compute("y", "s3", { whoHas: { x: [W2] } })),
    check: (ws, instructions) => {
      // x is still running: no need to fetch it, its result will do.
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous, x.next]).toEqual(["resumed", "executing", "fetch"]);
      expect(ws.executing.has(x)).toBe(true);
      expect(ws.task("y").state).toBe("waiting");
      expect(ws.fetchCount).toBe(0);
    },
  },
  {
    pair: ["cancelled", "long-running"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(secede("x", "s3")),
    check: (ws, instructions) => {
      // No LongRunningMsg: for the scheduler, x doesn't run here.
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["cancelled", "long-running"]);
      expect(ws.executing.has(x)).toBe(false);
      expect(ws.longRunning.has(x)).toBe(true);
    },
  },
  {
    pair: ["cancelled", "memory"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(success("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.has("x")).toBe(false);
      expect(ws.data.has("x")).toBe(false);
      expect(ws.nbytes).toBe(0);
      expect(story(ws, "s3")).toEqual([
        ["x", "cancelled", "memory", "released", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  {
    // No event recommends missing to a cancelled task (nor to an executing,
    // long-running or resumed one, whose path to missing goes through cancelled):
    // missing is recommended only to tasks in fetch (RemoveWorkerEvent,
    // GatherDepNetworkFailureEvent, RefreshWhoHasEvent) and, by the transitions to
    // fetch, to tasks in released or flight; and the fallback through released never
    // carries a recommendation other than forgotten. The entry is called directly: a
    // no-op while the execution is not done.
    pair: ["cancelled", "missing"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => directTransition(ws, "x", "missing", "s3"),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["cancelled", "executing"]);
      expect(ws.missingDepFlight.size).toBe(0);
      expect(story(ws, "s3")).toEqual([["x", "cancelled", "missing", "cancelled", {}]]);
    },
  },
  {
    pair: ["cancelled", "released"],
    key: "x",
    setup: (ws) => {
      flightForY(ws);
      ws.handleStimulus(free(["y"], "s2"));
    },
    // W2 answers without the key: the cancelled transfer is over, forget x.
    trigger: (ws) => ws.handleStimulus(gathered(W2, {}, "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.size).toBe(0);
      expect(ws.inFlightTasks.size).toBe(0);
      expect(story(ws, "s3")).toEqual([
        ["x", "missing-dep"],
        ["x", "cancelled", "fetch", "cancelled", { x: "released" }],
        ["x", "cancelled", "released", "released", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  {
    pair: ["cancelled", "rescheduled"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(new RescheduleEvent({ key: "x", stimulusId: "s3" })),
    check: (ws, instructions) => {
      // No RescheduleMsg for a task the scheduler already released.
      expect(instructions).toEqual([]);
      expect(ws.tasks.has("x")).toBe(false);
      expect(story(ws, "s3")[0]).toEqual([
        "x",
        "cancelled",
        "rescheduled",
        "released",
        { x: "forgotten" },
      ]);
    },
  },
  {
    pair: ["cancelled", "waiting"],
    key: "x",
    setup: cancelledExecuting,
    trigger: (ws) => ws.handleStimulus(compute("x", "s3")),
    check: (ws, instructions) => {
      // Still running: no second Execute.
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["executing", null]);
      expect(story(ws, "s3")).toEqual([
        ["x", "compute-task", "cancelled"],
        ["x", "cancelled", "waiting", "executing", {}],
      ]);
    },
  },
  // -------------------------------------------------------------------- resumed
  {
    pair: ["resumed", "error"],
    key: "x",
    setup: resumedFromExecuting,
    trigger: (ws) => ws.handleStimulus(failure("x", "s4")),
    check: (ws, instructions) => {
      // The error is dropped; x is fetched, as the scheduler asked.
      expect(instructions).toEqual([gatherDep(W2, ["x"], 1, "s4")]);
      expect(ws.task("x").state).toBe("flight");
      expect(story(ws, "s4")).toEqual([
        ["x", "resumed", "error", "released", { x: "fetch" }],
        ["x", "released", "fetch", "fetch", {}],
        ["gather-dependencies", W2, new Set(["x"])],
        ["x", "fetch", "flight", "flight", {}],
      ]);
    },
  },
  {
    pair: ["resumed", "fetch"],
    key: "x",
    // flight -> cancelled -> resumed(waiting): the scheduler now wants x computed here.
    setup: (ws) => {
      flightForY(ws);
      ws.handleStimulus(free(["y", "x"], "s2"), compute("x", "s3"));
    },
    // The transfer fails: compute x instead of fetching it elsewhere.
    trigger: (ws) =>
      ws.handleStimulus(
        new GatherDepNetworkFailureEvent({ worker: W2, totalNbytes: 1, stimulusId: "s4" }),
      ),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new Execute("x", "s4")]);
      expect(ws.task("x").state).toBe("executing");
      expectSubsequence(story(ws, "s4"), [
        ["x", "resumed", "fetch", "released", { x: "waiting" }],
        ["x", "released", "waiting", "waiting", { x: "ready" }],
        ["x", "waiting", "ready", "ready", { x: "executing" }],
        ["x", "ready", "executing", "executing", {}],
      ]);
    },
  },
  {
    pair: ["resumed", "long-running"],
    key: "x",
    setup: resumedFromExecuting,
    trigger: (ws) => ws.handleStimulus(secede("x", "s4")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous, x.next]).toEqual(["resumed", "long-running", "fetch"]);
      expect(ws.longRunning.has(x)).toBe(true);
      expect(ws.executing.has(x)).toBe(false);
    },
  },
  {
    pair: ["resumed", "memory"],
    key: "x",
    setup: resumedFromExecuting,
    trigger: (ws) => ws.handleStimulus(success("x", "s4", 123)),
    check: (ws, instructions) => {
      // The scheduler expects a replica from a peer: add-keys, not task-finished.
      expect(instructions).toEqual([new AddKeysMsg(["x"], "s4"), new Execute("y", "s4")]);
      expect(ws.task("x").state).toBe("memory");
      expect(ws.data.get("x")).toBe(123);
      expect(ws.task("y").state).toBe("executing");
    },
  },
  {
    pair: ["resumed", "released"],
    key: "x",
    setup: resumedFromExecuting,
    trigger: (ws) => ws.handleStimulus(free(["y", "x"], "s4")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous, x.next]).toEqual(["cancelled", "executing", null]);
      expect(ws.tasks.has("y")).toBe(false);
      expect(story(ws, "s4")[1]).toEqual(["x", "resumed", "released", "cancelled", {}]);
    },
  },
  {
    pair: ["resumed", "rescheduled"],
    key: "x",
    setup: resumedFromExecuting,
    trigger: (ws) => ws.handleStimulus(new RescheduleEvent({ key: "x", stimulusId: "s4" })),
    check: (ws, instructions) => {
      // No RescheduleMsg: fetch x from W2, as the scheduler asked.
      expect(instructions).toEqual([gatherDep(W2, ["x"], 1, "s4")]);
      expect(ws.task("x").state).toBe("flight");
      expect(story(ws, "s4")[0]).toEqual([
        "x",
        "resumed",
        "rescheduled",
        "released",
        { x: "fetch" },
      ]);
    },
  },
  // ---------------------------------------------------------------- constrained
  {
    pair: ["constrained", "executing"],
    key: "y",
    ws: withR,
    setup: constrainedBehindX,
    trigger: (ws) => ws.handleStimulus(success("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskFinishedMsg.match({ key: "x", stimulusId: "s3" }),
        new Execute("y", "s3"),
      ]);
      expect(ws.availableResources.get("R")).toBe(0);
      expect(ws.constrained.size).toBe(0);
    },
  },
  {
    pair: ["constrained", "released"],
    key: "y",
    ws: withR,
    setup: constrainedBehindX,
    trigger: (ws) => ws.handleStimulus(free(["y"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.has("y")).toBe(false);
      expect(ws.constrained.size).toBe(0);
      // x still holds the resource.
      expect(ws.availableResources.get("R")).toBe(0);
    },
  },
  // ---------------------------------------------------------------------- error
  {
    pair: ["error", "released"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), failure("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(free(["x"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.size).toBe(0);
      expect(story(ws, "s3")).toEqual([
        ["free-keys", ["x"]],
        ["x", "error", "released", "released", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  // ------------------------------------------------------------------ executing
  {
    pair: ["executing", "error"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1", { runId: 7 }));
    },
    trigger: (ws) =>
      ws.handleStimulus(
        ExecuteFailureEvent.fromException(new TaskError("ValueError: boom", "  line 1"), {
          key: "x",
          runId: 7,
          start: 1,
          stop: 2,
          stimulusId: "s2",
        }),
      ),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskErredMsg.match({
          key: "x",
          runId: 7,
          exceptionText: "ValueError: boom",
          tracebackText: "  line 1",
          startstops: [{ action: "compute", start: 1, stop: 2 }],
          stimulusId: "s2",
        }),
      ]);
      const x = ws.task("x");
      expect(x.state).toBe("error");
      expect(x.exceptionText).toBe("ValueError: boom");
      expect(ws.executing.size).toBe(0);
    },
  },
  {
    pair: ["executing", "long-running"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"));
    },
    trigger: (ws) => ws.handleStimulus(secede("x", "s2", 1.5)),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new LongRunningMsg("x", 1.5, "s2")]);
      const x = ws.task("x");
      expect(x.state).toBe("long-running");
      expect(ws.executing.has(x)).toBe(false);
      expect(ws.longRunning.has(x)).toBe(true);
    },
  },
  {
    pair: ["executing", "memory"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1", { runId: 3 }));
    },
    trigger: (ws) =>
      ws.handleStimulus(
        ExecuteSuccessEvent.dummy("x", { value: 123, nbytes: 8, runId: 3, stimulusId: "s2" }),
      ),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskFinishedMsg.match({
          key: "x",
          runId: 3,
          nbytes: 8,
          typename: "number",
          stimulusId: "s2",
        }),
      ]);
      expect(ws.data.get("x")).toBe(123);
      expect(ws.nbytes).toBe(8);
    },
  },
  {
    pair: ["executing", "released"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"));
    },
    trigger: (ws) => ws.handleStimulus(free(["x"], "s2")),
    check: (ws, instructions) => {
      // A running task can't be stopped: it is cancelled.
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["cancelled", "executing"]);
      expect(ws.executing.has(x)).toBe(true);
    },
  },
  {
    pair: ["executing", "rescheduled"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"));
    },
    trigger: (ws) => ws.handleStimulus(new RescheduleEvent({ key: "x", stimulusId: "s2" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new RescheduleMsg("x", "s2")]);
      expect(ws.tasks.size).toBe(0);
      expect(story(ws, "s2")).toEqual([
        ["x", "executing", "rescheduled", "released", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  // ---------------------------------------------------------------------- fetch
  {
    pair: ["fetch", "flight"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(
        new PauseEvent({ stimulusId: "p" }),
        compute("y", "s1", { whoHas: { x: [W2] } }),
      );
    },
    trigger: (ws) => ws.handleStimulus(new UnpauseEvent({ stimulusId: "s2" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([gatherDep(W2, ["x"], 1, "s2")]);
      const x = ws.task("x");
      expect(x.comingFrom).toBe(W2);
      expect(ws.fetchCount).toBe(0);
      expect(ws.inFlightWorkers).toEqual(new Map([[W2, new Set(["x"])]]));
    },
  },
  {
    pair: ["fetch", "missing"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(
        new PauseEvent({ stimulusId: "p" }),
        compute("y", "s1", { whoHas: { x: [W2] } }),
      );
    },
    trigger: (ws) => ws.handleStimulus(new RemoveWorkerEvent({ worker: W2, stimulusId: "s2" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.task("x").state).toBe("missing");
      expect([...ws.missingDepFlight].map((ts) => ts.key)).toEqual(["x"]);
      expect(ws.fetchCount).toBe(0);
      expect(ws.hasWhat.has(W2)).toBe(false);
    },
  },
  {
    pair: ["fetch", "released"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(new PauseEvent({ stimulusId: "p" }), acquire("x", [W2], "s1"));
    },
    trigger: (ws) => ws.handleStimulus(free(["x"], "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.size).toBe(0);
      expect(ws.fetchCount).toBe(0);
      expect(ws.dataNeeded.get(W2)?.size ?? 0).toBe(0);
    },
  },
  // --------------------------------------------------------------------- flight
  {
    pair: ["flight", "error"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(acquire("x", [W2], "s1"));
    },
    trigger: (ws) =>
      ws.handleStimulus(
        GatherDepFailureEvent.fromException(new TaskError("UnpicklingError", "  tb"), {
          worker: W2,
          totalNbytes: 1,
          stimulusId: "s2",
        }),
      ),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskErredMsg.match({
          key: "x",
          runId: -1,
          exceptionText: "UnpicklingError",
          stimulusId: "s2",
        }),
      ]);
      expect(ws.task("x").state).toBe("error");
      expect(ws.transferIncomingBytes).toBe(0);
      expect(ws.inFlightTasks.size).toBe(0);
    },
  },
  {
    pair: ["flight", "fetch"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(acquire("x", [W2], "s1"));
    },
    trigger: (ws) =>
      ws.handleStimulus(new GatherDepBusyEvent({ worker: W2, totalNbytes: 1, stimulusId: "s2" })),
    check: (ws, instructions) => {
      // The only holder is busy: retry later, and ask the scheduler for others.
      expect(instructions).toEqual([
        new RetryBusyWorkerLater(W2, "s2"),
        new RequestRefreshWhoHasMsg(["x"], "s2"),
      ]);
      expect(ws.task("x").state).toBe("fetch");
      expect(ws.busyWorkers).toEqual(new Set([W2]));
      expect(ws.fetchCount).toBe(1);
    },
  },
  {
    pair: ["flight", "memory"],
    key: "x",
    setup: flightForY,
    trigger: (ws) => ws.handleStimulus(gathered(W2, { x: 123 }, "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new AddKeysMsg(["x"], "s2"), new Execute("y", "s2")]);
      expect(ws.data.get("x")).toBe(123);
      expect(ws.task("y").state).toBe("executing");
    },
  },
  {
    pair: ["flight", "missing"],
    key: "x",
    setup: flightForY,
    // W2 no longer holds x, and no other peer is known to.
    trigger: (ws) => ws.handleStimulus(gathered(W2, {}, "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.task("x").state).toBe("missing");
      expect(ws.task("x").whoHas.size).toBe(0);
      expect(story(ws, "s2")).toEqual([
        ["x", "missing-dep"],
        ["x", "flight", "fetch", "flight", { x: "missing" }],
        ["x", "flight", "missing", "missing", {}],
      ]);
    },
  },
  {
    pair: ["flight", "released"],
    key: "x",
    setup: flightForY,
    trigger: (ws) => ws.handleStimulus(free(["y"], "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["cancelled", "flight"]);
      expect(ws.inFlightTasks.has(x)).toBe(true);
      expect(ws.tasks.has("y")).toBe(false);
    },
  },
  // --------------------------------------------------------------- long-running
  {
    pair: ["long-running", "error"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), secede("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(failure("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([TaskErredMsg.match({ key: "x", stimulusId: "s3" })]);
      expect(ws.longRunning.size).toBe(0);
    },
  },
  {
    pair: ["long-running", "memory"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), secede("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(success("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([TaskFinishedMsg.match({ key: "x", stimulusId: "s3" })]);
      expect(ws.longRunning.size).toBe(0);
      expect(ws.data.get("x")).toBe(123);
    },
  },
  {
    pair: ["long-running", "rescheduled"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), secede("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(new RescheduleEvent({ key: "x", stimulusId: "s3" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new RescheduleMsg("x", "s3")]);
      expect(ws.tasks.size).toBe(0);
      expect(ws.longRunning.size).toBe(0);
    },
  },
  {
    pair: ["long-running", "released"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), secede("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(free(["x"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect([x.state, x.previous]).toEqual(["cancelled", "long-running"]);
      expect(ws.longRunning.has(x)).toBe(true);
    },
  },
  // --------------------------------------------------------------------- memory
  {
    pair: ["memory", "released"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(compute("x", "s1"), success("x", "s2"));
    },
    trigger: (ws) => ws.handleStimulus(free(["x"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new ReleaseWorkerDataMsg("x", "s3")]);
      expect(ws.tasks.size).toBe(0);
      expect(ws.data.size).toBe(0);
      expect(ws.nbytes).toBe(0);
    },
  },
  // -------------------------------------------------------------------- missing
  {
    // With validation, no event sequence recommends error to a missing task: errors
    // are recommended to tasks that ran (ExecuteFailureEvent), were in flight
    // (GatherDepFailureEvent) or were being stored (a failing data store). Without
    // validation, an ExecuteFailureEvent for a task that isn't running (a shell bug,
    // which validation catches) gets there.
    pair: ["missing", "error"],
    key: "x",
    ws: () => newWs({ validate: false }),
    setup: (ws) => {
      ws.handleStimulus(acquire("x", [W2], "s1"), networkFailure(W2, "s2"));
    },
    trigger: (ws) => ws.handleStimulus(failure("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([TaskErredMsg.match({ key: "x", runId: 1, stimulusId: "s3" })]);
      const x = ws.task("x");
      expect(x.state).toBe("error");
      // As in the seed, the generic transition to error leaves the task in
      // missing_dep_flight; releasing it cleans up.
      expect(ws.missingDepFlight.has(x)).toBe(true);
      ws.handleStimulus(free(["x"], "s4"));
      expect(ws.missingDepFlight.size).toBe(0);
      expect(ws.tasks.size).toBe(0);
      // And with validation, the same event is refused.
      const ws2 = newWs();
      ws2.handleStimulus(acquire("x", [W2], "s1"), networkFailure(W2, "s2"));
      expect(() => ws2.handleStimulus(failure("x", "s3"))).toThrow(AssertionError);
    },
  },
  {
    pair: ["missing", "fetch"],
    key: "x",
    setup: missingForY,
    trigger: (ws) =>
      ws.handleStimulus(new RefreshWhoHasEvent({ whoHas: { x: [W3] }, stimulusId: "s3" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([gatherDep(W3, ["x"], 1, "s3")]);
      expect(ws.task("x").state).toBe("flight");
      expect(ws.missingDepFlight.size).toBe(0);
    },
  },
  {
    pair: ["missing", "released"],
    key: "x",
    setup: missingForY,
    trigger: (ws) => ws.handleStimulus(free(["y"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.size).toBe(0);
      expect(ws.missingDepFlight.size).toBe(0);
      expectSubsequence(story(ws, "x"), [
        ["x", "missing", "released", "released", { x: "forgotten" }],
      ]);
    },
  },
  {
    pair: ["missing", "waiting"],
    key: "x",
    setup: missingForY,
    // The scheduler lost every replica and computes x here.
    trigger: (ws) => ws.handleStimulus(compute("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new Execute("x", "s3")]);
      expect(ws.missingDepFlight.size).toBe(0);
      expect(story(ws, "s3")[1]).toEqual(["x", "missing", "waiting", "waiting", { x: "ready" }]);
    },
  },
  // ---------------------------------------------------------------------- ready
  {
    pair: ["ready", "executing"],
    key: "y",
    setup: readyBehindX,
    trigger: (ws) => ws.handleStimulus(success("x", "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskFinishedMsg.match({ key: "x", stimulusId: "s3" }),
        new Execute("y", "s3"),
      ]);
      expect(ws.ready.size).toBe(0);
    },
  },
  {
    pair: ["ready", "released"],
    key: "y",
    setup: readyBehindX,
    trigger: (ws) => ws.handleStimulus(free(["y"], "s3")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.has("y")).toBe(false);
      expect(ws.ready.size).toBe(0);
    },
  },
  // ------------------------------------------------------------------- released
  {
    // Scatter into a data store that can't take the value.
    pair: ["released", "error"],
    key: "x",
    ws: () => newWs({ data: new FailingStore((k) => k === "x") }),
    setup: () => {},
    chain: true,
    trigger: (ws) => ws.handleStimulus(new UpdateDataEvent({ data: { x: 1 }, stimulusId: "s1" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([
        TaskErredMsg.match({
          key: "x",
          runId: -1,
          exceptionText: "MemoryError: cannot store x",
          tracebackText: '  File "spill.py", line 1',
          stimulusId: "s1",
        }),
      ]);
      expect(ws.task("x").state).toBe("error");
      expect(story(ws, "s1")).toEqual([
        ["x", "receive-from-scatter", "released"],
        ["x", "released", "memory", "released", { x: "error" }],
        ["x", "released", "error", "error", {}],
      ]);
    },
  },
  {
    pair: ["released", "fetch"],
    key: "x",
    setup: () => {},
    chain: true,
    trigger: (ws) => ws.handleStimulus(acquire("x", [W2], "s1", 7)),
    check: (ws, instructions) => {
      expect(instructions).toEqual([gatherDep(W2, ["x"], 7, "s1")]);
      expect(story(ws, "x")).toEqual([
        ["x", "ensure-task-exists", "released"],
        ["x", "released", "fetch", "fetch", {}],
        ["gather-dependencies", W2, new Set(["x"])],
        ["x", "fetch", "flight", "flight", {}],
      ]);
    },
  },
  {
    // x is released but not forgotten while its cancelled dependent y runs.
    pair: ["released", "forgotten"],
    key: "x",
    setup: (ws) => {
      ws.handleStimulus(
        new UpdateDataEvent({ data: { x: 1 }, stimulusId: "s1" }),
        compute("y", "s2", { whoHas: { x: [ADDR] } }),
        free(["y"], "s3"),
        free(["x"], "s4"),
      );
    },
    trigger: (ws) => ws.handleStimulus(success("y", "s5")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.tasks.size).toBe(0);
      expect(story(ws, "s5")).toEqual([
        ["y", "cancelled", "memory", "released", { x: "released", y: "forgotten" }],
        ["y", "released", "forgotten", "forgotten", { x: "forgotten" }],
        ["x", "released", "forgotten", "forgotten", {}],
      ]);
    },
  },
  {
    // Scatter: the scheduler doesn't know the key yet, so it is not told.
    pair: ["released", "memory"],
    key: "x",
    setup: () => {},
    chain: true,
    trigger: (ws) =>
      ws.handleStimulus(new UpdateDataEvent({ data: { x: "abc" }, stimulusId: "s1" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      const x = ws.task("x");
      expect(x.state).toBe("memory");
      expect(ws.data.get("x")).toBe("abc");
      expect(ws.nbytes).toBe(x.nbytes);
      expect(x.nbytes).toBeGreaterThan(0);
    },
  },
  {
    // resumed(executing->fetch) x fails after its only holder W2 left: fetch finds no
    // peer, so x goes missing.
    pair: ["released", "missing"],
    key: "x",
    setup: (ws) => {
      resumedFromExecuting(ws);
      ws.handleStimulus(new RemoveWorkerEvent({ worker: W2, stimulusId: "s4" }));
    },
    chain: true,
    trigger: (ws) => ws.handleStimulus(failure("x", "s5")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([]);
      expect(ws.task("x").state).toBe("missing");
      expect(ws.task("y").state).toBe("waiting");
      expect(story(ws, "s5")).toEqual([
        ["x", "resumed", "error", "released", { x: "fetch" }],
        ["x", "released", "fetch", "released", { x: "missing" }],
        ["x", "released", "missing", "missing", {}],
      ]);
    },
  },
  {
    pair: ["released", "waiting"],
    key: "x",
    setup: () => {},
    chain: true,
    trigger: (ws) => ws.handleStimulus(compute("x", "s1")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new Execute("x", "s1")]);
      expect(story(ws, "x")).toEqual([
        ["x", "compute-task", "released"],
        ["x", "released", "waiting", "waiting", { x: "ready" }],
        ["x", "waiting", "ready", "ready", { x: "executing" }],
        ["x", "ready", "executing", "executing", {}],
      ]);
    },
  },
  // -------------------------------------------------------------------- waiting
  {
    pair: ["waiting", "constrained"],
    key: "y",
    ws: withR,
    setup: (ws) => {
      ws.handleStimulus(
        compute("y", "s1", { whoHas: { x: [W2] }, resourceRestrictions: { R: 1 } }),
      );
      // Resources are taken only on execution.
      expect(ws.availableResources.get("R")).toBe(1);
    },
    trigger: (ws) => ws.handleStimulus(gathered(W2, { x: 1 }, "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new AddKeysMsg(["x"], "s2"), new Execute("y", "s2")]);
      expect(ws.availableResources.get("R")).toBe(0);
      expectSubsequence(story(ws, "y"), [
        ["y", "waiting", "ready", "waiting", { y: "constrained" }],
        ["y", "waiting", "constrained", "constrained", { y: "executing" }],
        ["y", "constrained", "executing", "executing", {}],
      ]);
    },
  },
  {
    pair: ["waiting", "ready"],
    key: "y",
    setup: flightForY,
    trigger: (ws) => ws.handleStimulus(gathered(W2, { x: 1 }, "s2")),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new AddKeysMsg(["x"], "s2"), new Execute("y", "s2")]);
      expect(ws.task("y").state).toBe("executing");
      expect(ws.waiting.size).toBe(0);
    },
  },
  {
    pair: ["waiting", "released"],
    key: "y",
    setup: flightForY,
    trigger: (ws) => ws.handleStimulus(new StealRequestEvent({ key: "y", stimulusId: "s2" })),
    check: (ws, instructions) => {
      expect(instructions).toEqual([new StealResponseMsg("y", "waiting", "s2")]);
      expect(ws.tasks.has("y")).toBe(false);
      // Its dependency, no longer needed, is cancelled while in flight.
      expect(ws.task("x").state).toBe("cancelled");
      expect(ws.waiting.size).toBe(0);
    },
  },
];

describe("transition table", () => {
  const covered = new Set<string>();

  for (const c of CASES) {
    const [start, finish] = c.pair;
    covered.add(`${start}->${finish}`);
    it(`${start} -> ${finish}`, () => {
      const ws = c.ws?.() ?? newWs();
      c.setup(ws);
      if (!c.chain) expect(ws.tasks.get(c.key)?.state).toBe(start);
      const before = ws.log.length;
      const instructions = c.trigger(ws);
      const records = ws.log.toArray().slice(before);
      expect(
        records.some(
          (r) => isTransitionRecord(r) && r[0] === c.key && r[1] === start && r[2] === finish,
        ),
        `no [${c.key}, ${start}, ${finish}, ...] record in the log`,
      ).toBe(true);
      c.check(ws, instructions);
      ws.validateState();
    });
  }

  it("has one test for every entry of TRANSITIONS_TABLE", () => {
    const table = new Set(TRANSITIONS_TABLE.map(([s, f]) => `${s}->${f}`));
    expect(table.size).toBe(50);
    expect(CASES.length).toBe(covered.size);
    expect([...covered].sort()).toEqual([...table].sort());
  });
});

describe("transitions outside the table", () => {
  it("goes through released when the table has no direct entry", () => {
    const ws = newWs();
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("y", "s1", { whoHas: { x: [W2] } }),
    );
    expect(lookupTransition("fetch", "waiting")).toBeUndefined();
    expect(ws.task("x").state).toBe("fetch");
    const counter = ws.transitionCounter;

    // The scheduler computes x here rather than waiting for the transfer.
    ws.handleStimulus(compute("x", "s2"));
    expect(story(ws, "s2")).toEqual([
      ["x", "compute-task", "fetch"],
      ["x", "fetch", "released", "released", {}],
      ["x", "released", "waiting", "waiting", { x: "ready" }],
      ["x", "fetch", "waiting", "waiting", { x: "ready" }],
      ["x", "waiting", "ready", "ready", {}],
    ]);
    // fetch -> waiting counts once for itself and once for each leg through released.
    expect(ws.transitionCounter - counter).toBe(4);
    expect(ws.task("x").state).toBe("ready"); // paused
    expect(ws.fetchCount).toBe(0);
    ws.validateState();
  });

  it("raises Python's TypeError, not a JavaScript one, for a transition given the wrong arguments", () => {
    const ws = newWs();
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("y", "s1", { whoHas: { x: [W2] } }),
    );
    expect(ws.task("x").state).toBe("fetch");
    // fetch -> flight takes the peer; the seed's call without it raises TypeError.
    let thrown: unknown;
    try {
      ws.transition(ws.task("x"), "flight", "s2", []);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PyTypeError);
    expect((thrown as Error).name).toBe("TypeError");
    expect((thrown as Error).message).toMatch(/fetch->flight of x takes 1 arguments, got 0/);
  });

  it("drops a recommendation to forget on the way through released", () => {
    const ws = newWs();
    ws.handleStimulus(compute("x", "s1"), failure("x", "s2"));
    // The scheduler retries x. error -> waiting goes through released, which
    // recommends forgetting x (no dependents): the path to waiting ignores that.
    const instructions = ws.handleStimulus(compute("x", "s3"));
    expect(instructions).toEqual([new Execute("x", "s3")]);
    expect(story(ws, "s3")).toEqual([
      ["x", "compute-task", "error"],
      ["x", "error", "released", "released", { x: "forgotten" }],
      ["x", "released", "waiting", "waiting", { x: "ready" }],
      ["x", "error", "waiting", "waiting", { x: "ready" }],
      ["x", "waiting", "ready", "ready", { x: "executing" }],
      ["x", "ready", "executing", "executing", {}],
    ]);
    expect(ws.task("x").exception).toBeNull();
    ws.validateState();
  });
});
