/** `weft sim`, run through the real `weft` program with string buffers for its streams. */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { runWeft } from "../cli/testContext.ts";
import { loadDump } from "../replay/replayDump.ts";

const weft = (...args: string[]) => runWeft(args);

test("weft sim --seed N runs one cluster", async () => {
  const r = await weft("sim", "--seed", "4", "--tasks", "12", "--workers", "2");
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^seed 4: ok random\(12\)/);
});

test("weft sim --workload configured runs the loads reading one config, scattered in some runs", async () => {
  const r = await weft(
    "sim",
    "--runs",
    "2",
    "--from",
    "2",
    "--workload",
    "configured",
    "--tasks",
    "30",
    "--verbose",
  );
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^seed 2: ok configured\(30, config scattered\)/m);
  expect(r.out).toMatch(/^seed 3: ok configured\(30\)/m);
});

test("weft sim --runs COUNT --from SEED closes with the tally", async () => {
  const r = await weft("sim", "--runs", "3", "--from", "7", "--tasks", "10");
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/fault: death/);
  expect(r.out.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed");
});

test("weft sim --workload scatter: the summary counts what the scatters met", async () => {
  const r = await weft(
    "sim",
    "--workload",
    "scatter",
    "--runs",
    "3",
    "--from",
    "1",
    "--tasks",
    "12",
  );
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^scatter: values +\d+ in 3 runs$/m);
  expect(r.out).toMatch(/^scatter: lost +\d+ in \d runs?$/m);
  expect(r.out.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed");
  // The other workloads' summaries have no scatter rows.
  expect((await weft("sim", "--runs", "2", "--tasks", "10")).out).not.toContain("scatter:");
  // Nor replicate rows where no client replicated (seeds 1 to 3 do not).
  expect(r.out).not.toContain("replicate:");
});

test("weft sim --workload scatter: the summary counts the replicate requests when there were any", async () => {
  // Three small scatter runs from seed 4, with more options (as they were before the
  // client fired and forgot keys).
  const base = "sim --workload scatter --runs 3 --from 4 --tasks 12 --fire-and-forget 0";
  const scatterRuns = (...more: string[]) => weft(...base.split(" "), ...more);
  const r = await scatterRuns("--rebalance", "0", "--retire", "0");
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^replicate: requests +4 in 2 runs$/m);
  expect(r.out).toMatch(/^replicate: copiesArrived +\d+ in \d runs?$/m);
  expect(r.out).toMatch(/^replicate: failedTargetLeft +\d+ in \d runs?$/m);
  expect(r.out.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed");
  // --replicate sets the share of runs that replicate: none with 0.
  const none = await scatterRuns("--replicate", "0");
  expect(none.code).toBe(0);
  expect(none.out).not.toContain("replicate:");
  const bad = await weft("sim", "--workload", "scatter", "--replicate", "1.5");
  expect(bad.code).toBe(2);
  expect(bad.err).toContain("expected a number from 0 to 1, got '1.5'");
  // --replicate-one sets the share of requests for one copy.
  const one = await scatterRuns("--replicate-one", "1");
  expect(one.code).toBe(0);
  expect(one.out).toMatch(/^replicate: requests +\d+ in \d runs?$/m);
  // --rebalance sets the share of requests that are rebalances.
  const rebalances = await scatterRuns("--rebalance", "1");
  expect(rebalances.code).toBe(0);
  expect(rebalances.out).toMatch(/^replicate: rebalances +4 in 2 runs$/m);
  expect(rebalances.out).toMatch(/^replicate: requests +0 in 0 runs$/m);
  const badOne = await weft("sim", "--workload", "scatter", "--replicate-one", "-1");
  expect(badOne.code).toBe(2);
  expect(badOne.err).toContain("expected a number from 0 to 1, got '-1'");
});

