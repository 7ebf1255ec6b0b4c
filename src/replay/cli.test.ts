import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { Packr, Unpackr } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWeft as weft } from "../cli/testContext.ts";
import { sharedPath, tempDir } from "./testPaths.ts";

const TREE = sharedPath("dumps", "tree.msgpack.gz");
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let dir: string;
let truncated: string;

beforeAll(() => {
  dir = tempDir("replay-cli");
  truncated = join(dir, "tree.msgpack.gz");
  const data = readFileSync(TREE);
  writeFileSync(truncated, data.subarray(0, data.length - 1000));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("weft", () => {
  it("has --help on every command", async () => {
    const top = await weft(["--help"]);
    expect(top.code).toBe(0);
    expect(top.out).toContain("replay [options] <file>");
    expect(top.out).toContain("story [options] <key...> <file|scheduler>");
    for (const cmd of ["replay", "story"]) {
      const help = await weft([cmd, "--help"]);
      expect(help.code).toBe(0);
      expect(help.out).toContain(`Usage: weft ${cmd} [options]`);
      // `weft help CMD` is asked for as --help is: not a usage error.
      const viaHelp = await weft(["help", cmd]);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.out).toBe(help.out);
    }
    expect(await weft(["help"])).toEqual({ code: 0, out: top.out, err: "" });
  });

  it("exits 2 on bad usage", async () => {
    expect((await weft([])).code).toBe(2);
    expect((await weft(["replay"])).code).toBe(2);
    expect((await weft(["replay", "--no-such-option", TREE])).code).toBe(2);
    const story = await weft(["story", TREE]);
    expect(story.code).toBe(2);
    expect(story.err).toContain(
      "error: give at least one key, then the cluster dump file or the running cluster's scheduler (or --scheduler-file)",
    );
    const bare = await weft(["story"]);
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("at least one key");
    const help = await weft(["story", "--help"]);
    expect(help.out).toMatch(
      // Wrapped where the widest option's column leaves room: any space may be a line break.
      /Arguments:\n {2}key +task keys .*the\s+last\s+argument\s+is\s+the\s+cluster\s+dump\s+file/s,
    );
  });

  it("replay: exit 2 and one line naming a truncated file", async () => {
    const r = await weft(["replay", truncated]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      `weft replay: ${truncated}: truncated gzip data (the compressed stream ends early)\n`,
    );
  });

  it("replay: a worker that needs --follow-log, then with it", async () => {
    const plain = await weft(["replay", TREE]);
    expect(plain.code).toBe(1);
    expect(plain.out).toContain("tcp://127.0.0.1:33899: FAILED");
    expect(plain.out).toContain(
      "first divergence at event 114 (GatherDepSuccessEvent gather-dep-success-1795992522.7214494), record 0:",
    );
    expect(plain.out).toContain("tcp://127.0.0.1:42687: EXACT");
    expect(plain.out).toContain("hint: rerun with --follow-log");
    const followed = await weft(["replay", "--follow-log", TREE]);
    expect(followed.code).toBe(0);
    expect(followed.out).toContain("tcp://127.0.0.1:33899: EXACT (--follow-log)");
    expect(followed.out).toContain("counter   1845 replayed, 1845 dumped: equal");
  });

  it("replay: dump-only options on a vector or stream are refused", async () => {
    const vector = sharedPath("conformance", "fuzz/fuzz-seed-2002.json.gz");
    const r = await weft(["replay", "--follow-log", "--worker", "x", vector]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /--follow-log and --worker apply to cluster dumps only, and this is a conformance vector/,
    );
  });

  it("replay --json, --worker", async () => {
    const r = await weft(["replay", "--json", "--worker", "tcp://127.0.0.1:42687", TREE]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.kind).toBe("dump");
    expect(report.workers.map((w: { address: string }) => w.address)).toEqual([
      "tcp://127.0.0.1:42687",
    ]);
    // Every worker the scheduler lists has an entry: none is said to be missing.
    expect(report.workersWithoutEntry).toEqual([]);
    expect(report.workers[0].transitionCounter).toEqual({
      replayed: 1510,
      dumped: 1510,
      comparable: true,
      equal: true,
    });
    const unknown = await weft(["replay", "--worker", "tcp://nowhere:1", TREE]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("no worker tcp://nowhere:1");
  });

  it("replay: a stimulus id used again after a stimulus logging nothing keeps its records apart", async () => {
    // In this simulated run, events 203 and 205–208 share `task-finished-958` (the
    // scheduler answers a task-finished with a compute-task under its id), and event 204,
    // a refresh-who-has, logs nothing: their records lie side by side in the log.
    const dump = join(dir, "reused-id.msgpack.gz");
    const sim = await weft([
      "sim",
      "--seed",
      "4",
      "--workload",
      "shuffle",
      "--tasks",
      "40",
      "--no-release",
      // The same run, a fifth of the time: the replay checks the worker, not the sim.
      "--no-validate",
      "--dump",
      dump,
    ]);
    expect(sim.code).toBe(0);
    const r = await weft(["replay", "--json", "--worker", "tcp://10.0.3.1:9007", dump]);
    expect(r.code).toBe(0);
    const [worker] = JSON.parse(r.out).workers;
    expect(worker.verdict).toBe("exact");
    expect(worker.log.divergent).toBe(0);
  });

  it("replay: a progress bar on a terminal only", async () => {
    const lines = gunzipSync(readFileSync(sharedPath("bench", "tree.jsonl.gz")))
      .toString()
      .split("\n")
      .slice(0, 5001);
    const file = join(dir, "head.jsonl.gz");
    writeFileSync(file, gzipSync(lines.join("\n")));
    const piped = await weft(["replay", file]);
    expect(piped.code).toBe(0);
    expect(piped.err).toBe("");
    const terminal = await weft(["replay", file], true);
    expect(terminal.code).toBe(0);
    expect(terminal.err).toContain("events");
    expect(terminal.out).toBe(piped.out);
    // Ctrl-C cannot stop the bar of a synchronous replay: it must leave the terminal's
    // modes alone (no hidden cursor, line wrapping on).
    expect(terminal.err).not.toContain("\x1b[?25l");
    expect(terminal.err).not.toContain("\x1b[?7l");
    // The bar is stopped, its line cleared, before the report is printed.
    expect(terminal.err.endsWith("\x1b[2K")).toBe(true);
  });

  it("story: text, JSON, nothing found", async () => {
    const r = await weft(["story", "inc-41", TREE]);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines.some((l) => / {2}scheduler {2,}/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes("tcp://127.0.0.1:33899"))).toBe(true);
    const json = await weft(["story", "--json", "inc-41", "add-4-0", TREE]);
    expect(JSON.parse(json.out).length).toBeGreaterThan(lines.length);
    const replayed = await weft(["story", "--follow-log", "inc-41", TREE]);
    expect(replayed.out).toContain(" * ('inc-41'");
    const none = await weft(["story", "nothing-like-this", TREE]);
    expect(none.code).toBe(1);
    expect(none.err).toContain("no record of nothing-like-this");
    const listForm = await weft(["story", "['inc', 41]", TREE]);
    expect(listForm.err).toContain(
      "a key that was a tuple in Python is written as the tuple: ('inc', 41)",
    );
    const notDump = await weft(["story", "x", join(dir, "head.jsonl.gz")]);
    expect(notDump.code).toBe(2);
  });

  it("story finds a tuple key however it is typed, as Python would read it", async () => {
    // inc-41 made the tuple ('inc', 41), written as Dask writes one: a list in values,
    // "['inc', 41]" as a mapping key, ('inc', 41) inside reprs.
    const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
    const asTuple = (v: unknown): unknown => {
      if (v === "inc-41") return ["inc", 41];
      if (typeof v === "string") return v.split("'inc-41'").join("('inc', 41)");
      if (Array.isArray(v)) return v.map(asTuple);
      if (!(v instanceof Map)) return v;
      const out = new Map();
      for (const [k, x] of v) out.set(k === "inc-41" ? "['inc', 41]" : k, asTuple(x));
      return out;
    };
    const file = join(dir, "tuple-key.msgpack.gz");
    const d = asTuple(unpackr.unpack(gunzipSync(readFileSync(TREE))));
    writeFileSync(file, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const exact = await weft(["story", "('inc', 41)", file]);
    expect(exact.code).toBe(0);
    expect(exact.out).toContain("(('inc', 41), 'compute-task', 'released'");
    for (const typed of ["('inc',41)", '("inc", 41)', "['inc', 41]"]) {
      expect(await weft(["story", typed, file])).toEqual(exact);
    }
  });

  it("replay --follow-log exits 1 for a converged worker: set order cannot explain its log", async () => {
    const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
    const d = unpackr.unpack(
      gunzipSync(readFileSync(sharedPath("dumps", "errors-and-cancel.msgpack.gz"))),
    );
    const worker = (d.get("workers") as Map<string, Map<string, unknown>>).get(
      "tcp://127.0.0.1:37641",
    );
    const log = worker?.get("log") as unknown[][];
    // The dumped worker went executing → error, the replay goes executing → memory.
    const r = log.find((x) => x.length === 7 && x[2] === "memory") as unknown[];
    r[2] = "error";
    r[3] = "error";
    const file = join(dir, "log-differs.msgpack.gz");
    writeFileSync(file, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const plain = await weft(["replay", "--worker", "tcp://127.0.0.1:37641", file]);
    expect(plain.code).toBe(0);
    expect(plain.out).toContain("tcp://127.0.0.1:37641: CONVERGED\n");
    const followed = await weft([
      "replay",
      "--follow-log",
      "--worker",
      "tcp://127.0.0.1:37641",
      file,
    ]);
    expect(followed.code).toBe(1);
    expect(followed.out).toContain("tcp://127.0.0.1:37641: CONVERGED (--follow-log)\n");
    expect(followed.out.trimEnd().split("\n").slice(-2)).toEqual([
      "1 worker: 1 converged",
      "with --follow-log, a converged log diverged where Python's set order cannot explain it: a real difference",
    ]);
  });

  it("story says which workers did not answer the dump (their records are missing)", async () => {
    const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
    const d = unpackr.unpack(gunzipSync(readFileSync(TREE))) as Map<string, Map<string, unknown>>;
    const workers = d.get("workers") as Map<string, unknown>;
    const [gone] = workers.keys();
    workers.set(gone, "OSError('gone')");
    const file = join(dir, "gone.msgpack.gz");
    writeFileSync(file, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const r = await weft(["story", "inc-41", file]);
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      `note: worker ${gone} is not in the dump (it did not answer: OSError('gone')): its records are missing from the story\n`,
    );
    expect(r.out).not.toContain(gone);
  });

  it("replay and story say which workers the scheduler lists and a YAML dump cut short lacks", async () => {
    // PyYAML sorts the addresses: cut before the last one's entry, the dump still
    // reads, and the replay passed on the others as if they were all.
    const yaml = readFileSync(sharedPath("dumps", "shuffle.yaml"), "utf8");
    const last = "tcp://127.0.0.1:44017";
    const cut = join(dir, "shuffle-cut.yaml");
    writeFileSync(cut, yaml.slice(0, yaml.indexOf(`\n  ${last}:\n`) + 1));
    const note = `note: the scheduler lists worker ${last}, which the dump holds no entry for (is the file cut short?)`;
    const one = ["--worker", "tcp://127.0.0.1:41927"];
    const r = await weft(["replay", ...one, cut]);
    expect(r.code).toBe(0);
    expect(r.out.split("\n").slice(0, 2)).toEqual([
      `${cut}: cluster dump (yaml, distributed 2023.7.0), 1 worker replayed`,
      note,
    ]);
    const json = await weft(["replay", "--json", ...one, cut]);
    expect(JSON.parse(json.out).workersWithoutEntry).toEqual([last]);
    // A whole dump lacks none: "replay --json, --worker" above (the same replay of TREE).
    const story = await weft(["story", "split-1-3", cut]);
    expect(story.code).toBe(0);
    expect(story.err).toBe(`${note}: its records are missing from the story\n`);
  });

  it("replay refuses a dump with no worker to replay (exit 2) rather than pass it", async () => {
    const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
    const d = unpackr.unpack(gunzipSync(readFileSync(TREE))) as Map<string, Map<string, unknown>>;
    const workers = d.get("workers") as Map<string, unknown>;
    const [first, second] = workers.keys();
    workers.set(first, "OSError('gone')");
    const one = join(dir, "one-answered.msgpack.gz");
    writeFileSync(one, gzipSync(new Packr({ useRecords: false }).pack(d)));
    // One worker left: it is replayed, and the other named in a note.
    const partial = await weft(["replay", one]);
    expect(partial.code).toBe(0);
    expect(partial.out).toContain(`note: worker ${first} is not in the dump`);
    workers.set(second, "OSError('gone too')");
    const none = join(dir, "none-answered.msgpack.gz");
    writeFileSync(none, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const r = await weft(["replay", none]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      `weft replay: ${none}: no worker to replay: none answered the dump (${first}: OSError('gone'); ${second}: OSError('gone too'))\n`,
    );
    workers.clear();
    const empty = join(dir, "no-workers.msgpack.gz");
    writeFileSync(empty, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const e = await weft(["replay", empty]);
    expect(e.code).toBe(2);
    expect(e.err).toBe(`weft replay: ${empty}: no worker to replay: the dump holds none\n`);
    // A story needs no worker: the scheduler's records are still told.
    const story = await weft(["story", "inc-41", empty]);
    expect(story.code).toBe(0);
    expect(story.out).toContain("scheduler");
  });

  it("story --replay says which worker's replay stopped, where and why", async () => {
    const r = await weft(["story", "--replay", "add-1-20", TREE]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(
      /^weft story: the replay of tcp:\/\/127\.0\.0\.1:33899 stopped at event 115 \(ExecuteSuccessEvent task-finished-[\d.]+\): AssertionError: .*its replayed records end there \(try --follow-log/,
    );
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    const followed = await weft(["story", "--follow-log", "add-1-20", TREE]);
    expect(followed.err).toBe("");
  });

  it("weft --version prints package.json's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = await weft([flag]);
      expect(r.code).toBe(0);
      expect(r.out).toBe(`${version}\n`);
    }
  });

  it("bin/weft.js runs the command", () => {
    // Bounded: a synchronous child blocks this file's own test timeout.
    const help = spawnSync(process.execPath, ["bin/weft.js", "replay", "--help"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 50_000,
    });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: weft replay [options] <file>");
    const bad = spawnSync(process.execPath, ["bin/weft.js", "replay", truncated], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 50_000,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toEqual([
      `weft replay: ${truncated}: truncated gzip data (the compressed stream ends early)`,
    ]);
  });

  it("refuses a msgpack dump too large for the heap with one line, not V8's out-of-memory crash", () => {
    // About 6.5 MB of msgpack: reading it takes about 60 MB of heap, more than a
    // process limited to 60 MB of old space has left once its modules are loaded.
    const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
    const d = unpackr.unpack(gunzipSync(readFileSync(TREE))) as Map<string, unknown>;
    d.set(
      "padding",
      [1, 2, 3, 4, 5].map(() => d.get("workers")),
    );
    const big = join(dir, "big.msgpack.gz");
    writeFileSync(big, gzipSync(new Packr({ useRecords: false }).pack(d)));
    const r = spawnSync(
      process.execPath,
      ["--max-old-space-size=60", "bin/weft.js", "replay", big],
      { cwd: ROOT, encoding: "utf8", timeout: 50_000 },
    );
    expect(r.stderr).not.toContain("FATAL ERROR");
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      // Told as the gunzip passes what the heap can read, before the rest is gunzipped.
      /^weft replay: .*big\.msgpack\.gz: too large to read here: .* of gzip data gunzip to more than the .* of msgpack this process has the heap to read; give node more \(NODE_OPTIONS=--max-old-space-size=MB\)\n$/,
    );
  });
});
