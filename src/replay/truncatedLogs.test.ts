import { beforeAll, describe, expect, it } from "vitest";
import type { ClusterDump, WorkerDump } from "../protocol/clusterDump.ts";
import { formatReport } from "./formatReport.ts";
import { loadDump, replayLoadedDump } from "./replayDump.ts";
import type { WorkerReplayReport } from "./report.ts";
import { sharedPath } from "./testPaths.ts";

const WORKER = "tcp://127.0.0.1:42687";

let tree: ClusterDump;

beforeAll(async () => {
  tree = await loadDump(sharedPath("dumps", "tree.msgpack.gz"));
});

/** The tree dump with one worker whose logs lost their beginning, as capped deques do. */
function capped(drop: { events?: number; records?: number }): ClusterDump {
  const w = tree.workers.get(WORKER) as WorkerDump;
  const cut: WorkerDump = {
    ...w,
    stimulusLog: w.stimulusLog.slice(drop.events ?? 0),
    log: w.log.slice(drop.records ?? 0),
  };
  return { ...tree, workers: new Map([[WORKER, cut]]) };
}

function replay(dump: ClusterDump, followLog = true): WorkerReplayReport {
  return replayLoadedDump(dump, { followLog }).report.workers[0];
}

describe("logs that do not reach back to the worker's start", () => {
  it("a log that lost its beginning: replayed from the start, checked where the log starts", () => {
    const w = replay(capped({ records: 900 }));
    expect(w.coverage.logFromStart).toBe(false);
    expect(w.coverage.stimulusLogFromStart).toBe(true);
    expect(w.coverage.notes.join("\n")).toMatch(/larger than the \d+ transitions the log holds/);
    expect(w.transitionCounter).toEqual({
      replayed: 1510,
      dumped: 1510,
      comparable: true,
      equal: true,
    });
    expect(w.log.divergent).toBe(0);
    expect(w.log.checkedStimuli).toBeLessThan(753);
    expect(w.tasks.mismatches).toEqual([]);
    expect(w.verdict).toBe("exact");
  });

  it("a stimulus log that lost its beginning: earlier events are found out, not crashed on", () => {
    const w = replay(capped({ events: 200 }));
    expect(w.coverage.stimulusLogFromStart).toBe(false);
    expect(w.coverage.notes.join("\n")).toMatch(/older than the stimulus log/);
    expect(w.failure).toBeNull();
    expect(w.events.skipped).toBeGreaterThan(0);
    expect(w.transitionCounter.comparable).toBe(false);
    expect(w.log.divergent).toBe(0);
    // Only what the replay could rebuild is compared, and that is as dumped.
    expect(w.tasks.notComparable).toBeGreaterThan(0);
    expect(w.tasks.compared).toBeGreaterThan(0);
    expect(w.tasks.mismatches).toEqual([]);
    expect(w.tasks.generationOffset).not.toBe(0);
    expect(w.ok).toBe(true);
    expect(formatReport(replayLoadedDump(capped({ events: 200 })).report)).toContain(
      "not comparable",
    );
  });

  it("both logs lost their beginning: the first events refer to unknown tasks", () => {
    for (const drop of [
      { events: 200, records: 900 },
      { events: 100, records: 2000 },
      { events: 500 },
    ]) {
      const w = replay(capped(drop), false);
      expect(w.coverage.stimulusLogFromStart).toBe(false);
      expect(w.coverage.notes.join("\n")).toMatch(/does not reach back to the worker's start/);
      expect(w.failure).toBeNull();
      expect(w.transitionCounter.comparable).toBe(false);
      expect(w.log.divergent).toBe(0);
      expect(w.tasks.mismatches).toEqual([]);
    }
  });
});

describe("logs that hold nothing to check against", () => {
  it("an empty log: nothing can be checked, nothing is called divergent", () => {
    const w = replay(capped({ records: Number.MAX_SAFE_INTEGER }), false);
    expect(w.coverage.notes).toContain("the log is empty: nothing can be checked");
    expect(w.log.checkedStimuli).toBe(0);
    expect(w.log.divergent).toBe(0);
    expect(w.log.firstDivergence).toBeNull();
    expect(w.transitionCounter.equal).toBe(true);
    expect(w.ok).toBe(true);
  });

  it("a log of the Worker's own records only: nothing can be checked either", () => {
    const w0 = tree.workers.get(WORKER) as WorkerDump;
    const shellOnly = w0.log.filter((e) => e[0] === "request-dep" && e.length === 5);
    expect(shellOnly.length).toBeGreaterThan(0);
    const dump = { ...tree, workers: new Map([[WORKER, { ...w0, log: shellOnly }]]) };
    const w = replay(dump, false);
    expect(w.coverage.notes.join("\n")).toMatch(
      /only the Worker's own records.*nothing can be checked/,
    );
    expect(w.log.divergent).toBe(0);
  });
});

describe("logs of which nothing can be compared", () => {
  it("is called uncompared, not exact, and not ok", () => {
    const w0 = tree.workers.get(WORKER) as WorkerDump;
    // The last 10 events and 100 records: the counter is not comparable, the stimuli
    // checked have no record left to check and every task is tainted.
    const dump = capped({ events: w0.stimulusLog.length - 10, records: w0.log.length - 100 });
    const w = replay(dump, false);
    expect(w.failure).toBeNull();
    expect(w.transitionCounter.comparable).toBe(false);
    expect(w.log.checkedRecords).toBe(0);
    expect(w.tasks.compared).toBe(0);
    expect(w.verdict).toBe("uncompared");
    expect(w.ok).toBe(false);
    const report = replayLoadedDump(dump).report;
    expect(report.ok).toBe(false);
    const text = formatReport(report);
    expect(text).toContain(`${WORKER}: UNCOMPARED: nothing could be compared`);
    expect(text).not.toContain("EXACT");
    expect(text).toContain("1 worker: 1 uncompared");
  });

  it("with a record checked, the same cut is exact as far as comparable", () => {
    const w0 = tree.workers.get(WORKER) as WorkerDump;
    const w = replay(
      capped({ events: w0.stimulusLog.length - 50, records: w0.log.length - 300 }),
      false,
    );
    expect(w.log.checkedRecords).toBeGreaterThan(0);
    expect(w.verdict).toBe("exact");
    expect(w.ok).toBe(true);
  });
});

describe("a malformed log record", () => {
  it("is refused with its worker and index, not replayed with an undefined stimulus", () => {
    const w0 = tree.workers.get(WORKER) as WorkerDump;
    for (const bad of [
      ["x"],
      ["inc-1", "compute-task", 7, 1.5],
      ["inc-1", "released", "sid", "late"],
      // No time either: taken for one, NaN made the record look older than the
      // stimulus log, and the report said the log had lost its beginning.
      ["inc-1", "released", "sid", Number.NaN],
      ["inc-1", "released", "sid", Number.POSITIVE_INFINITY],
    ]) {
      const log = [...w0.log];
      log[3] = bad;
      const dump = { ...tree, workers: new Map([[WORKER, { ...w0, log }]]) };
      expect(() => replayLoadedDump(dump)).toThrow(
        `workers["${WORKER}"].log[3]: expected a record ending with its stimulus id and time, got (`,
      );
    }
  });
});

describe("an empty list of workers", () => {
  it("is refused, not passed having replayed none", () => {
    expect(() => replayLoadedDump(tree, { workers: [] })).toThrow(
      /: no worker to replay: the list of workers is empty \(workers: tcp:/,
    );
  });
});