test("weft sim --runs draws its bar on a terminal without changing the terminal's modes", async () => {
  // A process killed mid-run (SIGKILL, a crash) cannot restore the terminal: a hidden
  // cursor and line wrapping turned off would stay so. The bar changes no mode.
  const r = await runWeft(["sim", "--runs", "2", "--tasks", "10"], true);
  expect(r.code).toBe(0);
  expect(r.err).toContain("seeds");
  expect(r.err).not.toContain("\x1b[?25l");
  expect(r.err).not.toContain("\x1b[?7l");
});

test("a failing run prints the replay command and the smallest case, and exits 1", async () => {
  const r = await weft("sim", "--seed", "1", "--variant", "corrupt-occupancy", "--tasks", "10");
  expect(r.code).toBe(1);
  expect(r.out).toMatch(/FAILED \(invalid-state\)/);
  expect(r.out).toContain("replay: weft sim --seed 1 --tasks 10 --variant corrupt-occupancy");
  expect(r.out).toContain(
    "inspect: weft sim --seed 1 --tasks 10 --variant corrupt-occupancy --dump run.msgpack.gz, then weft story KEY run.msgpack.gz",
  );
  expect(r.out).toMatch(/smallest failing case|no smaller failing case/);
});

test("weft sim --faults given more than once runs with every list, as one", async () => {
  // Commander kept the last: death=5 was dropped, and the run had no fault at all.
  const args = ["sim", "--seed", "3", "--tasks", "20"];
  const twice = await weft(...args, "--faults", "death=5", "--faults", "network=0");
  const once = await weft(...args, "--faults", "death=5,network=0");
  expect(twice.out).toMatch(/faults: death \d+/);
  expect(twice).toEqual(once);
  const named = await weft(...args, "--faults", "death", "--faults", "death=1");
  expect(named.code).toBe(2);
  expect(named.err).toMatch(/fault death is named twice/);
});

test("bad usage exits 2; --help documents the faults, variants and workloads", async () => {
  expect((await weft("sim", "--faults", "meteor")).code).toBe(2);
  expect((await weft("sim", "--workers", "0")).code).toBe(2);
  // Refused at once: 5,000,000 filled gigabytes before they had all registered.
  const many = await weft("sim", "--workers", "5000000");
  expect(many.code).toBe(2);
  expect(many.err.split("\n")[0]).toBe(
    "error: --workers must be at most 10000, got 5000000 (a run's cost grows as the square of its workers: 10000 take minutes)",
  );
  expect((await weft("sim", "--workload", "nope")).code).toBe(2);
  const help = await weft("sim", "--help");
  expect(help.out).toMatch(/partition/);
  expect(help.out).toMatch(/drop-gather-completion/);
  expect(help.out).toMatch(/--actors <share>/);
  expect(help.out).toMatch(/"pinned", "configured", "scatter"/);
  expect(help.out).toMatch(/loads \(configured\)/);
  expect((await weft("sim", "--actors", "2")).code).toBe(2);
});

/** Every line of `out`, parsed: a line that is not JSON fails the test. */
function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test("--json: a failing seed, and its shrink result, are JSON lines only", async () => {
  const r = await weft("sim", "--seed", "2", "--variant", "wrong-value", "--tasks", "6", "--json");
  expect(r.code).toBe(1);
  const lines = jsonLines(r.out);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ seed: 2, ok: false, failure: { kind: "wrong-value" } });
  expect(lines[1].shrink).toMatchObject({
    smallest: { ok: false, failure: { kind: "wrong-value" } },
  });
});

test("--json --runs: runs, first failure, shrink result and tally are JSON lines only", async () => {
  const r = await weft("sim", "--runs", "2", "--variant", "wrong-value", "--tasks", "6", "--json");
  expect(r.code).toBe(1);
  const lines = jsonLines(r.out);
  expect(lines.map((l) => Object.keys(l)[0])).toEqual([
    "seed",
    "seed",
    "firstFailure",
    "shrink",
    "summary",
  ]);
  expect(lines[2].firstFailure).toMatchObject({ seed: 1, command: expect.any(String) });
  expect(lines[4].summary).toMatchObject({ runs: 2, passed: 0, failed: 2, failingSeeds: [1, 2] });
});

