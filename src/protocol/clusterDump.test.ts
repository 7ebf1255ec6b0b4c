import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getHeapStatistics } from "node:v8";
import { gunzipSync, gzipSync } from "node:zlib";
import { Packr, Unpackr } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeMsgpack,
  decodeYaml,
  gunzip,
  gunzippedLimit,
  MSGPACK_HEAP_PER_BYTE,
  YAML_HEAP_PER_BYTE,
} from "./clusterDump/decode.ts";
import { Ctx } from "./clusterDump/errors.ts";
import { taskStateReprProblem } from "./clusterDump/pyRepr.ts";
import { stringifyForPyYaml } from "./clusterDump/pyyamlWrite.ts";
import type { ClusterDump, DumpEvent } from "./clusterDump.ts";
import {
  classifyLogEntry,
  DaskConfig,
  DumpFormatError,
  dumpEncodingOf,
  listReprToTupleRepr,
  loadClusterDump,
  loadClusterDumpSync,
  parseClusterDump,
  parsePyStrLiteral,
  parseTaskStateRepr,
  pyStrRepr,
  typeNameFromRepr,
} from "./clusterDump.ts";

const DUMPS = new URL("../../../shared/dumps/", import.meta.url);
const dumpPath = (name: string): string => fileURLToPath(new URL(name, DUMPS));

/** Per worker: [stimulus_log length, log length, transition_counter, tasks, event classes]. */
type Expected = Record<string, [number, number, number, number, Record<string, number>]>;

const EXPECTED: Record<string, Expected> = {
  "tree.msgpack.gz": {
    "tcp://127.0.0.1:33899": [
      862,
      3151,
      1845,
      0,
      {
        ComputeTaskEvent: 260,
        ExecuteSuccessEvent: 260,
        GatherDepSuccessEvent: 56,
        FreeKeysEvent: 285,
        RemoveReplicasEvent: 1,
      },
    ],
    "tcp://127.0.0.1:42687": [
      753,
      2767,
      1510,
      234,
      {
        ComputeTaskEvent: 251,
        ExecuteSuccessEvent: 251,
        GatherDepSuccessEvent: 73,
        FreeKeysEvent: 177,
        RemoveReplicasEvent: 1,
      },
    ],
  },
  "shuffle.msgpack.gz": {
    "tcp://127.0.0.1:41927": [
      194,
      1022,
      562,
      157,
      { ComputeTaskEvent: 91, ExecuteSuccessEvent: 91, GatherDepSuccessEvent: 12 },
    ],
    "tcp://127.0.0.1:42167": [
      198,
      1094,
      599,
      169,
      { ComputeTaskEvent: 92, ExecuteSuccessEvent: 92, GatherDepSuccessEvent: 14 },
    ],
    "tcp://127.0.0.1:44017": [
      216,
      912,
      510,
      135,
      { ComputeTaskEvent: 105, ExecuteSuccessEvent: 105, GatherDepSuccessEvent: 6 },
    ],
  },
  "shuffle.yaml": {
    "tcp://127.0.0.1:41927": [
      351,
      1493,
      876,
      0,
      {
        ComputeTaskEvent: 91,
        ExecuteSuccessEvent: 91,
        GatherDepSuccessEvent: 12,
        FreeKeysEvent: 157,
      },
    ],
    "tcp://127.0.0.1:42167": [
      367,
      1601,
      937,
      0,
      {
        ComputeTaskEvent: 92,
        ExecuteSuccessEvent: 92,
        GatherDepSuccessEvent: 14,
        FreeKeysEvent: 169,
      },
    ],
    "tcp://127.0.0.1:44017": [
      351,
      1317,
      780,
      0,
      {
        ComputeTaskEvent: 105,
        ExecuteSuccessEvent: 105,
        GatherDepSuccessEvent: 6,
        FreeKeysEvent: 135,
      },
    ],
  },
  "errors-and-cancel.msgpack.gz": {
    "tcp://127.0.0.1:37641": [78, 247, 156, 39, { ComputeTaskEvent: 39, ExecuteSuccessEvent: 39 }],
    "tcp://127.0.0.1:45213": [
      77,
      243,
      153,
      39,
      {
        ComputeTaskEvent: 38,
        ExecuteSuccessEvent: 37,
        ExecuteFailureEvent: 1,
        UpdateDataEvent: 1,
      },
    ],
  },
  "lost-worker.msgpack.gz": {
    "tcp://127.0.0.1:33607": [
      243,
      984,
      558,
      127,
      {
        ComputeTaskEvent: 114,
        ExecuteSuccessEvent: 102,
        FreeKeysEvent: 12,
        RemoveWorkerEvent: 1,
        GatherDepNetworkFailureEvent: 1,
        GatherDepSuccessEvent: 13,
      },
    ],
    "tcp://127.0.0.1:41991": [
      243,
      949,
      535,
      115,
      {
        ComputeTaskEvent: 114,
        ExecuteSuccessEvent: 98,
        FreeKeysEvent: 16,
        RemoveWorkerEvent: 1,
        GatherDepNetworkFailureEvent: 1,
        GatherDepSuccessEvent: 13,
      },
    ],
  },
};

const dumps = new Map<string, ClusterDump>();

beforeAll(async () => {
  for (const name of Object.keys(EXPECTED)) dumps.set(name, await loadClusterDump(dumpPath(name)));
});

