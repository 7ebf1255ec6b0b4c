import { beforeAll, describe, expect, it } from "vitest";
import type { ClusterDump, WorkerDump } from "../protocol/clusterDump.ts";
import { isShellRecord } from "./records.ts";
import { loadDump, replayLoadedDump } from "./replayDump.ts";
import type { WorkerReplayReport } from "./report.ts";
import { sharedPath } from "./testPaths.ts";

/**
 * Every worker of every sample dump, replayed as Dask's Worker would have rebuilt it.
 * `needsFollowLog`: the worker whose replay depends on Python's set order (README).
 */
const DUMPS: Record<string, { workers: Record<string, number>; needsFollowLog: string[] }> = {
  "tree.msgpack.gz": {
    workers: { "tcp://127.0.0.1:33899": 862, "tcp://127.0.0.1:42687": 753 },
    needsFollowLog: ["tcp://127.0.0.1:33899"],
  },
  "shuffle.msgpack.gz": {
    workers: {
      "tcp://127.0.0.1:41927": 194,
      "tcp://127.0.0.1:42167": 198,
      "tcp://127.0.0.1:44017": 216,
    },
    needsFollowLog: [],
  },
  "shuffle.yaml": {
    workers: {
      "tcp://127.0.0.1:41927": 351,
      "tcp://127.0.0.1:42167": 367,
      "tcp://127.0.0.1:44017": 351,
    },
    needsFollowLog: [],
  },
  "errors-and-cancel.msgpack.gz": {
    workers: { "tcp://127.0.0.1:37641": 78, "tcp://127.0.0.1:45213": 77 },
    needsFollowLog: [],
  },
  "lost-worker.msgpack.gz": {
    workers: { "tcp://127.0.0.1:33607": 243, "tcp://127.0.0.1:41991": 243 },
    needsFollowLog: [],
  },
};

function expectReplayedToTheEnd(w: WorkerReplayReport, events: number): void {
  expect(w.failure).toBeNull();
  expect(w.events).toEqual({ inLog: events, replayed: events, skipped: 0, findMissing: 0 });
  expect(w.coverage.stimulusLogFromStart).toBe(true);
  expect(w.coverage.logFromStart).toBe(true);
  expect(w.transitionCounter.comparable).toBe(true);
  expect(w.transitionCounter.replayed).toBe(w.transitionCounter.dumped);
  expect(w.tasks.notComparable).toBe(0);
  expect(w.tasks.mismatches).toEqual([]);
  expect(w.tasks.compared).toBe(Math.max(w.tasks.dumped, w.tasks.replayed));
  expect(w.tasks.replayed).toBe(w.tasks.dumped);
}

for (const [file, spec] of Object.entries(DUMPS)) {
  describe(`replay ${file}`, () => {
    let dump: ClusterDump;
    beforeAll(async () => {
      dump = await loadDump(sharedPath("dumps", file));
    });

    it("has the expected workers", () => {
      expect([...dump.workers.keys()].sort()).toEqual(Object.keys(spec.workers).sort());
    });

    for (const [address, events] of Object.entries(spec.workers)) {
      const needsFollowLog = spec.needsFollowLog.includes(address);

      it(`${address} with --follow-log: the dumped counter, tasks and log`, () => {
        const { report } = replayLoadedDump(dump, { followLog: true, workers: [address] });
        const [w] = report.workers;
        expectReplayedToTheEnd(w, events);
        expect(w.verdict).toBe("exact");
        expect(w.log.divergent).toBe(0);
        const stateMachineRecords = dump.workers.get(address)?.log.filter((e) => !isShellRecord(e));
        expect(w.log.checkedRecords).toBe(stateMachineRecords?.length);
        expect(w.log.steered).not.toBeNull();
        // YAML sorts mapping keys: the order of an event's dict (e.g. a compute-task's
        // dependencies) is lost, so some records come in another order, never others.
        if (file.endsWith(".msgpack.gz")) expect(w.log.reordered).toBe(0);
      });

      if (needsFollowLog) {
        it(`${address} without --follow-log: divergent at its first divergent entry, no crash`, () => {
          const { report } = replayLoadedDump(dump, { workers: [address] });
          const [w] = report.workers;
          expect(w.ok).toBe(false);
          expect(w.log.firstDivergence).toEqual({
            eventIndex: 114,
            eventClass: "GatherDepSuccessEvent",
            stimulusId: "gather-dep-success-1795992522.7214494",
            recordIndex: 0,
            expected: "('inc-41', 'put-in-memory', 'gather-dep-success-1795992522.7214494')",
            replayed: "('add-4-0', 'put-in-memory', 'gather-dep-success-1795992522.7214494')",
            missing: 3,
            extra: 3,
          });
          // The replay goes on until the state machine refuses an event, and says so.
          expect(w.verdict).toBe("failed");
          expect(w.failure?.eventIndex).toBe(115);
          expect(w.failure?.error).toBe("AssertionError");
          expect(w.failure?.story.some((r) => r.includes("'add-1-20'"))).toBe(true);
        });
      } else {
        it(`${address} without --follow-log: the dumped counter and tasks`, () => {
          const { report } = replayLoadedDump(dump, { workers: [address] });
          const [w] = report.workers;
          expectReplayedToTheEnd(w, events);
          // docs/replay.md: the shuffles diverge on the way, at a set-order choice only.
          expect(w.verdict).toBe(file.startsWith("shuffle") ? "converged" : "exact");
          expect(w.ok).toBe(true);
          expect(w.log.steered).toBeNull();
        });
      }
    }
  });
}

