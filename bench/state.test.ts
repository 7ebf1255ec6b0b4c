import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { ONE_TASK_FINAL, writeOneTaskStream } from "../src/bench/testStreams.ts";
import { main } from "./state.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-bench-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeOneTaskStream(dir, "one");
writeOneTaskStream(dir, "wrong", { ...ONE_TASK_FINAL, transition_counter: 5 });

async function bench(
  ...args: string[]
): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  let out = "";
  const log = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
    out += String(s);
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    const code = await main(["--dir", dir, "--tasks", "0", "--runs", "3", ...args]);
    const lines = out.split("\n").filter((l) => l !== "");
    return { code, lines: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
}

describe("bench:state", () => {
  it("replays a stream after the warm-up runs and checks its final line", async () => {
    const { code, lines } = await bench("--streams", "one", "--warmup", "2");
    expect(code).toBe(0);
    const line = lines.find((l) => l.bench === "state");
    expect(line).toMatchObject({ stream: "one", runs: 3, warmup_runs: 2, final_check: "ok" });
    // The timed runs' minor page faults, and the machine's cost of a fresh page, first.
    expect(line?.minor_faults_per_run).toBeGreaterThanOrEqual(0);
    const machine = lines[0];
    expect(machine.bench).toBe("machine");
    expect(machine.fresh_page_us === null || Number(machine.fresh_page_us) > 0).toBe(true);
  });

  it("measures the heap bytes a task with --tasks finished tasks held, logs empty and full", async () => {
    const { code, lines } = await bench("--streams", "one", "--runs", "1", "--tasks", "2000");
    expect(code).toBe(0);
    expect(lines.at(-1)).toMatchObject({
      bench: "state-memory",
      tasks: 2000,
      heap_bytes_per_task: expect.any(Number),
      heap_bytes_per_task_with_full_logs: expect.any(Number),
      reference_bytes_per_task: 2400,
    });
  });

  it("reports a replay that ends elsewhere than the stream's final line, and fails", async () => {
    const { code, lines } = await bench("--streams", "wrong");
    expect(code).toBe(1);
    expect(String(lines.find((l) => l.bench === "state")?.final_check)).toMatch(/^MISMATCH/);
  });

  it("fails, exit 2, for a --dir without streams, instead of measuring nothing", async () => {
    const empty = mkdtempSync(join(tmpdir(), "weft-bench-state-empty-"));
    let err = "";
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((s) => {
      err += String(s);
      return true;
    });
    const log = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(await main(["--dir", empty, "--tasks", "0"])).toBe(2);
    } finally {
      spy.mockRestore();
      log.mockRestore();
      rmSync(empty, { recursive: true, force: true });
    }
    expect(err).toBe(
      `bench:state: no *.jsonl.gz streams in ${empty}; give --dir the directory of the recorded streams\n`,
    );
  });

  // The reference's timing needs Python 3 and ../shared/reference (as tools/oracle does).
  const python =
    spawnSync("python3", ["--version"]).status === 0 &&
    existsSync(
      fileURLToPath(new URL("../../shared/reference/worker_state_machine.py", import.meta.url)),
    );
  it.runIf(python)("times the reference on the same stream with --reference-here", async () => {
    const { code, lines } = await bench("--streams", "one", "--reference-here");
    expect(code).toBe(0);
    const line = lines.find((l) => l.bench === "state");
    expect(line?.reference_here_transitions_per_s).toBeGreaterThan(0);
    expect(line?.ratio_vs_reference_here).toBeGreaterThan(0);
  });

  it.runIf(python)(
    "fails when the reference's replay does not end as the stream says",
    async () => {
      await expect(bench("--streams", "wrong", "--reference-here")).rejects.toThrow(
        /the reference's replay of .*wrong\.jsonl\.gz failed:[\s\S]*MISMATCH/,
      );
    },
  );

  it("names a stream file it cannot read, a gzip stream cut short too", async () => {
    const cut = mkdtempSync(join(tmpdir(), "weft-bench-state-cut-"));
    onTestFinished(() => rmSync(cut, { recursive: true, force: true }));
    writeOneTaskStream(cut, "one");
    const path = join(cut, "one.jsonl.gz");
    writeFileSync(path, readFileSync(path).subarray(0, 40));
    await expect(bench("--dir", cut)).rejects.toThrow(
      `${path}: truncated gzip data (the file ends too early)`,
    );
  });

  it("refuses bad options and unknown streams with a clear message", async () => {
    await expect(bench("--runs", "x")).rejects.toThrow("--runs must be a positive integer");
    await expect(bench("--warmup", "-1")).rejects.toThrow("--warmup must be an integer >= 0");
    // Number("") is 0: an empty value ran no warm-up and held no tasks, silently.
    await expect(bench("--warmup", "")).rejects.toThrow("--warmup must be an integer >= 0");
    await expect(bench("--tasks", " ")).rejects.toThrow("--tasks must be an integer >= 0");
    await expect(bench("--streams", "nope")).rejects.toThrow(
      /no stream "nope" in .* \(there: one, wrong\)/,
    );
  });
});
