import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ONE_TASK_FINAL, writeOneTaskStream } from "../src/bench/testStreams.ts";
import { runWithReaderGone } from "../src/util/testReaderGone.ts";
import { runScript } from "./benchCli.ts";
import { main as cluster } from "./cluster.ts";
import { main as clusterAb } from "./clusterAb.ts";
import { main as largeArgs } from "./largeArgs.ts";
import { main as lean } from "./leanIndependent.ts";
import { main as simScale } from "./sim-scale.ts";
import { main as soak } from "./soak.ts";
import { main as state } from "./state.ts";
import { main as stateAb } from "./stateAb.ts";
import { main as wire } from "./wire.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), "weft-bench-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeOneTaskStream(dir, "one");
writeOneTaskStream(dir, "wrong", { ...ONE_TASK_FINAL, transition_counter: 5 });

/** `runScript(name, main)` with `argv`: its exit code and what it wrote on stderr. */
async function run(
  name: string,
  main: (argv: readonly string[]) => Promise<number>,
  ...argv: string[]
): Promise<{ code: number; err: string }> {
  let err = "";
  // Commander writes its refusals on process.stderr itself.
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((s) => {
    err += String(s);
    return true;
  });
  const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    return { code: await runScript(name, main, argv), err };
  } finally {
    spy.mockRestore();
    out.mockRestore();
  }
}

describe("the bench:* scripts' exit codes", () => {
  it("2 for a bad option value, with one line naming the script, in every script", async () => {
    const cases: [string, (argv: readonly string[]) => Promise<number>, string[], string][] = [
      ["bench:state", state, ["--runs", "0"], "--runs must be a positive integer"],
      [
        "bench:state",
        state,
        ["--dir", dir, "--tasks", "0", "--streams", "nope"],
        'no stream "nope"',
      ],
      ["bench:cluster", cluster, ["--scale", "11"], "--scale must be a number > 0"],
      ["bench:cluster", cluster, ["--graphs", "nope"], 'unknown graph "nope"'],
      ["bench:cluster-ab", clusterAb, ["--base", ROOT, "--pairs", "0x1"], "--pairs must be"],
      ["bench:cluster-ab", clusterAb, ["--base", dir], "is not a weft checkout"],
      ["bench:state-ab", stateAb, ["--base", ROOT, "--dir", dir, "--warmup", "x"], "--warmup"],
      [
        "bench:state-ab",
        stateAb,
        ["--base", ROOT, "--dir", dir, "--streams", "x"],
        'no stream "x"',
      ],
      ["bench:lean", lean, ["--pairs", "0"], "--pairs must be a positive integer"],
      ["bench:wire", wire, ["--batch", "100001"], "--batch must be at most 100000"],
      ["bench:large-args", largeArgs, ["--mib", "4096"], "--mib must be at most 4095"],
      ["bench:sim", simScale, ["--workload", "nope"], "--workload must be one of"],
      ["bench:soak", soak, ["--protocol", "udp"], "--protocol must be inproc or tcp"],
    ];
    for (const [name, main, argv, message] of cases) {
      const r = await run(name, main, ...argv);
      expect(r.code, `${name} ${argv.join(" ")}`).toBe(2);
      expect(r.err, `${name} ${argv.join(" ")}`).toMatch(new RegExp(`^${name}: [^\\n]*\\n$`));
      expect(r.err).toContain(message);
    }
  });

  it("2 for what commander refuses (an unknown option, a missing value), 0 for --help", async () => {
    for (const argv of [["--nope"], ["--runs"]]) {
      const r = await run("bench:wire", wire, ...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toMatch(/^error: [^\n]*\n$/);
    }
    const missing = await run("bench:cluster-ab", clusterAb);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe("error: required option '--base <dir>' not specified\n");
    expect((await run("bench:wire", wire, "--help")).code).toBe(0);
  });

  it("1 for a run that fails: a replay that ends elsewhere than its stream", async () => {
    // bench:state says so in its JSON line; bench:lean throws.
    expect(
      (await run("bench:state", state, "--dir", dir, "--streams", "wrong", "--tasks", "0")).code,
    ).toBe(1);
    const r = await run(
      "bench:lean",
      lean,
      "--stream",
      join(dir, "wrong.jsonl.gz"),
      "--pairs",
      "1",
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^bench:lean: port replay of wrong: /);
  });

  it("the npm script itself exits 2, with one line on stderr", () => {
    const script = fileURLToPath(new URL("./wire.ts", import.meta.url));
    const r = spawnSync(process.execPath, ["--import", "tsx", script, "--batch", "0x10"], {
      encoding: "utf8",
      timeout: 50_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("bench:wire: --batch must be a positive integer\n");
    expect(r.stdout).toBe("");
  });

  it("a script whose stdout's reader has gone ends quietly, as `cat` does (npm run bench:wire | head -1)", async () => {
    const script = fileURLToPath(new URL("./wire.ts", import.meta.url));
    // Closed before the script writes its first line: that write fails with EPIPE.
    const { code, other: err } = await runWithReaderGone(
      [script, "--runs", "1", "--batch", "10"],
      "stdout",
    );
    expect(err).toBe("");
    expect(code).toBe(0);
  });
});
