import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runGcScript } from "../util/testGcScript.ts";
import { runStateBench } from "./stateBench.ts";
import type { BenchOutput } from "./stateBenchCommand.ts";
import { writeOneTaskStream } from "./testStreams.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-state-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeOneTaskStream(dir, "one");

const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));

/**
 * Run in a child `node --expose-gc`: replays the one-task stream (2 warm-up, 3 timed
 * runs) and prints, after each of the collections a replay makes before it starts,
 * how many state machines that handled stimuli are still alive (the keeper aside).
 * Counted by the 16 MB each is given to hold, not by WeakRefs: those keep their
 * target alive until the synchronous run that made them ends.
 */
const ALIVE_AT_EACH_GC = `
  const [stateBench, workerState, keptShapes, dir] = process.argv.slice(1);
  const { runStateBench } = await import(stateBench);
  const { WorkerState } = await import(workerState);
  const { keptWorkerState } = await import(keptShapes);
  const PAYLOAD = 2_000_000;
  const handle = WorkerState.prototype.handleStimulus;
  WorkerState.prototype.handleStimulus = function (...events) {
    // The keeper (made, and driven, before keptWorkerState() returns it) is left out.
    const keeper = keptWorkerState();
    if (this.payload === undefined && keeper !== null && this !== keeper) {
      this.payload = new Array(PAYLOAD).fill(0.5);
    }
    return handle.apply(this, events);
  };
  const realGc = globalThis.gc;
  let calls = 0;
  let base = 0;
  const alive = [];
  globalThis.gc = () => {
    realGc();
    if (++calls % 2 === 0) {
      const used = process.memoryUsage().heapUsed;
      if (calls === 2) base = used;
      alive.push(Math.round((used - base) / (PAYLOAD * 8)));
    }
  };
  const quiet = { write: () => true };
  const code = runStateBench({ dir, runs: 3, warmup: 2, tasks: 0 }, { stdout: quiet, stderr: quiet }, "t");
  console.log(JSON.stringify({ code, alive }));
`;

describe("runStateBench", () => {
  it("collects the previous replay's state machine, warm-up or timed, before each replay", () => {
    const got = runGcScript(ALIVE_AT_EACH_GC, [
      here("./stateBench.ts"),
      here("../worker/state/workerState.ts"),
      here("../worker/state/keptShapes.ts"),
      dir,
    ]);
    expect(got).toEqual({ code: 0, alive: [0, 0, 0, 0, 0] });
  });
});

describe("runStateBench without streams", () => {
  /** What runStateBench said on stderr for `--dir given`, and its exit code. */
  function said(given: string): { code: number; err: string } {
    let err = "";
    const stderr = {
      write: (s: string) => {
        err += s;
        return true;
      },
    };
    const stdout = { write: () => true };
    const code = runStateBench(
      { dir: given, runs: 1, warmup: 0, tasks: 0 },
      { stdout, stderr } as unknown as BenchOutput,
      "t",
    );
    return { code, err };
  }

  it("says once that the directory is missing, where it looked and to give --dir, exit 2", () => {
    // It said Node's "ENOENT: no such file or directory, scandir …", then that the
    // directory held no streams: two lines, neither naming where it looked.
    const given = join("..", "no-such-weft-bench-dir");
    expect(said(given)).toEqual({
      code: 2,
      err: `t: no such directory: ${given} (looked in ${resolve(given)}: --dir is relative to the current directory); give --dir the directory of the recorded streams\n`,
    });
  });

  it("says that a directory without streams has none, exit 2", () => {
    const empty = mkdtempSync(join(tmpdir(), "weft-state-bench-empty-"));
    try {
      expect(said(empty)).toEqual({
        code: 2,
        err: `t: no *.jsonl.gz streams in ${empty}; give --dir the directory of the recorded streams\n`,
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
