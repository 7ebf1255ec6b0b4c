import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Packr, Unpackr } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayInputError } from "./errors.ts";
import { loadDump } from "./replayDump.ts";
import { replayFile } from "./replayFile.ts";
import { clusterStory } from "./story.ts";
import { sharedPath, tempDir } from "./testPaths.ts";

/** Damaged copies of the sample inputs, written to os.tmpdir(). */
let dir: string;
const files: Record<string, string> = {};

function write(name: string, data: Uint8Array | string): void {
  files[name] = join(dir, name);
  writeFileSync(files[name], data);
}

beforeAll(() => {
  dir = tempDir("replay-errors");
  const tree = readFileSync(sharedPath("dumps", "tree.msgpack.gz"));
  write("truncated.msgpack.gz", tree.subarray(0, Math.floor(tree.length / 2)));
  // Flip bytes in the middle of the deflate stream: corrupt data, not a short file.
  const corrupt = Buffer.from(tree);
  for (let i = 5000; i < 5100; i++) corrupt[i] ^= 0xa5;
  write("corrupt.msgpack.gz", corrupt);
  // Valid gzip of msgpack cut in the middle: the msgpack data ends early.
  const raw = gunzipSync(tree);
  write("short-msgpack.msgpack.gz", gzipSync(raw.subarray(0, Math.floor(raw.length / 3))));
  write("empty.msgpack.gz", new Uint8Array(0));
  write("text.msgpack.gz", "this is not a dump\n");
  const yaml = readFileSync(sharedPath("dumps", "shuffle.yaml"), "utf8");
  write("truncated.yaml", yaml.slice(0, Math.floor(yaml.length / 2)));
  write("not-a-dump.yaml", "hello: world\n");
  write("unknown.bin", "data");
  const vector = readFileSync(
    sharedPath(
      "conformance",
      "suite/test_cancelled_state__test_abort_execution_add_as_dependency__e3415677__0.json.gz",
    ),
  );
  write("truncated.json.gz", vector.subarray(0, Math.floor(vector.length / 2)));
  // A vector under a stream's name: its one line has a name and a config, as a header.
  write("vector.jsonl", gunzipSync(vector));
  write("broken.json", '{"name": "x", "steps": [');
  // A stream under a vector's name: its lines read as one document fail at the second.
  write(
    "stream.json",
    gunzipSync(readFileSync(sharedPath("bench", "tree.jsonl.gz")))
      .toString("utf8")
      .split("\n")
      .slice(0, 20)
      .join("\n"),
  );
  write("graph.json", '{"graph": {"x": ["inc", 1]}}');
  write("list.json", "[1, 2]");
  write("dump.json", '{"scheduler": {}, "workers": {}, "versions": {}}');
  // Gzipped, each is told the name with .gz kept: renamed .yaml, gzip data is no YAML.
  write("dump.json.gz", gzipSync('{"scheduler": {}, "workers": {}, "versions": {}}'));
  write("stream.json.gz", gzipSync(readFileSync(join(dir, "stream.json"))));
  write("bad-step.json", '{"name": "x", "steps": [{"event": 1}]}');
  // A vector of no step replayed nothing and PASSED.
  const noSteps = JSON.parse(gunzipSync(vector).toString("utf8")) as { steps: unknown[] };
  noSteps.steps = [];
  write("no-steps.json", JSON.stringify(noSteps));
  const stream = readFileSync(sharedPath("bench", "tree.jsonl.gz"));
  write("truncated.jsonl.gz", stream.subarray(0, 4000));
  write(
    "bad-line.jsonl",
    '{"name": "s", "config": {}}\n{"cls": "NoSuchEvent", "stimulus_id": "x"}\n',
  );
  // A worker's settings a state machine refuses (a real dump, edited).
  const dump = new Unpackr({
    mapsAsObjects: true,
    useRecords: false,
    int64AsType: "bigint",
  }).unpack(gunzipSync(readFileSync(sharedPath("dumps", "errors-and-cancel.msgpack.gz")))) as {
    workers: Record<string, { nthreads: number }>;
  };
  for (const w of Object.values(dump.workers)) w.nthreads = 1.5;
  write("bad-nthreads.msgpack.gz", gzipSync(new Packr({ useRecords: false }).pack(dump)));
  // Events or records out of time order: the replay placed the log's start by time, and
  // took a dump with its first two events swapped for "EXACT as far as comparable".
  const ordered = () =>
    new Unpackr({ mapsAsObjects: true, useRecords: false, int64AsType: "bigint" }).unpack(
      gunzipSync(readFileSync(sharedPath("dumps", "errors-and-cancel.msgpack.gz"))),
    ) as { workers: Record<string, { stimulus_log: unknown[]; log: unknown[][] }> };
  const swapped = ordered();
  const events = Object.values(swapped.workers)[0].stimulus_log;
  [events[0], events[1]] = [events[1], events[0]];
  write("events-out-of-order.msgpack.gz", gzipSync(new Packr({ useRecords: false }).pack(swapped)));
  const reversed = ordered();
  Object.values(reversed.workers)[0].log.reverse();
  write("log-out-of-order.msgpack.gz", gzipSync(new Packr({ useRecords: false }).pack(reversed)));
  files.missing = join(dir, "missing.msgpack.gz");
  files.directory = dir;
  // A directory with a stream's name: read as one, refused by the file system.
  files["directory.jsonl"] = join(dir, "directory.jsonl");
  mkdirSync(files["directory.jsonl"]);
  // A device read forever; a FIFO blocks until a writer comes.
  for (const name of [
    "zero.msgpack.gz",
    "zero.msgpack",
    "zero.yaml",
    "zero.json",
    "zero.jsonl.gz",
  ]) {
    files[name] = join(dir, name);
    symlinkSync("/dev/zero", files[name]);
  }
  files["fifo.msgpack.gz"] = join(dir, "fifo.msgpack.gz");
  execFileSync("mkfifo", [files["fifo.msgpack.gz"]]);
  // Sparse files of 3 GiB: their size alone must refuse them, unread.
  for (const name of ["huge.msgpack", "huge.yaml", "huge.jsonl"]) {
    files[name] = join(dir, name);
    const fd = openSync(files[name], "w");
    writeFileSync(fd, "x");
    closeSync(fd);
    execFileSync("truncate", ["-s", "3G", files[name]]);
  }
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The error replayFile rejects with, checked to be one line naming the file. */
async function inputError(file: string): Promise<ReplayInputError> {
  const err = await replayFile(file).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReplayInputError);
  const e = err as ReplayInputError;
  expect(e.file).toBe(file);
  expect(e.message.startsWith(`${file}: `)).toBe(true);
  expect(e.message).not.toContain("\n");
  return e;
}

describe("unreadable, truncated, corrupt and unknown inputs", () => {
  it.each([
    ["truncated.msgpack.gz", /truncated gzip|ends early|ends too early/],
    ["corrupt.msgpack.gz", /gzip/],
    ["short-msgpack.msgpack.gz", /msgpack|truncated|ends/i],
    ["empty.msgpack.gz", /empty/],
    ["text.msgpack.gz", /not gzip/],
    ["truncated.yaml", /./],
    ["not-a-dump.yaml", /not a cluster dump/],
    ["unknown.bin", /unknown kind of file/],
    ["truncated.json.gz", /truncated gzip|ends/],
    ["broken.json", /not valid JSON/],
    [
      "stream.json",
      /^a stimulus stream \(JSON lines, the first a header with a config\), not a conformance vector: name it \.jsonl$/,
    ],
    [
      "graph.json",
      /^not a conformance vector, cluster dump or stimulus stream \(a JSON object without "steps"\)$/,
    ],
    [
      "dump.json",
      /^a cluster dump written as JSON, which weft reads as YAML \(JSON is YAML\): name it \.yaml$/,
    ],
    [
      "dump.json.gz",
      /^a cluster dump written as JSON, which weft reads as YAML \(JSON is YAML\): name it \.yaml\.gz$/,
    ],
    ["stream.json.gz", /: name it \.jsonl\.gz$/],
    [
      "list.json",
      /^not a conformance vector, cluster dump or stimulus stream \(JSON, but an array\)$/,
    ],
    // A vector, with a broken field: the field is named.
    ["bad-step.json", /^steps\[0\]\.event: /],
    ["no-steps.json", /^the vector has no steps: nothing to replay or check$/],
    ["truncated.jsonl.gz", /truncated gzip|ends/],
    ["bad-line.jsonl", /line 2: .*NoSuchEvent/],
    // It replayed no event and passed.
    [
      "vector.jsonl",
      /^line 1: a conformance vector \(it has "steps"\), not a stimulus stream header: name it \.json$/,
    ],
    [
      "bad-nthreads.msgpack.gz",
      /^workers\["tcp:\/\/[\d.:]+"\]: its settings cannot make a worker state machine: WorkerState: nthreads must be an integer ≥ 0, got 1\.5$/,
    ],
    [
      "events-out-of-order.msgpack.gz",
      /^workers\["tcp:\/\/[\d.:]+"\]\.stimulus_log\[1\]\.handled: 1795992536\.55979 is earlier than the event before it \(1795992536\.559909\): the stimulus log is out of time order$/,
    ],
    [
      "log-out-of-order.msgpack.gz",
      /^workers\["tcp:\/\/[\d.:]+"\]\.log\[1\]: its time [\d.]+ is earlier than the record before it \([\d.]+\): the log is out of time order$/,
    ],
    ["missing", /does not exist/],
    ["directory", /directory|unknown kind/],
    ["directory.jsonl", /^cannot read the file: it is a directory$/],
    ...["zero.msgpack.gz", "zero.msgpack", "zero.yaml", "zero.json", "zero.jsonl.gz"].map(
      (name) => [name, /^cannot read the file: it is a character device, not a regular file$/],
    ),
    ["fifo.msgpack.gz", /^cannot read the file: it is a FIFO \(named pipe\), not a regular file$/],
    ["huge.msgpack", /^too large to read here: reading 3\.00 GiB of msgpack takes about/],
    ["huge.yaml", /^too large to read as YAML here: parsing 3\.00 GiB of YAML/],
    ["huge.jsonl", /^too large to read here: 3\.00 GiB of text is more than the/],
  ] as [string, RegExp][])("%s", async (name, reason) => {
    const e = await inputError(files[name]);
    expect(e.reason).toMatch(reason);
  });
});

describe("a path that is no regular file", () => {
  it("is refused by loadDump (weft story) too, unread", async () => {
    for (const name of ["zero.msgpack.gz", "fifo.msgpack.gz"]) {
      await expect(loadDump(files[name])).rejects.toThrow(/not a regular file$/);
    }
  });
});

describe("options a program got wrong", () => {
  it("are refused with a TypeError, before the file is read", async () => {
    const dump = sharedPath("dumps", "tree.msgpack.gz");
    // Dropped, the log was not followed; "false", truthy, followed it.
    await expect(replayFile(dump, { follow_log: true } as never)).rejects.toThrow(
      new TypeError('replayFile: unknown option "follow_log" (did you mean followLog?)'),
    );
    await expect(replayFile(dump, { followLog: "false" as never })).rejects.toThrow(
      new TypeError('followLog must be a boolean, got "false"'),
    );
    await expect(replayFile(dump, { workers: "tcp://x:1" as never })).rejects.toThrow(
      new TypeError('workers must be a list of addresses (strings), got "tcp://x:1"'),
    );
    await expect(replayFile(dump, { onProgress: 1 as never })).rejects.toThrow(
      new TypeError("onProgress must be a function, got 1"),
    );
  });

  it("dump-only options on a vector or stream are named as replayFile's options, not weft replay's flags", async () => {
    const vector = sharedPath("conformance", "fuzz/fuzz-seed-2002.json.gz");
    await expect(replayFile(vector, { followLog: true, workers: ["x"] })).rejects.toThrow(
      /: followLog and workers apply to cluster dumps only, and this is a conformance vector$/,
    );
    const stream = sharedPath("bench", "tree.jsonl.gz");
    await expect(replayFile(stream, { workers: [] })).rejects.toThrow(
      /: workers applies to cluster dumps only, and this is a stimulus stream$/,
    );
  });

  it("dump-only options on a file named as another kind tell what it is, as without them", async () => {
    await expect(replayFile(files["dump.json"], { followLog: true })).rejects.toThrow(
      /: a cluster dump written as JSON, which weft reads as YAML \(JSON is YAML\): name it \.yaml$/,
    );
    await expect(replayFile(files["stream.json.gz"], { workers: ["x"] })).rejects.toThrow(
      /: a stimulus stream .*: name it \.jsonl\.gz$/,
    );
    await expect(replayFile(files["vector.jsonl"], { followLog: true })).rejects.toThrow(
      /: line 1: a conformance vector \(it has "steps"\), not a stimulus stream header: name it \.json$/,
    );
  });

  it("a worker asked for without its scheme is the dump's one worker with that address", async () => {
    const dump = sharedPath("dumps", "errors-and-cancel.msgpack.gz");
    const { report } = await replayFile(dump, { workers: ["127.0.0.1:37641"] });
    expect(report.kind === "dump" && report.workers.map((w) => w.address)).toEqual([
      "tcp://127.0.0.1:37641",
    ]);
    // None has it: the error lists those the dump has.
    await expect(replayFile(dump, { workers: ["127.0.0.1:1"] })).rejects.toThrow(
      /: no worker 127\.0\.0\.1:1 in the dump \(workers: tcp:\/\/127\.0\.0\.1:\d+, tcp:\/\/127\.0\.0\.1:\d+\)$/,
    );
  });

  it("a file that is no path, options that are no object, keys that are no list of strings: a TypeError saying so", async () => {
    const dump = sharedPath("dumps", "errors-and-cancel.msgpack.gz");
    // These were "Cannot read properties of null (reading 'toLowerCase')" and the like.
    await expect(replayFile(null as never)).rejects.toThrow(
      new TypeError("replayFile: the file must be a path (a string), got null"),
    );
    await expect(replayFile(dump, null as never)).rejects.toThrow(
      new TypeError("replayFile: the options must be an object, got null"),
    );
    await expect(loadDump(5 as never)).rejects.toThrow(
      new TypeError("loadDump: the file must be a path (a string), got 5"),
    );
    // A lone key as a string was read as its characters: no record, silently.
    const loaded = await loadDump(dump);
    expect(clusterStory(loaded, ["slow-1"]).length).toBeGreaterThan(0);
    expect(() => clusterStory(loaded, "slow-1" as never)).toThrow(
      new TypeError('clusterStory: the keys must be a list of strings, got "slow-1"'),
    );
    expect(() => clusterStory(loaded, [5] as never)).toThrow(
      new TypeError("clusterStory: the keys must be a list of strings, got [5]"),
    );
  });
});
