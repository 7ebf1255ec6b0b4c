import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { formatReport, formatWorker } from "./formatReport.ts";
import { loadDump, replayDump, replayLoadedDump } from "./replayDump.ts";
import type { DumpReplayReport, LogDivergence, WorkerReplayReport } from "./report.ts";
import { sharedPath } from "./testPaths.ts";

let report: DumpReplayReport;

beforeAll(async () => {
  const dump = await loadDump(sharedPath("dumps", "errors-and-cancel.msgpack.gz"));
  report = replayLoadedDump(dump, { workers: ["tcp://127.0.0.1:45213"] }).report;
});

const divergence = (stimulusId: string): LogDivergence => ({
  eventIndex: 3,
  eventClass: "ComputeTaskEvent",
  stimulusId,
  recordIndex: 0,
  expected: "('x', 'compute-task', 'released', 's')",
  replayed: null,
  missing: 1,
  extra: 0,
});

/** The replayed worker's report with `edits` (the log's merged in). */
function worker(
  edits: Partial<Omit<WorkerReplayReport, "log">> & { log?: Partial<WorkerReplayReport["log"]> },
): WorkerReplayReport {
  const w = report.workers[0];
  return { ...w, ...edits, log: { ...w.log, ...edits.log } };
}

describe("the text report of a worker", () => {
  it("lists at most maxTasks mismatches and says how many more there are", () => {
    const mismatch = (i: number) => ({
      key: `t-${i}`,
      dumped: "memory",
      replayed: null,
      fields: [],
    });
    const tasks = (n: number) => ({
      ...report.workers[0].tasks,
      mismatches: Array.from({ length: n }, (_, i) => mismatch(i)),
    });
    const exactly = formatWorker(worker({ verdict: "diverged", tasks: tasks(3) }), { maxTasks: 3 });
    expect(exactly).toContain("t-2: dumped memory, replayed (forgotten)");
    expect(exactly).not.toContain("more");
    const over = formatWorker(worker({ verdict: "diverged", tasks: tasks(4) }), { maxTasks: 3 });
    expect(over).not.toContain("t-3:");
    expect(over).toContain("… and 1 more (--json lists them all)");
    // By default 20, as docs/replay.md says.
    const byDefault = formatWorker(worker({ verdict: "diverged", tasks: tasks(21) }));
    expect(byDefault).toContain("t-19: dumped memory");
    expect(byDefault).not.toContain("t-20:");
    expect(byDefault).toContain("… and 1 more (--json lists them all)");
  });

  it("shows the first unverifiable stimulus only when no stimulus diverged", () => {
    const both = worker({
      log: { firstDivergence: divergence("divergent"), firstUnverifiable: divergence("unknown") },
    });
    expect(formatWorker(both)).toContain("first divergence at event 3");
    expect(formatWorker(both)).not.toContain("first unverifiable stimulus");
    const alone = worker({ log: { firstUnverifiable: divergence("unknown") } });
    expect(formatWorker(alone)).toContain(
      "first unverifiable stimulus at event 3 (ComputeTaskEvent unknown), record 0:",
    );
  });
});

describe("the text report of a dump", () => {
  it("hints at --follow-log only to a replay that did not follow the log", () => {
    const diverged = {
      verdict: "diverged" as const,
      ok: false,
      log: { firstDivergence: divergence("s") },
    };
    const hint = "hint: rerun with --follow-log";
    const without = { ...report, ok: false, workers: [worker({ ...diverged, followLog: false })] };
    expect(formatReport(without)).toContain(hint);
    const followed = { ...report, ok: false, workers: [worker({ ...diverged, followLog: true })] };
    expect(formatReport(followed)).not.toContain(hint);
    // Under the divergence, what docs/replay.md says each prints.
    expect(formatReport(without)).toContain(
      "    Python's set order may have chosen differently here: --follow-log follows the dumped choices",
    );
    expect(formatReport(followed)).toContain(
      "    --follow-log could not follow the dumped choice here: not a matter of Python's set order",
    );
    expect(formatReport(followed)).not.toContain("set order may have chosen");
  });
});

describe("docs/replay.md's text output", () => {
  it("is what weft replay prints for tree.msgpack.gz", async () => {
    const doc = readFileSync(new URL("../../docs/replay.md", import.meta.url), "utf8");
    const command = "$ npm run weft -- replay ../shared/dumps/tree.msgpack.gz\n";
    const start = doc.indexOf(command) + command.length;
    const shown = doc.slice(start, doc.indexOf("\n```", start));
    const file = sharedPath("dumps", "tree.msgpack.gz");
    const text = formatReport((await replayDump(file)).report);
    expect(text.replaceAll(file, "../shared/dumps/tree.msgpack.gz")).toBe(shown);
  });
});

describe("a dump of another release of distributed", () => {
  it("says so: a difference may come from the versions", () => {
    const lines = formatReport({ ...report, distributed: "2024.1.0" }).split("\n");
    expect(lines[1]).toBe(
      "note: the dump was written by distributed 2024.1.0; weft reads the dumps of 2023.7.0, whose worker it ports: a difference may come from the versions",
    );
    expect(formatReport(report)).not.toContain("weft reads the dumps");
    expect(formatReport({ ...report, distributed: null })).not.toContain("weft reads the dumps");
  });
});

describe("strings a dump carries", () => {
  it("are quoted when they hold control characters, so they cannot break a line or drive the terminal", () => {
    const hostile = {
      ...report,
      distributed: "2023.7.0\nFORGED: EXACT",
      workers: [
        worker({
          address: "tcp://\u001b[2Jx:1",
          verdict: "diverged",
          tasks: {
            ...report.workers[0].tasks,
            mismatches: [{ key: "k\r\u009b1", dumped: "memory", replayed: null, fields: [] }],
          },
          log: { firstDivergence: divergence("s\u2028id") },
        }),
      ],
      unavailableWorkers: [{ address: "tcp://y:2\n", reason: "gone\u0007" }],
    };
    const text = formatReport(hostile);
    expect(text).toContain('distributed "2023.7.0\\nFORGED: EXACT"');
    expect(text).toContain('"tcp://\\u001b[2Jx:1": DIVERGED');
    expect(text).toContain('    "k\\r\\u009b1": dumped memory');
    expect(text).toContain('(ComputeTaskEvent "s\\u2028id")');
    expect(text).toContain(
      'note: worker "tcp://y:2\\n" is not in the dump (it did not answer: "gone\\u0007")',
    );
    const controls = [...text].filter((ch) => {
      const c = ch.charCodeAt(0);
      return (c < 0x20 && ch !== "\n") || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029;
    });
    expect(controls).toEqual([]);
    expect(text).toContain(
      'note: the dump was written by distributed "2023.7.0\\nFORGED: EXACT"; weft reads',
    );
    // Plain strings stay as they are.
    expect(formatReport(report)).toContain("tcp://127.0.0.1:45213: ");
  });
});