test("--verbose without --runs is refused, not ignored", async () => {
  const r = await weft("sim", "--verbose");
  expect(r).toMatchObject({ code: 2, out: "" });
  expect(r.err).toContain("--verbose needs --runs (one run prints its result whole)");
});

test("--verbose with --json is refused, not ignored", async () => {
  const r = await weft("sim", "--runs", "2", "--verbose", "--json");
  expect(r).toMatchObject({ code: 2, out: "" });
  expect(r.err).toContain("--verbose and --json both print a line per run: give one");
});

test("--from without --runs is refused, not ignored", async () => {
  const r = await weft("sim", "--from", "5");
  expect(r.code).toBe(2);
  expect(r.err).toContain("--from needs --runs (one run takes --seed)");
  expect(r.out).toBe("");
  const both = await weft("sim", "--runs", "2", "--from", "5", "--seed", "9");
  expect(both.code).toBe(2);
  expect(both.err).toContain("--seed and --from both name the first seed of --runs");
  expect(both.out).toBe("");
});

test("--dump naming a directory is refused before the run, rather than write DIR.msgpack.gz or DIR/.msgpack.gz", async () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-sim-dump-dir-"));
  try {
    for (const name of [dir, `${dir}/`, `${join(dir, "new")}/`]) {
      const r = await weft("sim", "--tasks", "4", "--faults", "none", "--dump", name);
      expect(r).toEqual({
        code: 2,
        out: "",
        err: `weft sim: --dump ${name}: ${name.endsWith("/") ? "it names a directory (it ends with /)" : "it is a directory"}\n`,
      });
    }
    const empty = await weft("sim", "--tasks", "4", "--faults", "none", "--dump", "");
    expect(empty).toEqual({ code: 2, out: "", err: "weft sim: --dump : the name is empty\n" });
    expect(existsSync(`${dir}.msgpack.gz`)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an interval for rounds turned off is refused, not ignored", async () => {
  const steal = await weft("sim", "--no-work-stealing", "--work-stealing-interval", "1");
  expect(steal).toMatchObject({ code: 2, out: "" });
  expect(steal.err.split("\n")[0]).toBe(
    "error: --work-stealing-interval sets the rounds that --no-work-stealing turns off: give one",
  );
  const amm = await weft(
    "sim",
    "--active-memory-manager-interval",
    "5",
    "--no-active-memory-manager",
  );
  expect(amm).toMatchObject({ code: 2, out: "" });
  expect(amm.err.split("\n")[0]).toBe(
    "error: --active-memory-manager-interval sets the rounds that --no-active-memory-manager turns off: give one",
  );
});

test("--validate-every spaces the whole checks, is auto or an integer ≥ 1, and needs validation on", async () => {
  const spaced = await weft("sim", "--seed", "3", "--validate-every", "5", "--json");
  expect(spaced.code).toBe(0);
  const r = JSON.parse(spaced.out) as { command: string; options: { validateEvery: unknown } };
  expect(r.options.validateEvery).toBe(5);
  expect(r.command).toBe("weft sim --seed 3 --validate-every 5");
  for (const bad of ["0", "x", "1.5"]) {
    const refused = await weft("sim", "--validate-every", bad);
    expect(refused).toMatchObject({ code: 2, out: "" });
    expect(refused.err.split("\n")[0]).toBe(
      `error: option '--validate-every <n|auto>' argument '${bad}' is invalid. expected auto or an integer ≥ 1, got '${bad}'`,
    );
  }
  const off = await weft("sim", "--no-validate", "--validate-every", "auto");
  expect(off).toMatchObject({ code: 2, out: "" });
  expect(off.err.split("\n")[0]).toBe(
    "error: --validate-every sets the checks that --no-validate turns off: give one",
  );
});

test("npm run sim:soak: a bad or unknown flag is a one-line error with the usage, exit 2", () => {
  const soak = fileURLToPath(new URL("./soak.ts", import.meta.url));
  const run = (...args: string[]) =>
    // Bounded: a synchronous child blocks this file's own test timeout.
    spawnSync(process.execPath, ["--import", "tsx", soak, ...args], {
      encoding: "utf8",
      timeout: 50_000,
    });
  const bad = run("--runs", "abc");
  expect(bad.status).toBe(2);
  expect(bad.stderr).toBe(
    'sim:soak: --runs must be an integer ≥ 1, got "abc"\nusage: npm run sim:soak -- [--runs N (100000)] [--from SEED (1)] [--threads T (cores)]\n',
  );
  // Trimmed before its check, " 2 " ran 2 seeds.
  const padded = run("--runs", " 2 ", "--threads", "1");
  expect(padded.status).toBe(2);
  expect(padded.stderr).toMatch(/^sim:soak: --runs must be an integer ≥ 1, got " 2 "\n/);
  // Past 2^53, as every integer of the command line says it: it was "must be an integer ≥ 1".
  const huge = run("--runs", "99999999999999999999");
  expect(huge.status).toBe(2);
  expect(huge.stderr).toMatch(
    /^sim:soak: --runs must be at most 9007199254740991 \(Number\.MAX_SAFE_INTEGER\), got "99999999999999999999"\n/,
  );
  const typo = run("--run", "3");
  expect(typo.status).toBe(2);
  expect(typo.stderr).toMatch(/^sim:soak: Unknown option '--run'/);
  const small = run("--runs", "2", "--from", "5", "--threads", "1");
  expect(small.status).toBe(0);
  expect(small.stdout).toMatch(/2 passed, 0 failed/);
});

test("weft sim: a worker removed for late heartbeats exits and is replaced (no false deadlock); hopeless latencies are refused", async () => {
  const slow = await weft("sim", "--faults", "none", "--latency", "1", "--no-shrink");
  expect(slow.code).toBe(0);
  expect(slow.out).toMatch(/^seed 1: ok /);
  const hopeless = await weft("sim", "--latency", "5");
  expect(hopeless.code).toBe(2);
  expect(hopeless.err).toMatch(/--latency must be at most half of heartbeatTimeout \(2 s\), got 5/);
});

test("the simulator's times take a unit as the scheduler's do: --latency 300ms is --latency 0.3", async () => {
  const run = (...args: string[]) =>
    weft("sim", "--seed", "3", "--tasks", "12", "--faults", "none", "--json", ...args);
  const bare = await run("--latency", "0.3", "--work-stealing-interval", "0.05");
  const units = await run("--latency", "300ms", "--work-stealing-interval", "50ms");
  expect(bare.code).toBe(0);
  expect(units.out).toBe(bare.out);
  // A plus sign, as --tasks +12 takes one: it was "not a duration: \"+0.3\"".
  const signed = await run("--latency", "+0.3", "--work-stealing-interval", "+50ms");
  expect(signed.out).toBe(bare.out);
  // Neither is the default's run: the units were read, not dropped.
  expect((await run()).out).not.toBe(bare.out);
  const tiny = await weft("sim", "--active-memory-manager-interval", "100us");
  expect(tiny.code).toBe(2);
  expect(tiny.err.split("\n")[0]).toMatch(
    /^error: --active-memory-manager-interval must be at least 0\.001/,
  );
});

test("options refused together are named by the flags typed, not the API's option names", async () => {
  const steal = await weft("sim", "--work-stealing-interval", "0.0001");
  expect(steal.code).toBe(2);
  expect(steal.err.split("\n")[0]).toBe(
    "error: --work-stealing-interval must be at least 0.001 (a millisecond, a real scheduler's least), got 0.0001",
  );
  const amm = await weft("sim", "--active-memory-manager-interval", "0.0005");
  expect(amm.err.split("\n")[0]).toMatch(
    /^error: --active-memory-manager-interval must be at least 0\.001/,
  );
  const big = await weft("sim", "--workload", "shuffle", "--tasks", "5000");
  expect(big.code).toBe(2);
  expect(big.err.split("\n")[0]).toMatch(
    /^error: --tasks: a shuffle workload of 5000 builds about/,
  );
  const empty = await weft("sim", "--faults", " ");
  expect(empty.code).toBe(2);
  expect(empty.err.split("\n")[0]).toBe(
    "error: --faults: empty fault list: give all, none or kind[=rate],…",
  );
});

test("--runs whose last seeds pass the largest safe integer is refused before running, exit 2", async () => {
  const r = await weft("sim", "--runs", "5", "--from", "9007199254740989", "--faults", "none");
  expect(r.code).toBe(2);
  expect(r.err).toContain("the seeds of --runs must stay within 9007199254740991");
  expect(r.out).toBe("");
  const edge = await weft("sim", "--runs", "3", "--from", "9007199254740989", "--tasks", "4");
  expect(edge.code).toBe(0);
});

test("an empty --seed or --from is refused, not read as seed 0", async () => {
  const seed = await weft("sim", "--seed", "", "--faults", "none");
  expect(seed.code).toBe(2);
  expect(seed.err).toContain("expected an integer ≥ 0, got ''");
  expect(seed.out).toBe("");
  const from = await weft("sim", "--runs", "1", "--from", " ", "--faults", "none");
  expect(from.code).toBe(2);
  expect(from.out).toBe("");
});

test("an integer past Number.MAX_SAFE_INTEGER is refused saying that bound, not as no integer", async () => {
  // It said "expected an integer ≥ 0" of 99999999999999999999, an integer: too large to be exact.
  for (const args of [
    ["--seed", "99999999999999999999"],
    ["--runs", "1e400"],
    ["--workers", "9007199254740992"],
  ]) {
    const r = await weft("sim", ...args, "--faults", "none");
    expect(r.code, args.join(" ")).toBe(2);
    expect(r.err, args.join(" ")).toContain(
      `expected an integer at most 9007199254740991 (Number.MAX_SAFE_INTEGER), got '${args[1]}'`,
    );
    expect(r.out).toBe("");
  }
});

test("--bandwidth sets the links' bytes per virtual second, as Dask writes a size, and the replay line keeps it", async () => {
  const run = (...args: string[]) =>
    weft("sim", "--seed", "5", "--tasks", "20", "--faults", "none", "--json", ...args);
  const bytes = await run("--bandwidth", "2000000");
  expect(bytes.code).toBe(0);
  const result = JSON.parse(bytes.out.split("\n")[0]);
  expect(result.options.bandwidth).toBe(2_000_000);
  expect(result.command).toBe("weft sim --seed 5 --tasks 20 --bandwidth 2000000 --faults none");
  // The replay line replays the run; a unit, and /s after it, read the same.
  expect((await run("--bandwidth", "2MB")).out).toBe(bytes.out);
  expect((await run("--bandwidth", "2MB/s")).out).toBe(bytes.out);
  // In any case, as Dask reads a size's unit: 10MB/S was "'10MB/' as a number".
  expect((await run("--bandwidth", "2mb/S")).out).toBe(bytes.out);
  // Slower links make another run than the default's: the flag was not dropped.
  expect((await run()).out).not.toBe(bytes.out);
  // A fraction, as a program may give one, is read as it is: its replay line replays it.
  const third = await run("--bandwidth", String(5e6 / 3));
  const thirdResult = JSON.parse(third.out.split("\n")[0]);
  expect(thirdResult.options.bandwidth).toBe(5e6 / 3);
  expect(thirdResult.command).toContain(` --bandwidth ${5e6 / 3} `);
  for (const [value, message] of [
    ["0", "expected bytes per second > 0, got '0'"],
    ["-5MB", "expected bytes per second > 0, got '-5MB'"],
    ["1e400", "expected a finite number of bytes per second, got '1e400'"],
    // No number at all was 1 byte a second, as parse_bytes reads it.
    ["", "expected bytes per virtual second such as 100MB, 10MiB/s or 5e6, got ''"],
    ["/s", "expected bytes per virtual second such as 100MB, 10MiB/s or 5e6, got '/s'"],
    ["fast", "expected bytes per virtual second such as 100MB, 10MiB/s or 5e6, got 'fast'"],
  ] as const) {
    const r = await weft("sim", "--bandwidth", value);
    expect(r.code, value).toBe(2);
    expect(r.err, value).toContain(message);
  }
});

test("numbers in another base or padded are refused, not read as Number reads them", async () => {
  for (const [args, message] of [
    [["--seed", "0x10"], "expected an integer ≥ 0, got '0x10'"],
    [["--workers", " 2 "], "expected an integer ≥ 1, got ' 2 '"],
    [["--latency", "0b1"], "expected seconds or a duration such as 2ms, 0.5s or 1m, got '0b1'"],
    [["--latency", ""], "expected seconds or a duration such as 2ms, 0.5s or 1m, got ''"],
    [["--latency", "0ms"], "expected a duration > 0, got '0ms'"],
    [["--latency", "2 parsecs"], 'invalid time unit "parsecs"'],
    [["--replicate", "0o1"], "expected a number from 0 to 1, got '0o1'"],
  ] as const) {
    const r = await weft("sim", ...args, "--faults", "none");
    expect(r.code, args.join(" ")).toBe(2);
    expect(r.err, args.join(" ")).toContain(message);
    expect(r.out).toBe("");
  }
});

test("--dump writes the run's cluster as a dump that weft replay and weft story read", async () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-sim-dump-"));
  try {
    const file = join(dir, "run");
    const r = await weft("sim", "--seed", "4", "--tasks", "12", "--workers", "2", "--dump", file);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`weft sim: wrote ${file}.msgpack.gz`);
    const replay = await weft("replay", `${file}.msgpack.gz`);
    expect(replay.code).toBe(0);
    expect(replay.out).toMatch(/\d+ workers: \d+ exact/);
    const dump = await loadDump(`${file}.msgpack.gz`);
    const key = [...dump.scheduler.tasks.keys()][0] ?? "load-0";
    const story = await weft("story", key, `${file}.msgpack.gz`);
    expect(story.code).toBe(0);
    expect(story.out).toContain("scheduler");
    const yaml = await weft("sim", "--seed", "4", "--tasks", "12", "--dump", join(dir, "run.yaml"));
    expect(yaml.err).toContain(`wrote ${join(dir, "run.yaml")}`);
    const many = await weft("sim", "--runs", "2", "--dump", file);
    expect(many.code).toBe(2);
    expect(many.err).toContain("--dump writes one run");
    // A --dump that cannot be written is refused before the run, not after it.
    const nowhere = join(dir, "no-such-dir", "run.yaml");
    const bad = await weft("sim", "--seed", "4", "--tasks", "12", "--dump", nowhere);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      `weft sim: --dump ${nowhere}: no such directory: ${join(dir, "no-such-dir")}\n`,
    );
    expect(bad.out).toBe("");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--workers 1 with death or partition on says they never fire, rather than nothing", async () => {
  const run = (workers: string, ...faults: string[]) =>
    weft("sim", "--seed", "2", "--workers", workers, "--tasks", "10", ...faults);
  const r = await run("1");
  expect(r.code).toBe(0);
  expect(r.err).toContain(
    "weft sim: note: with --workers 1, death and partition never fire (at least one worker always survives): give --workers 2 or more to test them",
  );
  expect((await run("1", "--faults", "death,steal")).err).toContain(
    "with --workers 1, death never fires",
  );
  // Nothing to say with two workers, or without those faults.
  expect((await run("2")).err).toBe("");
  expect((await run("1", "--faults", "steal")).err).toBe("");
});