describe("replay details", () => {
  it("reports the type names Dask reports and the scheduler's sizes for scattered data", async () => {
    const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
    const { states } = replayLoadedDump(dump);
    const computed = states.get("tcp://127.0.0.1:37641")?.tasks.get("big-0");
    expect(computed?.type).toBe("list");
    const scattered = states.get("tcp://127.0.0.1:45213")?.tasks.get("big-0");
    expect(scattered?.state).toBe("memory");
    expect(scattered?.nbytes).toBe(7_200_056);
    expect(scattered?.type).toBe("list");
    const erred = states.get("tcp://127.0.0.1:45213");
    const errors = [...(erred?.tasks.values() ?? [])].filter((t) => t.state === "error");
    expect(errors.map((t) => t.exceptionText)).toEqual(["ValueError('bad input 1')"]);
  });

  it("notices records of an unknown stimulus after the last event's", async () => {
    const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
    const address = "tcp://127.0.0.1:45213";
    const w = dump.workers.get(address) as WorkerDump;
    const last = w.log[w.log.length - 1];
    const time = last[last.length - 1] as number;
    const extra = ["slow-0", "memory", "memory", "memory", {}, "bogus-1", time + 1];
    const edited: ClusterDump = {
      ...dump,
      workers: new Map([[address, { ...w, log: [...w.log, extra] }]]),
    };
    const [r] = replayLoadedDump(edited).report.workers;
    expect(r.log.unexplainedRecords).toBe(1);
    expect(r.coverage.notes).toContain(
      "the log holds records of stimuli the stimulus log does not (first: bogus-1 after the last event): they are skipped",
    );
  });

  it("says why a worker that did not answer the dump cannot be replayed", async () => {
    const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
    const gone = "tcp://127.0.0.1:5";
    const edited: ClusterDump = {
      ...dump,
      unavailableWorkers: new Map([[gone, "OSError('gone')"]]),
    };
    expect(() => replayLoadedDump(edited, { workers: [gone] })).toThrow(
      `worker ${gone} cannot be replayed: it did not answer the dump (OSError('gone')) (workers: tcp://127.0.0.1:37641, tcp://127.0.0.1:45213)`,
    );
  });

  it("quotes an asked worker that would not read as an address", async () => {
    const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
    expect(() => replayLoadedDump(dump, { workers: [""] })).toThrow('no worker "" in the dump');
    expect(() => replayLoadedDump(dump, { workers: [" tcp://a:1\n"] })).toThrow(
      'no worker " tcp://a:1\\n" in the dump',
    );
    // A C1 control (CSI), which JSON leaves raw, is escaped too.
    expect(() => replayLoadedDump(dump, { workers: ["\u009b31m"] })).toThrow(
      'no worker "\\u009b31m" in the dump',
    );
    expect(() => replayLoadedDump(dump, { workers: ["tcp://a:1"] })).toThrow(
      "no worker tcp://a:1 in the dump",
    );
  });

  it("reports progress from 0 to every event, a worker that failed included", async () => {
    const tree = await loadDump(sharedPath("dumps", "tree.msgpack.gz"));
    const calls: [number, number][] = [];
    const { report } = replayLoadedDump(tree, {
      onProgress: (done, total) => calls.push([done, total]),
    });
    // Without --follow-log, :33899 stops at event 115 of 862.
    expect(report.workers.map((w) => w.verdict)).toEqual(["failed", "exact"]);
    expect(calls[0]).toEqual([0, 862 + 753]);
    expect(calls[calls.length - 1]).toEqual([862 + 753, 862 + 753]);
    expect(calls.every(([done], i) => i === 0 || done >= calls[i - 1][0])).toBe(true);
  });

  it("replays a worker named twice once", async () => {
    const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
    const address = "tcp://127.0.0.1:45213";
    const { report, states } = replayLoadedDump(dump, { workers: [address, address] });
    expect(report.workers.map((w) => w.address)).toEqual([address]);
    expect([...states.keys()]).toEqual([address]);
  });

  it("replays the same workers from the msgpack and the later YAML dump of one cluster", async () => {
    const early = await loadDump(sharedPath("dumps", "shuffle.msgpack.gz"));
    const { report } = replayLoadedDump(early, { followLog: true });
    expect(report.ok).toBe(true);
    expect(report.workers.map((w) => w.transitionCounter.replayed)).toEqual([562, 599, 510]);
  });
});