function countBy<T>(items: Iterable<T>, key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const k = key(item);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

describe("the dumps of ../shared/dumps", () => {
  for (const [name, workers] of Object.entries(EXPECTED)) {
    it(`loads ${name} with the expected workers, events, logs and counters`, () => {
      const dump = dumps.get(name)!;
      expect(dump.encoding).toBe(name.endsWith(".yaml") ? "yaml" : "msgpack.gz");
      expect(dump.versions.distributed).toBe("2023.7.0");
      expect(dump.unavailableWorkers.size).toBe(0);
      expect([...dump.workers.keys()].sort()).toEqual(Object.keys(workers).sort());
      for (const [address, [events, logLength, counter, tasks, classes]] of Object.entries(
        workers,
      )) {
        const w = dump.workers.get(address)!;
        expect(w.address).toBe(address);
        expect(w.nthreads).toBe(1);
        expect(w.status).toBe("running");
        expect(w.stimulusLog).toHaveLength(events);
        expect(w.stimulusLogFull).toBe(false);
        expect(w.log).toHaveLength(logLength);
        expect(w.transitionCounter).toBe(counter);
        expect(w.tasks.size).toBe(tasks);
        expect(countBy(w.stimulusLog, (e) => e.cls)).toEqual(classes);
        // Every transition is logged once: the counter is the number of transition entries.
        const kinds = countBy(w.log, (e) => classifyLogEntry(e).kind);
        expect(kinds.transition).toBe(counter);
        expect(kinds.other).toBeUndefined();
        for (const ev of w.stimulusLog) {
          expect(typeof ev.stimulus_id).toBe("string");
          expect(typeof ev.handled).toBe("number");
        }
        for (const [key, t] of w.tasks) expect(t.key).toBe(key);
      }
    });
  }

  it("derives the WorkerState parameters the way Worker.__init__ does", () => {
    const w = dumps.get("shuffle.msgpack.gz")!.workers.get("tcp://127.0.0.1:41927")!;
    expect(w.memoryLimit).toBe(8425503402);
    expect(w.config.connectionsIncoming()).toBe(10);
    expect(w.config.connectionsOutgoing()).toBe(50);
    expect(w.config.transferMessageBytesLimit()).toBe(50_000_000);
    expect(w.config.memoryTransferFraction()).toBe(0.1);
    expect(w.config.get("distributed.worker.memory.target")).toBe(0.6);
    expect(w.config.get("distributed.adaptive.maximum")).toBe(Number.POSITIVE_INFINITY);
    expect(w.resourcesSource).toBe("scheduler");
    expect(w.stateParameters).toEqual({
      nthreads: 1,
      address: "tcp://127.0.0.1:41927",
      resources: {},
      transfer_incoming_count_limit: 50, // connections.outgoing, as in Worker.__init__
      transfer_incoming_bytes_limit: 842550340, // int(8425503402 * 0.1)
      transfer_message_bytes_limit: 50_000_000,
      transfer_incoming_bytes_throttle_threshold: 10_000_000,
      validate: true,
      transition_counter_max: false,
    });
    const tree = dumps.get("tree.msgpack.gz")!.workers.get("tcp://127.0.0.1:33899")!;
    expect(tree.stateParameters.transfer_incoming_bytes_limit).toBe(1263825510);
  });

  it("gives typed events, log records and tasks", () => {
    const dump = dumps.get("lost-worker.msgpack.gz")!;
    const w = dump.workers.get("tcp://127.0.0.1:33607")!;
    const compute = w.stimulusLog.find(
      (e): e is DumpEvent => e.cls === "ComputeTaskEvent" && e.key === "y-0",
    )!;
    // cluster_dump excludes run_spec by default; to_loggable cleared function, args, kwargs.
    expect(Object.hasOwn(compute, "run_spec")).toBe(false);
    expect(compute).toMatchObject({
      key: "y-0",
      priority: [0, 2, 0],
      function: null,
      args: null,
      kwargs: null,
      who_has: { "x-37": ["tcp://127.0.0.1:37011"], "x-0": ["tcp://127.0.0.1:33607"] },
      nbytes: { "x-37": 28, "x-0": 28 },
    });
    const success = w.stimulusLog.find((e) => e.cls === "ExecuteSuccessEvent")!;
    expect(typeNameFromRepr(success.type as string)).toBe("int");
    expect(success.value).toBeNull();

    const records = w.log.map(classifyLogEntry);
    expect(records[1]).toMatchObject({
      kind: "transition",
      key: "x-0",
      start: "released",
      recommended: "waiting",
      final: "waiting",
      recommendations: { "x-0": "ready" },
    });
    expect(
      records.find((r) => r.kind === "worker" && r.action === "gather-dep-failed"),
    ).toMatchObject({
      worker: "tcp://127.0.0.1:37011",
      keys: ["x-37"],
    });
    expect(records.find((r) => r.kind === "free-keys")).toMatchObject({ keys: ["y-62"] });
    expect(records.find((r) => r.kind === "task" && r.action === "missing-dep")).toMatchObject({
      key: "x-37",
      state: null,
    });

    const erred = dumps.get("errors-and-cancel.msgpack.gz")!.workers.get("tcp://127.0.0.1:45213")!;
    const boom = [...erred.tasks.values()].find((t) => t.state === "error")!;
    expect(boom.exceptionText).toBe("ValueError('bad input 1')");
    expect(boom.dependencies).toEqual([{ key: "slow-0", state: "memory" }]);
    expect(boom.runId).toBeGreaterThan(0);
    const scattered = erred.tasks.get("big-0")!;
    expect(scattered).toMatchObject({ runId: -1, nbytes: 7200056, done: false, priority: null });

    const tree = dumps.get("tree.msgpack.gz")!;
    const released = [...tree.workers.get("tcp://127.0.0.1:42687")!.tasks.values()].find(
      (t) => t.state === "released",
    )!;
    expect(released.nbytes).toBeNull();
    expect(tree.workers.get("tcp://127.0.0.1:42687")!.raw.task_counts).toEqual({
      "('inc', 'memory')": expect.any(Number),
      "('inc', 'released')": expect.any(Number),
      "('add', 'memory')": expect.any(Number),
      "('add', 'released')": expect.any(Number),
    });
  });

  it("types the scheduler part", () => {
    const s = dumps.get("tree.msgpack.gz")!.scheduler;
    expect(s.status).toBe("running");
    expect(s.transitionCounter).toBe(2291);
    expect(s.transitionLog).toHaveLength(2291);
    expect(s.transitionLog[0]).toEqual([
      "inc-0",
      "released",
      "waiting",
      { "inc-0": "processing" },
      "update-graph-1795992522.412089",
      1795992522.4126472,
    ]);
    expect(s.tasks.size).toBe(511);
    expect([...s.workers.keys()].sort()).toEqual([
      "tcp://127.0.0.1:33899",
      "tcp://127.0.0.1:42687",
    ]);
  });

  it("reads the yaml and msgpack dumps of shuffle (taken at two moments) as the same data", () => {
    const mp = dumps.get("shuffle.msgpack.gz")!;
    const ym = dumps.get("shuffle.yaml")!;
    expect([...ym.workers.keys()].sort()).toEqual([...mp.workers.keys()].sort());
    expect(ym.versions.raw).toEqual(mp.versions.raw);
    for (const [address, a] of mp.workers) {
      const b = ym.workers.get(address)!;
      expect(b.config.raw).toEqual(a.config.raw);
      expect(b.stateParameters).toEqual(a.stateParameters);
      expect(b.memoryLimit).toBe(a.memoryLimit);
      expect(b.raw.id).toBe(a.raw.id);
      // The yaml dump was taken later: its logs extend the msgpack dump's.
      expect(b.stimulusLog.slice(0, a.stimulusLog.length)).toEqual(a.stimulusLog);
      expect(b.log.slice(0, a.log.length)).toEqual(a.log);
      expect(b.transitionCounter).toBeGreaterThan(a.transitionCounter);
      // ... after the client released everything: one FreeKeysEvent per task held then.
      const later = b.stimulusLog.slice(a.stimulusLog.length);
      expect(later.every((e) => e.cls === "FreeKeysEvent")).toBe(true);
      expect(later).toHaveLength(a.tasks.size);
    }
    const sa = mp.scheduler.transitionLog;
    expect(ym.scheduler.transitionLog.slice(0, sa.length)).toEqual(sa);
  });

  it("has a sync variant that gives the same data", () => {
    const sync = loadClusterDumpSync(new URL("errors-and-cancel.msgpack.gz", DUMPS));
    const async = dumps.get("errors-and-cancel.msgpack.gz")!;
    expect(sync.raw).toEqual(async.raw);
    expect(sync.file).toBe(async.file);
  });
});

// ---------------------------------------------------------------------------
// Synthetic dumps: tuple keys, missing values, both encodings
// ---------------------------------------------------------------------------

const CONFIG = {
  distributed: {
    worker: {
      connections: { incoming: 10, outgoing: 50 },
      transfer: { "message-bytes-limit": "50MB" },
      memory: { transfer: 0.1 },
      validate: true,
      resources: { GPU: 2 },
    },
  },
};

/** A minimal dump as Python's msgpack writes it: tuple keys are arrays, in keys and values. */
function msgpackStyleDump(): Map<unknown, unknown> {
  const W = "tcp://127.0.0.1:1234";
  const m = (entries: [unknown, unknown][]) => new Map(entries);
  const worker = m([
    ["address", W],
    ["nthreads", 2],
    ["memory_limit", null],
    ["status", "<Status.running: 'running'>"],
    ["config", CONFIG],
    [
      "stimulus_log",
      [
        m([
          ["cls", "ComputeTaskEvent"],
          ["stimulus_id", "compute-1"],
          ["handled", 1.5],
          ["key", ["x", 1]],
          ["run_id", 1],
          ["who_has", m([[["y", 0], ["tcp://127.0.0.1:9"]]])],
          ["nbytes", m([[["y", 0], 8]])],
          ["priority", [0, 1]],
          ["duration", 0.5],
          ["resource_restrictions", {}],
          ["actor", false],
          ["annotations", {}],
        ]),
        m([
          ["cls", "FreeKeysEvent"],
          ["stimulus_id", "free-1"],
          ["handled", 2.5],
          ["keys", [["x", 1], "plain", 7]],
        ]),
      ],
    ],
    [
      "log",
      [
        [["x", 1], "released", "waiting", "waiting", m([[["x", 1], "ready"]]), "compute-1", 1.6],
        ["free-keys", [["x", 1]], "free-1", 2.6],
        ["gather-dependencies", "tcp://127.0.0.1:9", [["y", 0]], "compute-1", 1.7],
        [["x", 1], "put-in-memory", "s", 1.8],
      ],
    ],
    [
      "tasks",
      m([
        [
          ["x", 1],
          m([
            ["key", ["x", 1]],
            ["state", "waiting"],
            ["dependencies", ["<TaskState ('y', 0) fetch>"]],
          ]),
        ],
      ]),
    ],
    ["transition_counter", 1],
    ["ready", [["x", 1]]],
    ["has_what", m([["tcp://127.0.0.1:9", [["y", 0]]]])],
    ["thread_id", 2n ** 60n],
  ]);
  return m([
    ["scheduler", m([["transition_log", [[["x", 1], "released", "waiting", {}, "s", 1]]]])],
    ["workers", m([[W, worker]])],
    ["versions", { scheduler: { packages: { distributed: "2023.7.0" } }, workers: {} }],
  ]);
}

/** The same dump the way Dask's yaml writer would have it: tuple keys in mappings as str(list). */
const YAML_DUMP = `
scheduler:
  transition_log:
  - - - x
      - 1
    - released
    - waiting
    - {}
    - s
    - 1
versions:
  scheduler:
    packages:
      distributed: 2023.7.0
  workers: {}
workers:
  tcp://127.0.0.1:1234:
    address: tcp://127.0.0.1:1234
    config:
      distributed:
        worker:
          connections: {incoming: 10, outgoing: 50}
          memory: {transfer: 0.1}
          resources: {GPU: 2}
          transfer: {message-bytes-limit: 50MB}
          validate: true
    has_what:
      tcp://127.0.0.1:9:
      - - y
        - 0
    log:
    - - [x, 1]
      - released
      - waiting
      - waiting
      - "['x', 1]": ready
      - compute-1
      - 1.6
    - [free-keys, [[x, 1]], free-1, 2.6]
    - [gather-dependencies, tcp://127.0.0.1:9, [[y, 0]], compute-1, 1.7]
    - [[x, 1], put-in-memory, s, 1.8]
    memory_limit: null
    nthreads: 2
    ready:
    - [x, 1]
    status: '<Status.running: ''running''>'
    stimulus_log:
    - actor: false
      annotations: {}
      cls: ComputeTaskEvent
      duration: 0.5
      handled: 1.5
      key: [x, 1]
      nbytes: {"['y', 0]": 8}
      priority: [0, 1]
      resource_restrictions: {}
      run_id: 1
      stimulus_id: compute-1
      who_has:
        "['y', 0]": [tcp://127.0.0.1:9]
    - cls: FreeKeysEvent
      handled: 2.5
      keys: [[x, 1], plain, 7]
      stimulus_id: free-1
    tasks:
      "['x', 1]":
        dependencies:
        - <TaskState ('y', 0) fetch>
        key: [x, 1]
        state: waiting
    thread_id: 1152921504606846976
    transition_counter: 1
`;

const packr = new Packr({ useRecords: false, mapsAsObjects: false });

describe("normalization", () => {
  it("writes tuple keys as Python's str() in both encodings", () => {
    const fromMsgpack = parseClusterDump(
      gzipSync(packr.pack(msgpackStyleDump())),
      "synthetic.msgpack.gz",
    );
    const fromYaml = parseClusterDump(Buffer.from(YAML_DUMP), "synthetic.yaml");
    for (const dump of [fromMsgpack, fromYaml]) {
      const w = dump.workers.get("tcp://127.0.0.1:1234")!;
      expect(w.stimulusLog[0]).toMatchObject({
        key: "('x', 1)",
        who_has: { "('y', 0)": ["tcp://127.0.0.1:9"] },
        nbytes: { "('y', 0)": 8 },
      });
      expect(w.stimulusLog[1].keys).toEqual(["('x', 1)", "plain", "7"]);
      expect(w.log[0]).toEqual([
        "('x', 1)",
        "released",
        "waiting",
        "waiting",
        { "('x', 1)": "ready" },
        "compute-1",
        1.6,
      ]);
      expect(w.log.map((e) => classifyLogEntry(e).kind)).toEqual([
        "transition",
        "free-keys",
        "worker",
        "task",
      ]);
      expect(w.log[1]).toEqual(["free-keys", ["('x', 1)"], "free-1", 2.6]);
      expect(w.log[2][2]).toEqual(["('y', 0)"]);
      expect([...w.tasks.keys()]).toEqual(["('x', 1)"]);
      expect(w.tasks.get("('x', 1)")!.dependencies).toEqual([{ key: "('y', 0)", state: "fetch" }]);
      expect(w.ready).toEqual(["('x', 1)"]);
      expect(w.hasWhat).toEqual({ "tcp://127.0.0.1:9": ["('y', 0)"] });
      expect(w.raw.thread_id).toBe(2n ** 60n);
      expect(w.resources).toEqual({ GPU: 2 });
      expect(w.resourcesSource).toBe("config");
      expect(w.stateParameters.transfer_incoming_bytes_limit).toBeNull();
      expect(w.stateParameters.nthreads).toBe(2);
      expect(dump.scheduler.transitionLog[0][0]).toBe("('x', 1)");
    }
    expect(fromYaml.workers.get("tcp://127.0.0.1:1234")!.raw).toEqual(
      fromMsgpack.workers.get("tcp://127.0.0.1:1234")!.raw,
    );
  });

  it("reads back the YAML it writes: strings YAML 1.1 would take for booleans or numbers, floats in exponent form", () => {
    const probe = ["on", "off", "yes", "No", "y", "1_000", "0b101", "12:30", "0x1F", "~"];
    const floats = [5e-7, 1e21, -2.5e-10, 0.5, 3];
    const packages = { probe, floats, yes: "key" };
    const yaml = stringifyForPyYaml({
      scheduler: { transition_log: [], tasks: {}, workers: {} },
      workers: {},
      versions: { scheduler: { packages } },
    });
    const back = parseClusterDump(Buffer.from(yaml), "x.yaml");
    expect((back.versions.scheduler as { packages: unknown }).packages).toEqual(packages);
  });

  it("types plain scalars as PyYAML 6 reads them (timestamps excepted: they stay text)", () => {
    // Each plain scalar, and what PyYAML's yaml.safe_load makes of it.
    const cases: [string, unknown][] = [
      ["y", "y"],
      ["n", "n"],
      ["1e3", "1e3"],
      ["1.0e3", "1.0e3"],
      ["1.0e+3", 1000],
      ["0o17", "0o17"],
      ["017", 15],
      ["09", "09"],
      ["1_000", 1000],
      ["Off", false],
      ["yes", true],
      ["12:30", 750],
      ["1:20.5", 80.5],
      ["0x1F", 31],
      ["-0x1_F", -31],
      ["0b101", 5],
      ["+.5", "+.5"],
      ["1.", 1],
      ["-.Inf", Number.NEGATIVE_INFINITY],
      ["Null", null],
      ["2001-12-14", "2001-12-14"],
    ];
    const text = [
      "scheduler: {transition_log: [], tasks: {}, workers: {}}",
      "workers: {}",
      "versions:",
      "  scheduler:",
      "    packages:",
      ...cases.map(([plain], i) => `      k${i}: ${plain}`),
    ].join("\n");
    const back = parseClusterDump(Buffer.from(text), "x.yaml");
    const packages = (back.versions.scheduler as { packages: Record<string, unknown> }).packages;
    expect(cases.map((_, i) => packages[`k${i}`])).toEqual(cases.map(([, v]) => v));
  });

  it("refuses a YAML dump too large to parse within the heap, saying so", () => {
    const yaml = Buffer.from(YAML_DUMP);
    expect(() => decodeYaml(yaml, new Ctx("big.yaml"), yaml.length * 10)).toThrow(
      /^big\.yaml: too large to read as YAML here: parsing .* of YAML takes about .*, beyond this process's heap limit \(.*\); dump as msgpack/,
    );
    expect(decodeYaml(yaml, new Ctx("small.yaml"), yaml.length * 100)).toBeInstanceOf(Map);
  });

  it("refuses a msgpack dump too large to read within the heap left, saying so", () => {
    const bytes = packr.pack(msgpackStyleDump());
    expect(() => decodeMsgpack(bytes, new Ctx("big.msgpack"), bytes.length * 5)).toThrow(
      /^big\.msgpack: too large to read here: reading .* of msgpack takes about .* of heap, beyond the .* this process has left; give node more \(NODE_OPTIONS=--max-old-space-size=MB\)$/,
    );
    expect(decodeMsgpack(bytes, new Ctx("small.msgpack"), bytes.length * 20)).toBeInstanceOf(Map);
  });

  it("refuses a gzipped dump that gunzips to more than the heap can read, as soon as it does", () => {
    // A gzip bomb: 3 GB of zeros are 13 MB gzipped, and were gunzipped whole (6 GB of
    // memory, outside the heap) before the decoder refused them as too large.
    const bomb = gzipSync(Buffer.alloc(1_000_000));
    expect(() => gunzip(bomb, new Ctx("big.msgpack.gz"), "msgpack.gz", 100_000)).toThrow(
      /^big\.msgpack\.gz: too large to read here: .* of gzip data gunzip to more than the 97\.66 kiB of msgpack this process has the heap to read; give node more \(NODE_OPTIONS=--max-old-space-size=MB\)$/,
    );
    expect(() => gunzip(bomb, new Ctx("big.yaml.gz"), "yaml.gz", 100_000)).toThrow(
      /^big\.yaml\.gz: too large to read as YAML here: .* gunzip to more than the 97\.66 kiB of YAML .*; dump as msgpack/,
    );
    expect(gunzip(bomb, new Ctx("fits.msgpack.gz"), "msgpack.gz", 1_000_000).length).toBe(
      1_000_000,
    );
    // By default, what the decoder could read within the heap.
    const { heap_size_limit } = getHeapStatistics();
    expect(gunzippedLimit("yaml.gz")).toBe(Math.floor(heap_size_limit / YAML_HEAP_PER_BYTE));
    expect(gunzippedLimit("msgpack.gz")).toBeLessThan(heap_size_limit / MSGPACK_HEAP_PER_BYTE);
    expect(gunzippedLimit("msgpack.gz")).toBeGreaterThan(0);
  });

  it("reads plain msgpack and gzipped yaml too", () => {
    const plain = parseClusterDump(packr.pack(msgpackStyleDump()), "x.msgpack");
    const gzYaml = parseClusterDump(gzipSync(Buffer.from(YAML_DUMP)), "x.yml.gz");
    expect(plain.encoding).toBe("msgpack");
    expect(gzYaml.encoding).toBe("yaml.gz");
    expect(gzYaml.workers.get("tcp://127.0.0.1:1234")!.stimulusLog).toEqual(
      plain.workers.get("tcp://127.0.0.1:1234")!.stimulusLog,
    );
  });

  it("refuses the scheduler's record of a worker with resources that are not a mapping", () => {
    const W = "tcp://127.0.0.1:1234";
    const withResources = (resources: unknown) => {
      const d = msgpackStyleDump();
      (d.get("scheduler") as Map<string, unknown>).set(
        "workers",
        new Map([[W, new Map([["resources", resources]])]]),
      );
      return parseClusterDump(packr.pack(d), "x.msgpack");
    };
    expect(withResources({ GPU: 1 }).workers.get(W)!.resources).toEqual({ GPU: 1 });
    // Without resources there, the config's: as in Worker.__init__.
    expect(withResources(null).workers.get(W)!.resourcesSource).toBe("config");
    // A string there was replaced by the config's resources unsaid.
    expect(() => withResources("GPU=1")).toThrow(
      'x.msgpack: scheduler.workers["tcp://127.0.0.1:1234"].resources: expected an object, got a string ("GPU=1")',
    );
  });

  it("reports a worker that did not answer instead of failing", () => {
    const d = msgpackStyleDump();
    (d.get("workers") as Map<string, unknown>).set("tcp://127.0.0.1:5", "OSError('gone')");
    const dump = parseClusterDump(packr.pack(d), "x.msgpack");
    expect(dump.unavailableWorkers.get("tcp://127.0.0.1:5")).toBe("OSError('gone')");
    expect(dump.workers.size).toBe(1);
  });

  it("refuses values nested more than 500 levels deep, naming a shallow path", () => {
    const d = msgpackStyleDump();
    const scheduler = d.get("scheduler") as Map<string, unknown>;
    /** `n` lists, one inside the other. */
    const nested = (n: number): unknown[] => {
      let v: unknown[] = [];
      for (let i = 1; i < n; i++) v = [v];
      return v;
    };
    // The scheduler mapping is level 1: the innermost of 500 lists is at level 501.
    scheduler.set("extensions", nested(500));
    expect(() => parseClusterDump(packr.pack(d), "x.msgpack")).toThrow(
      "x.msgpack: scheduler.extensions[0][0][0][0][0][0][0][0]: holds values nested more than 500 levels deep",
    );
    scheduler.set("extensions", nested(499));
    expect(() => parseClusterDump(packr.pack(d), "x.msgpack")).not.toThrow();
  });

  it("refuses msgpack nested deeper than the decoder's stack goes as too deep, not as a stack overflow", () => {
    // 100,000 one-element arrays, one inside the other: msgpackr recurses per level.
    const bytes = Buffer.concat([Buffer.alloc(100_000, 0x91), Buffer.from([0xc0])]);
    expect(() => parseClusterDump(bytes, "x.msgpack")).toThrow(
      /^x\.msgpack: holds values nested more than 500 levels deep$/,
    );
  });

  it("refuses YAML nested more than 500 levels deep, flow or block style, saying so", () => {
    /** `YAML_DUMP` with `scheduler.extensions` set to `value` (YAML text after the colon). */
    const withExtensions = (value: string) =>
      Buffer.from(YAML_DUMP.replace("\nscheduler:\n", `\nscheduler:\n  extensions:${value}\n`));
    /** `n` collections, one inside the other, in each style (JSON is YAML too). */
    const styles: Record<string, (n: number) => string> = {
      "flow lists": (n) => ` ${"[".repeat(n)}${"]".repeat(n)}`,
      "flow mappings": (n) => ` ${"{a: ".repeat(n - 1)}{}${"}".repeat(n - 1)}`,
      JSON: (n) => ` ${'{"a": '.repeat(n - 1)}{}${"}".repeat(n - 1)}`,
      "block lists": (n) => `\n  ${"- ".repeat(n - 1)}[]`,
      "block mappings": (n) =>
        `${Array.from({ length: n - 1 }, (_, i) => `\n${" ".repeat(4 + i)}a:`).join("")} {}`,
    };
    for (const [style, nest] of Object.entries(styles)) {
      // The scheduler mapping is level 1: the innermost of 500 is at level 501. Without the
      // bound, the yaml package overflows the stack from 790 flow, 2,000 block levels.
      for (const n of [500, 790, 2500]) {
        expect(() => parseClusterDump(withExtensions(nest(n)), "x.yaml"), `${style} ${n}`).toThrow(
          /^x\.yaml: holds values nested more than 500 levels deep at line \d+, column \d+$/,
        );
      }
      const dump = parseClusterDump(withExtensions(nest(499)), "x.yaml");
      let depth = 0;
      for (
        let v: unknown = dump.scheduler.raw.extensions;
        typeof v === "object" && v !== null;
        depth++
      ) {
        v = Array.isArray(v) ? v[0] : (v as Record<string, unknown>).a;
      }
      expect(depth, style).toBe(499);
    }
  });

  it("refuses YAML whose aliases stand for far more values than it holds written out (an alias bomb)", () => {
    const withExtensions = (value: string) =>
      Buffer.from(YAML_DUMP.replace("\nscheduler:\n", `\nscheduler:\n  extensions:${value}\n`));
    /** `levels` anchors, each aliased ten times by the next: 10^levels values in a few hundred bytes. */
    const bomb = (levels: number) => {
      const lines = ["\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
      for (let i = 1; i < levels; i++) {
        lines.push(
          `\n    a${i}: &a${i} [${Array(10)
            .fill(`*a${i - 1}`)
            .join(", ")}]`,
        );
      }
      return lines.join("");
    };
    // 10^7 values: read, they took 1.3 s and 165 MiB here; two levels more, more memory than there is.
    expect(() => parseClusterDump(withExtensions(bomb(7)), "x.yaml")).toThrow(
      /^x\.yaml: invalid YAML: its aliases stand for more than 1,00\d,\d{3} values, far more than 1\.95 kiB of YAML holds written out \(an alias bomb\?\)$/,
    );
    // Aliases within the bound are read as PyYAML wrote them: each a copy of its anchor's value.
    const dump = parseClusterDump(withExtensions(bomb(3)), "x.yaml");
    const ext = dump.scheduler.raw.extensions as Record<string, unknown>;
    expect((ext.a2 as unknown[][]).flat()).toHaveLength(100);
    expect((ext.a2 as unknown[][][])[9][9]).toEqual(Array(10).fill("x"));
    // A cycle through an alias counts once (nesting refuses it, not the count).
    expect(() => parseClusterDump(withExtensions(" &c [*c]"), "x.yaml")).toThrow(
      /nested more than 500 levels deep/,
    );
  });

  it("renders Python reprs", () => {
    expect(listReprToTupleRepr("['x', 1]")).toBe("('x', 1)");
    expect(listReprToTupleRepr("['x']")).toBe("('x',)");
    expect(listReprToTupleRepr("[]")).toBe("()");
    expect(listReprToTupleRepr("['a', ['b', 2.5], \"it's\"]")).toBe("('a', ('b', 2.5), \"it's\")");
    expect(listReprToTupleRepr("['a]', 1]")).toBe("('a]', 1)");
    expect(listReprToTupleRepr("[not {a} list]")).toBeNull();
    expect(listReprToTupleRepr("[1] [2]")).toBeNull();
    expect(listReprToTupleRepr("x")).toBeNull();
    expect(pyStrRepr("it's")).toBe('"it\'s"');
    expect(pyStrRepr("a\nb\\\u0001é")).toBe("'a\\nb\\\\\\x01é'");
    expect(parsePyStrLiteral("'a\\nb\\\\\\x01é'")).toBe("a\nb\\\u0001é");
    expect(parsePyStrLiteral("nope")).toBeNull();
    expect(parseTaskStateRepr("<TaskState 'split-0-6' memory>")).toEqual({
      key: "split-0-6",
      state: "memory",
    });
    expect(parseTaskStateRepr("<TaskState ('x', 1) long-running>")).toEqual({
      key: "('x', 1)",
      state: "long-running",
    });
    expect(parseTaskStateRepr("<WorkerState 'x'>")).toBeNull();
    expect(typeNameFromRepr("<class 'numpy.ndarray'>")).toBe("numpy.ndarray");
    expect(typeNameFromRepr("None")).toBeNull();
    expect(dumpEncodingOf("A.MSGPACK.GZ")).toBe("msgpack.gz");
    expect(dumpEncodingOf("a.json")).toBeNull();
  });

  it("reads the cancelled and resumed states of task references, as the seed's repr writes them", () => {
    expect(parseTaskStateRepr("<TaskState 'sum-4' resumed(executing->fetch)>")).toEqual({
      key: "sum-4",
      state: "resumed",
      previous: "executing",
      next: "fetch",
    });
    expect(parseTaskStateRepr("<TaskState 'x' resumed(long-running->fetch)>")).toEqual({
      key: "x",
      state: "resumed",
      previous: "long-running",
      next: "fetch",
    });
    expect(parseTaskStateRepr("<TaskState ('x', 1) resumed(flight->waiting)>")).toEqual({
      key: "('x', 1)",
      state: "resumed",
      previous: "flight",
      next: "waiting",
    });
    expect(parseTaskStateRepr("<TaskState 'a b>' cancelled(flight)>")).toEqual({
      key: "a b>",
      state: "cancelled",
      previous: "flight",
    });
    for (const bad of [
      "<TaskState 'x' resumed(executing)>",
      "<TaskState 'x' resumed(executing->)>",
      "<TaskState 'x' resumed(a->b->c)>",
      "<TaskState 'x' cancelled(flight->fetch)>",
      "<TaskState 'x' cancelled()>",
      "<TaskState 'x' memory(executing)>",
      "<TaskState 'x' resumed(executing->fetch>",
      "<TaskState 'x' waiting!>",
    ]) {
      expect(parseTaskStateRepr(bad), bad).toBeNull();
    }
    expect(taskStateReprProblem("<TaskState 'x' resumed(executing)>")).toBe(
      'the state "resumed(executing)" is neither a state\'s name nor cancelled(PREVIOUS) or resumed(PREVIOUS->NEXT), in "<TaskState \'x\' resumed(executing)>"',
    );
    expect(taskStateReprProblem("<TaskState 'x'>")).toBe(
      'expected a "<TaskState key state>" reference, got "<TaskState \'x\'>"',
    );
    expect(taskStateReprProblem("<TaskState 'x memory>")).toBe(
      "the key 'x is not a Python string literal, in \"<TaskState 'x memory>\"",
    );
  });

  it("reads the config the way dask.config.get does", () => {
    const config = new DaskConfig(
      { distributed: { worker: { "memory-limit": 5, transfer: "x" } } },
      "f",
    );
    expect(config.get("distributed.worker.memory_limit")).toBe(5);
    expect(config.get("distributed.nope.x")).toBeUndefined();
    expect(() => config.transferMessageBytesLimit()).toThrow(
      /^f: distributed\.worker\.transfer\["message-bytes-limit"\]: missing \(expected a byte size\)$/,
    );
    expect(() => config.connectionsOutgoing()).toThrow(DumpFormatError);
  });
});

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

describe("errors", () => {
  let dir: string;
  const tmp = (name: string, data: Uint8Array | string): string => {
    const path = join(dir, name);
    writeFileSync(path, data);
    return path;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "weft-dump-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Loads `path` (both variants) and returns the DumpFormatError, checking it names the file. */
  async function failure(path: string, { syncToo = true } = {}): Promise<DumpFormatError> {
    const errors: unknown[] = [];
    await loadClusterDump(path).catch((e: unknown) => errors.push(e));
    if (syncToo) {
      try {
        loadClusterDumpSync(path);
      } catch (e) {
        errors.push(e);
      }
    }
    expect(errors).toHaveLength(syncToo ? 2 : 1);
    for (const e of errors) {
      expect(e).toBeInstanceOf(DumpFormatError);
      expect((e as DumpFormatError).file).toBe(path);
      expect((e as Error).message.startsWith(`${path}: `)).toBe(true);
    }
    expect((errors.at(-1) as Error).message).toBe((errors[0] as Error).message);
    return errors[0] as DumpFormatError;
  }

  const original = (): Buffer => readFileSync(dumpPath("errors-and-cancel.msgpack.gz"));

  it("reads task references to cancelled and resumed tasks, and names a malformed one's task, field and value", async () => {
    const fixture = fileURLToPath(
      new URL("../../test/fixtures/dumps/cancelled-and-resumed.yaml", import.meta.url),
    );
    const tasks = (await loadClusterDump(fixture)).workers.get("tcp://127.0.0.1:1")?.tasks;
    expect(tasks?.get("b")?.dependencies).toEqual([
      { key: "a", state: "resumed", previous: "executing", next: "fetch" },
    ]);
    expect(tasks?.get("e")?.waitingForData).toEqual([
      { key: "f", state: "cancelled", previous: "executing" },
    ]);
    const text = readFileSync(fixture, "utf8");
    const bad = text.replace(
      "dependencies:\n          - <TaskState 'a' resumed(executing->fetch)>",
      "dependencies:\n          - <TaskState 'a' resumed(executing)>",
    );
    expect(bad).not.toBe(text);
    const e = await failure(tmp("bad-state.yaml", bad));
    expect(e.path).toBe('workers["tcp://127.0.0.1:1"].tasks.b.dependencies[0]');
    expect(e.reason).toBe(
      'the state "resumed(executing)" is neither a state\'s name nor cancelled(PREVIOUS) or resumed(PREVIOUS->NEXT), in "<TaskState \'a\' resumed(executing)>"',
    );
  });

  it("rejects a truncated gzip copy", async () => {
    const data = original();
    const e = await failure(tmp("truncated.msgpack.gz", data.subarray(0, data.length >> 1)));
    expect(e.reason).toMatch(/truncated gzip data/);
    expect(e.path).toBeNull();
  });

  it("rejects a corrupted copy", async () => {
    const data = Buffer.from(original());
    for (let i = 1000; i < 1016; i++) data[i] ^= 0xff;
    const e = await failure(tmp("corrupt.msgpack.gz", data));
    expect(e.reason).toMatch(/corrupt gzip data/);
  });

  it("rejects truncated msgpack inside valid gzip", async () => {
    const raw = gunzipSync(original());
    const e = await failure(tmp("cut.msgpack.gz", gzipSync(raw.subarray(0, raw.length - 100))));
    expect(e.reason).toBe(
      "truncated or corrupt msgpack data (a value runs past the end of the data)",
    );
  });

  it("rejects a truncated yaml copy", async () => {
    const text = readFileSync(dumpPath("shuffle.yaml"), "utf8");
    // Cut mid-line: no longer YAML, or YAML whose last entry lacks fields; either way the
    // error says the file does not end as a whole dump does.
    const once = { syncToo: false }; // each parse of this 2 MB file takes a while
    const cutShort =
      " (the YAML does not end with a newline, as a whole dump does: is the file cut short?)";
    let e = await failure(tmp("truncated.yaml", text.slice(0, text.length - 700_000)), once);
    expect(e.reason).toMatch(/^invalid YAML: .* at line \d+, column \d+ \(the YAML/);
    expect(e.reason.endsWith(cutShort)).toBe(true);
    e = await failure(tmp("truncated1.yaml", text.slice(0, 1_500_000)), once);
    expect(e.message).toBe(
      `${e.file}: workers["tcp://127.0.0.1:41927"].stimulus_log[166].stimulus_id: missing (expected a string)${cutShort}`,
    );
    // Cut at a line: still YAML, but the last worker (keys are sorted) lacks its logs.
    const cut = text.lastIndexOf("\n    stimulus_log:\n") + 1;
    e = await failure(tmp("truncated2.yaml", text.slice(0, cut)), once);
    expect(e.message).toBe(
      `${e.file}: workers["tcp://127.0.0.1:44017"].stimulus_log: missing (expected a list)`,
    );
  });

  it("rejects an empty file", async () => {
    expect((await failure(tmp("empty.msgpack.gz", ""))).reason).toBe("the file is empty");
    expect((await failure(tmp("empty.yaml", ""))).reason).toBe("the file is empty");
  });

  it("rejects a wrong extension", async () => {
    const e = await failure(tmp("dump.txt", original()));
    expect(e.reason).toMatch(/unsupported file extension: a cluster dump is \.msgpack\.gz/);
  });

  it("rejects a JSON file, whatever its name", async () => {
    const json = JSON.stringify({ scheduler: {}, workers: [] });
    expect((await failure(tmp("dump.json", json))).reason).toMatch(/unsupported file extension/);
    expect((await failure(tmp("json.msgpack.gz", json))).reason).toMatch(
      /not gzip data, as a msgpack\.gz file must be \(it looks like JSON text\)/,
    );
    expect((await failure(tmp("json.msgpack", json))).reason).toMatch(
      /not a msgpack cluster dump: bytes are left after the first msgpack value \(it looks like JSON text\)/,
    );
    // JSON is YAML: it parses, but is not a cluster dump.
    expect((await failure(tmp("json.yaml", json))).reason).toMatch(
      /^not a cluster dump: no "versions"/,
    );
    const e = await failure(
      tmp("json2.yaml", JSON.stringify({ scheduler: {}, workers: [], versions: {} })),
    );
    expect(e.message).toBe(`${e.file}: workers: expected an object, got a list of 0 items`);
  });

  it("rejects invalid yaml and binary data with a yaml name", async () => {
    expect((await failure(tmp("bad.yaml", "a: [1, 2\nb: }"))).reason).toMatch(/^invalid YAML: /);
    expect((await failure(tmp("bin.yaml", Buffer.from([0xff, 0xfe, 0x00, 0x80])))).reason).toMatch(
      /not UTF-8 text/,
    );
    expect((await failure(tmp("scalar.yaml", "42\n"))).reason).toMatch(
      /^not a cluster dump: expected a mapping .* got the number 42$/,
    );
  });

  it("says a dump named without its .gz is gzip data", async () => {
    const gz = original();
    expect((await failure(tmp("gz.yaml", gz))).reason).toBe(
      "not YAML: the file is not UTF-8 text (it is gzip data: a gzipped dump's name ends in .gz)",
    );
    expect((await failure(tmp("gz.msgpack", gz))).reason).toBe(
      "not a msgpack cluster dump: bytes are left after the first msgpack value (it is gzip data: a gzipped dump's name ends in .gz)",
    );
  });

  it("rejects a missing file or a directory", async () => {
    expect((await failure(join(dir, "missing.msgpack.gz"))).reason).toMatch(/does not exist/);
    const sub = join(dir, "dir.yaml");
    await import("node:fs/promises").then((fs) => fs.mkdir(sub));
    expect((await failure(sub)).reason).toMatch(/is a directory/);
  });

  /** Re-encodes the errors-and-cancel dump after `edit` changed its first worker. */
  function edited(name: string, edit: (worker: Map<string, unknown>) => void): string {
    const decoded = new Unpackr({ mapsAsObjects: false, useRecords: false }).unpack(
      gunzipSync(original()),
    ) as Map<string, unknown>;
    const workers = decoded.get("workers") as Map<string, Map<string, unknown>>;
    edit(workers.get("tcp://127.0.0.1:37641")!);
    return tmp(name, gzipSync(packr.pack(decoded)));
  }

  it("names the path of a bad or missing field", async () => {
    const W = 'workers["tcp://127.0.0.1:37641"]';
    let e = await failure(
      edited("null-event.msgpack.gz", (w) => {
        (w.get("stimulus_log") as unknown[])[3] = null;
      }),
    );
    expect(e.path).toBe(`${W}.stimulus_log[3]`);
    expect(e.reason).toBe("expected an object, got null");

    e = await failure(edited("no-counter.msgpack.gz", (w) => w.delete("transition_counter")));
    expect(e.message).toBe(`${e.file}: ${W}.transition_counter: missing (expected a number)`);

    e = await failure(
      edited("no-key.msgpack.gz", (w) => {
        ((w.get("stimulus_log") as unknown[])[0] as Map<string, unknown>).delete("key");
      }),
    );
    expect(e.message).toBe(
      `${e.file}: ${W}.stimulus_log[0].key: missing (a ComputeTaskEvent has it)`,
    );

    e = await failure(
      edited("bad-log.msgpack.gz", (w) => {
        (w.get("log") as unknown[])[5] = "oops";
      }),
    );
    expect(e.message).toBe(`${e.file}: ${W}.log[5]: expected a list, got a string ("oops")`);

    e = await failure(
      edited("bad-config.msgpack.gz", (w) => {
        const config = w.get("config") as Map<
          string,
          Map<string, Map<string, Map<string, unknown>>>
        >;
        config
          .get("distributed")!
          .get("worker")!
          .get("transfer")!
          .set("message-bytes-limit", "5 foos");
      }),
    );
    expect(e.message).toBe(
      `${e.file}: ${W}.config.distributed.worker.transfer["message-bytes-limit"]: not a byte size: Could not interpret 'foos' as a byte unit`,
    );

    e = await failure(
      edited("bad-task.msgpack.gz", (w) => {
        const tasks = w.get("tasks") as Map<string, Map<string, unknown>>;
        tasks.get("slow-1")!.set("dependents", [42]);
      }),
    );
    expect(e.message).toBe(
      `${e.file}: ${W}.tasks["slow-1"].dependents[0]: expected a string, got the number 42`,
    );

    e = await failure(
      edited("huge-nbytes.msgpack.gz", (w) => {
        const tasks = w.get("tasks") as Map<string, Map<string, unknown>>;
        tasks.get("slow-1")!.set("nbytes", 2n ** 60n);
      }),
    );
    expect(e.message).toBe(
      `${e.file}: ${W}.tasks["slow-1"].nbytes: expected a number, got the integer 1152921504606846976, beyond 2**53`,
    );
  });

  it("says which release of distributed wrote a dump it refuses, when not 2023.7.0", async () => {
    const decoded = new Unpackr({ mapsAsObjects: false, useRecords: false }).unpack(
      gunzipSync(original()),
    ) as Map<string, Map<string, unknown>>;
    const at = (m: unknown, ...keys: string[]): Map<string, unknown> =>
      keys.reduce((x, k) => x.get(k) as Map<string, unknown>, m as Map<string, unknown>);
    const log = at(decoded, "workers", "tcp://127.0.0.1:37641").get("stimulus_log");
    (log as Map<string, unknown>[])[0].delete("run_id");
    const packages = at(decoded, "versions", "scheduler", "packages");
    const same = await failure(tmp("v-same.msgpack.gz", gzipSync(packr.pack(decoded))));
    expect(same.reason).toBe("missing (a ComputeTaskEvent has it)");
    packages.set("distributed", "2022.1.0");
    const other = await failure(tmp("v-other.msgpack.gz", gzipSync(packr.pack(decoded))));
    expect(other.path).toBe(same.path);
    expect(other.reason).toBe(
      "missing (a ComputeTaskEvent has it) (the dump was written by distributed 2022.1.0; weft reads the dumps of 2023.7.0, whose worker it ports)",
    );
  });

  it("refuses a NaN or infinite size, time, priority or id in a stimulus", async () => {
    const W = 'workers["tcp://127.0.0.1:37641"]';
    const cases: [string, (ev: Map<string, unknown>) => void, string][] = [
      ["nbytes", (ev) => ev.set("nbytes", new Map([["x", Number.NaN]])), "nbytes.x"],
      ["priority", (ev) => ev.set("priority", [0, Number.NaN]), "priority[1]"],
      ["duration", (ev) => ev.set("duration", Number.POSITIVE_INFINITY), "duration"],
      ["handled", (ev) => ev.set("handled", Number.NaN), "handled"],
      ["run_id", (ev) => ev.set("run_id", Number.NEGATIVE_INFINITY), "run_id"],
    ];
    for (const [name, edit, field] of cases) {
      const e = await failure(
        edited(`nan-${name}.msgpack.gz`, (w) => {
          edit((w.get("stimulus_log") as unknown[])[0] as Map<string, unknown>);
        }),
      );
      expect(e.path).toBe(`${W}.stimulus_log[0].${field}`);
      expect(e.reason).toMatch(/^expected a finite number, got the number (NaN|-?Infinity)$/);
    }
  });

  it("refuses a NaN or infinite size, id or amount in a task, or a resource amount in a stimulus", async () => {
    // Each was compared with the replay's and shown as a difference (DIVERGED), not refused.
    const W = 'workers["tcp://127.0.0.1:37641"]';
    const task = (w: Map<string, unknown>) =>
      [...(w.get("tasks") as Map<string, Map<string, unknown>>).values()][0];
    const cases: [string, (w: Map<string, unknown>) => void, string][] = [
      ["task-nbytes", (w) => task(w).set("nbytes", Number.NaN), 'tasks["slow-1"].nbytes'],
      ["task-run-id", (w) => task(w).set("run_id", Number.NaN), 'tasks["slow-1"].run_id'],
      [
        "task-resources",
        (w) => task(w).set("resource_restrictions", new Map([["GPU", Number.NaN]])),
        'tasks["slow-1"].resource_restrictions.GPU',
      ],
      [
        "event-resources",
        (w) => {
          const ev = (w.get("stimulus_log") as Map<string, unknown>[])[0];
          ev.set("resource_restrictions", new Map([["GPU", Number.POSITIVE_INFINITY]]));
        },
        "stimulus_log[0].resource_restrictions.GPU",
      ],
    ];
    for (const [name, edit, field] of cases) {
      const e = await failure(edited(`nan-${name}.msgpack.gz`, edit));
      expect(e.path).toBe(`${W}.${field}`);
      expect(e.reason).toMatch(/^expected a finite number, got the number (NaN|-?Infinity)$/);
    }
    // The scheduler's size of a task is what a transferred or scattered value's stand-in takes.
    const decoded = new Unpackr({ mapsAsObjects: false, useRecords: false }).unpack(
      gunzipSync(original()),
    ) as Map<string, Map<string, unknown>>;
    const tasks = decoded.get("scheduler")!.get("tasks") as Map<string, Map<string, unknown>>;
    const [key, t] = [...tasks][0];
    t.set("nbytes", Number.NaN);
    const e = await failure(tmp("nan-scheduler-nbytes.msgpack.gz", gzipSync(packr.pack(decoded))));
    expect(e.path).toBe(`scheduler.tasks[${JSON.stringify(key)}].nbytes`);
    expect(e.reason).toBe("expected a finite number, got the number NaN");
  });

  it("refuses a worker's transition counter that is no count (infinite, negative, fractional)", async () => {
    // Infinity was taken as a log that lost its start, and the worker called DIVERGED.
    const W = 'workers["tcp://127.0.0.1:37641"]';
    for (const [name, value, got] of [
      ["inf", Number.POSITIVE_INFINITY, "the number Infinity"],
      ["negative", -1, "the number -1"],
      ["fraction", 2.5, "the number 2.5"],
    ] as const) {
      const e = await failure(
        edited(`counter-${name}.msgpack.gz`, (w) => w.set("transition_counter", value)),
      );
      expect(e.path).toBe(`${W}.transition_counter`);
      expect(e.reason).toBe(`expected an integer ≥ 0, got ${got}`);
    }
  });

  it("parses bytes with a label and reports unsupported values", () => {
    expect(() => parseClusterDump(new Uint8Array([0xc1]), "weird.msgpack")).toThrow(
      /^weird\.msgpack: unsupported value/,
    );
    expect(() => parseClusterDump(new Uint8Array([1]), "label")).toThrow(
      /^label: unsupported file extension/,
    );
    expect(() => parseClusterDump(packr.pack(3), "label", { encoding: "msgpack" })).toThrow(
      /^label: not a cluster dump: expected a mapping .* got the number 3$/,
    );
  });
});
