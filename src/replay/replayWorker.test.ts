import { beforeAll, describe, expect, it } from "vitest";
import type { ClusterDump, WorkerDump, WorkerLogEntry } from "../protocol/clusterDump.ts";
import { loadDump } from "./replayDump.ts";
import { replayWorker } from "./replayWorker.ts";
import { sharedPath } from "./testPaths.ts";

const ERRORS = "tcp://127.0.0.1:45213";
const TREE = "tcp://127.0.0.1:33899";

let errors: ClusterDump;
let tree: ClusterDump;

beforeAll(async () => {
  errors = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
  tree = await loadDump(sharedPath("dumps", "tree.msgpack.gz"));
});

/** `dump` with worker `address` edited. */
function edited(dump: ClusterDump, address: string, edit: Partial<WorkerDump>): ClusterDump {
  const w = dump.workers.get(address) as WorkerDump;
  return { ...dump, workers: new Map([[address, { ...w, ...edit }]]) };
}

/** The worker's log with `records` inserted before the first record of event `index`. */
function insertedBefore(w: WorkerDump, index: number, records: WorkerLogEntry[]): WorkerLogEntry[] {
  const sid = w.stimulusLog[index].stimulus_id;
  const at = w.log.findIndex((r) => r[r.length - 2] === sid);
  return [...w.log.slice(0, at), ...records, ...w.log.slice(at)];
}

describe("records of stimuli the stimulus log does not hold", () => {
  it("replays a find-missing stimulus where the log has its records, and skips others", () => {
    const w = errors.workers.get(ERRORS) as WorkerDump;
    const sid = w.stimulusLog[10].stimulus_id;
    const at = w.log.find((r) => r[r.length - 2] === sid) as WorkerLogEntry;
    const time = at[at.length - 1] as number;
    const log = insertedBefore(w, 10, [
      // A FindMissingEvent with nothing missing logs nothing: this record is not replayed.
      ["x", "missing", "fetch", "fetch", {}, "find-missing-1", time - 2e-6],
      ["y", "memory", "memory", "memory", {}, "bogus-1", time - 1e-6],
    ]);
    const { report } = replayWorker(edited(errors, ERRORS, { log }), ERRORS);
    expect(report.events.findMissing).toBe(1);
    expect(report.log.firstDivergence).toMatchObject({
      eventIndex: 10,
      eventClass: "FindMissingEvent",
      stimulusId: "find-missing-1",
      replayed: null,
    });
    expect(report.log.unexplainedRecords).toBe(1);
    expect(report.coverage.notes).toContain(
      "the log holds records of stimuli the stimulus log does not (first: bogus-1 before event 10): they are skipped",
    );
  });
});

describe("a stimulus log at its capacity", () => {
  it("calls differing records unverifiable and skips events about what it may have lost", () => {
    // The log at its capacity too: nothing shows the worker's start.
    const full = { stimulusLogFull: true, logFull: true };
    const { report } = replayWorker(edited(tree, TREE, full), TREE);
    expect(report.coverage.notes[0]).toMatch(/^the stimulus log is full/);
    expect(report.log.divergent).toBe(0);
    expect(report.log.unverifiable).toBeGreaterThan(0);
    expect(report.failure).toBeNull();
    expect(report.events.skipped).toBeGreaterThan(0);
  });

  it("is replayed as from the worker's start when the log shows it (every transition, none earlier)", () => {
    const plain = replayWorker(tree, TREE).report;
    const { report } = replayWorker(edited(tree, TREE, { stimulusLogFull: true }), TREE);
    expect(report.events.skipped).toBe(0);
    expect(report.failure).toEqual(plain.failure);
    expect(report.verdict).toBe("failed");
  });
});

describe("the verdict", () => {
  it("a task that differs at the end: diverged", () => {
    const w = errors.workers.get(ERRORS) as WorkerDump;
    const [key, task] = [...w.tasks].find(([, t]) => t.state === "memory") ?? [];
    if (key === undefined || task === undefined) throw new Error("no task in memory");
    const tasks = new Map(w.tasks).set(key, { ...task, nbytes: (task.nbytes ?? 0) + 1 });
    const { report } = replayWorker(edited(errors, ERRORS, { tasks }), ERRORS);
    expect(report.transitionCounter.equal).toBe(true);
    expect(report.tasks.mismatches.map((m) => m.key)).toEqual([key]);
    expect(report.verdict).toBe("diverged");
    expect(report.ok).toBe(false);
  });

  it("a record that differs on the way, with the same end: converged, every task compared", () => {
    const w = errors.workers.get(ERRORS) as WorkerDump;
    const i = w.log.findIndex((r) => r.length === 7 && r[2] === "memory");
    const r = w.log[i];
    const log = [...w.log];
    // The dumped transition went through another state than the replayed one.
    log[i] = [r[0], r[1], "error", ...r.slice(3)];
    const { report } = replayWorker(edited(errors, ERRORS, { log }), ERRORS);
    expect(report.log.divergent).toBe(1);
    expect(report.tasks.notComparable).toBe(0);
    expect(report.tasks.compared).toBe(w.tasks.size);
    expect(report.verdict).toBe("converged");
    expect(report.ok).toBe(true);
    // Following the dumped choices rules set order out: the difference is a real one.
    const followed = replayWorker(edited(errors, ERRORS, { log }), ERRORS, { followLog: true });
    expect(followed.report.verdict).toBe("converged");
    expect(followed.report.log.divergent).toBe(1);
    expect(followed.report.ok).toBe(false);
  });
});

describe("an event about a task the replay never heard of", () => {
  /** The worker with its last task-finished event about an unknown task, and maybe a divergence before. */
  function unknownTaskFinished(diverge: boolean, startShown = false): ClusterDump {
    const w = errors.workers.get(ERRORS) as WorkerDump;
    const j = w.stimulusLog.findLastIndex((e) => e.cls === "ExecuteSuccessEvent");
    const stimulusLog = [...w.stimulusLog];
    stimulusLog[j] = { ...stimulusLog[j], key: "never-computed" };
    const log = [...w.log];
    if (diverge) {
      const i = log.findIndex((r) => r.length === 7 && r[2] === "memory");
      log[i] = [log[i][0], log[i][1], "error", ...log[i].slice(3)];
    }
    // A log at its capacity may have lost the worker's start; below it, holding every
    // transition and none before the first event, it shows the start.
    return edited(errors, ERRORS, { stimulusLog, log, logFull: !startShown });
  }

  it("while the replay matches the log: the event came from before the stimulus log", () => {
    const { report } = replayWorker(unknownTaskFinished(false), ERRORS);
    expect(report.failure).toBeNull();
    expect(report.events.skipped).toBe(1);
    expect(report.coverage.stimulusLogFromStart).toBe(false);
  });

  it("when the log shows the worker's start: no lost past explains it, and the machine raises", () => {
    // It was skipped as history, and the worker called exact having compared almost nothing.
    const { report } = replayWorker(unknownTaskFinished(false, true), ERRORS);
    expect(report.events.skipped).toBe(0);
    expect(report.coverage.stimulusLogFromStart).toBe(true);
    expect(report.failure?.eventClass).toBe("ExecuteSuccessEvent");
    expect(report.failure?.message).toContain('"never-computed"');
    expect(report.verdict).toBe("failed");
  });

  it("after a divergence: the replay's own path, where the state machine raises", () => {
    const { report } = replayWorker(unknownTaskFinished(true), ERRORS);
    expect(report.events.skipped).toBe(0);
    expect(report.failure?.eventClass).toBe("ExecuteSuccessEvent");
    expect(report.verdict).toBe("failed");
  });
});
