import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it, vi } from "vitest";
import { main } from "./state.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-bench-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = {
  nthreads: 1,
  address: "127.0.0.1:1",
  resources: {},
  transfer_incoming_count_limit: 9999,
  transfer_incoming_bytes_limit: null,
  transfer_message_bytes_limit: null,
  transfer_incoming_bytes_throttle_threshold: 10000000,
  validate: false,
  transition_counter_max: false,
};

/** One task computed and finished: 1 Execute and 1 TaskFinishedMsg, 4 transitions. */
function writeStream(name: string, final: Record<string, number>): void {
  const compute = {
    cls: "ComputeTaskEvent",
    stimulus_id: "c1",
    key: "x-1",
    run_id: 1,
    who_has: {},
    nbytes: {},
    priority: [0, 1],
    duration: 1.0,
    run_spec: null,
    function: null,
    args: null,
    kwargs: null,
    resource_restrictions: {},
    actor: false,
    annotations: {},
    span_id: null,
  };
  const done = {
    cls: "ExecuteSuccessEvent",
    stimulus_id: "e1",
    key: "x-1",
    run_id: 1,
    value: 1,
    start: 0.0,
    stop: 1.0,
    nbytes: 28,
    type: "int",
  };
  const lines = [{ name, config, format_version: 2 }, compute, done, { final }];
  writeFileSync(
    join(dir, `${name}.jsonl.gz`),
    gzipSync(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`),
  );
}

writeStream("one", { events: 2, instructions: 2, transition_counter: 4, tasks: 1 });
writeStream("wrong", { events: 2, instructions: 2, transition_counter: 5, tasks: 1 });

async function bench(
  ...args: string[]
): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  const out: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
  const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    const code = await main(["--dir", dir, "--tasks", "0", "--runs", "3", ...args]);
    return { code, lines: out.map((l) => JSON.parse(l) as Record<string, unknown>) };
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
  });

  it("reports a replay that ends elsewhere than the stream's final line, and fails", async () => {
    const { code, lines } = await bench("--streams", "wrong");
    expect(code).toBe(1);
    expect(String(lines.find((l) => l.bench === "state")?.final_check)).toMatch(/^MISMATCH/);
  });

  const python = spawnSync("python3", ["--version"]).status === 0;
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

  it("refuses bad options and unknown streams with a clear message", async () => {
    await expect(bench("--runs", "x")).rejects.toThrow("--runs must be a positive integer");
    await expect(bench("--warmup", "-1")).rejects.toThrow("--warmup must be an integer >= 0");
    await expect(bench("--streams", "nope")).rejects.toThrow(
      /no stream "nope" in .* \(there: one, wrong\)/,
    );
  });
});
