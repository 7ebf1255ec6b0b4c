import { beforeAll, describe, expect, it } from "vitest";
import type { WorkerDump } from "../protocol/clusterDump.ts";
import { ComputeTaskEvent } from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { logCoverage } from "./coverage.ts";
import { eventGroups } from "./eventGroups.ts";
import { ExpectedLog } from "./expectedLog.ts";
import { loadDump } from "./replayDump.ts";
import { Taint } from "./taint.ts";
import { sharedPath } from "./testPaths.ts";

let worker: WorkerDump;

beforeAll(async () => {
  const tree = await loadDump(sharedPath("dumps", "tree.msgpack.gz"));
  worker = tree.workers.get("tcp://127.0.0.1:42687") as WorkerDump;
});

/** `w` with event `index` handled at `time`. */
function handledAt(w: WorkerDump, index: number, time: number): WorkerDump {
  const stimulusLog = [...w.stimulusLog];
  stimulusLog[index] = { ...stimulusLog[index], handled: time };
  return { ...w, stimulusLog };
}

function coverage(w: WorkerDump) {
  return logCoverage(w, new ExpectedLog(w.log), eventGroups(w.stimulusLog));
}

describe("where a dumped log and its stimulus log meet", () => {
  it("a record logged at the very time the first event was handled is that event's", () => {
    const first = new ExpectedLog(worker.log).records[0].time as number;
    const c = coverage(handledAt(worker, 0, first));
    expect(c.recordsBefore).toBe(0);
    expect(c.notes).toEqual([]);
  });

  it("a log that lost its beginning starts at the last event handled at or before its first record", () => {
    const cut = { ...worker, log: worker.log.slice(900) };
    const first = new ExpectedLog(cut.log).records[0].time as number;
    const groups = eventGroups(cut.stimulusLog);
    const g = groups.findIndex((x) => (cut.stimulusLog[x.first].handled as number) > first);
    const c = coverage(handledAt(cut, groups[g].first, first));
    expect(c.recordsBefore).toBe(0);
    expect(c.firstCheckedGroup).toBe(g);
    expect(c.firstGroupPartial).toBe(true);
  });

  it("a log that lost its beginning but reaches before the stimulus log: checked from the first event, whole", () => {
    // Both logs capped, the log the longer: its first records are of older stimuli.
    const cut = {
      ...worker,
      stimulusLog: worker.stimulusLog.slice(100),
      log: worker.log.slice(300),
    };
    for (const w of [
      cut,
      { ...cut, stimulusLog: cut.stimulusLog.map((e) => ({ ...e, handled: null })) },
    ]) {
      const c = coverage(w);
      expect(c.logCapped).toBe(true);
      expect(c.recordsBefore).toBeGreaterThan(0);
      expect(c.firstCheckedGroup).toBe(0);
      expect(c.firstGroupPartial).toBe(false);
    }
  });
});

describe("tainted tasks", () => {
  it("spread to the dependents of a tainted task as to its dependencies", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1 });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { whoHas: { a: ["tcp://127.0.0.1:2"] }, stimulusId: "c" }),
    );
    const taint = new Taint();
    taint.add(ws, ["a"]);
    expect(taint.has("x")).toBe(true);
    const other = new Taint();
    other.add(ws, ["x"]);
    expect(other.has("a")).toBe(true);
  });
});
