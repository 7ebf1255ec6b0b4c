import { describe, expect, it } from "vitest";
import { ComputeTaskEvent, ExecuteSuccessEvent } from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { ReplayClock } from "./clock.ts";
import { eventGroups } from "./eventGroups.ts";
import { LogFollower } from "./follower.ts";
import { formatEpochSeconds } from "./formatTime.ts";
import { inputKindOf } from "./inputKind.ts";
import { compareRecords } from "./logComparison.ts";
import { comparableRecord, isShellRecord } from "./records.ts";

describe("comparable records", () => {
  it("reduce dumped and replayed records alike, set order aside", () => {
    const dumped = comparableRecord([
      "x",
      "flight",
      "memory",
      "memory",
      { b: "ready", a: "ready" },
      "s1",
      1.5,
    ]);
    const replayed = comparableRecord([
      "x",
      "flight",
      "memory",
      "memory",
      new Map([
        ["a", "ready"],
        ["b", "ready"],
      ]),
      "s1",
      0.25,
    ]);
    expect(dumped.canonical).toBe(replayed.canonical);
    expect(dumped.isTransition).toBe(true);
    expect(dumped.key).toBe("x");
    expect(dumped.time).toBe(1.5);
    const gatherA = comparableRecord(["gather-dependencies", "w", ["b", "a"], "s2", 1]);
    const gatherB = comparableRecord(["gather-dependencies", "w", new Set(["a", "b"]), "s2", 2]);
    expect(gatherA.canonical).toBe(gatherB.canonical);
    expect(gatherA.gatherFrom).toBe("w");
    expect(gatherA.keys).toEqual(["a", "b"]);
    expect(comparableRecord(["x", "compute-task", "released", "s3", 1]).createdIn).toBe("released");
    expect(isShellRecord(["request-dep", "w", ["a"], "s", 1])).toBe(true);
    expect(isShellRecord(["gather-dependencies", "w", ["a"], "s", 1])).toBe(false);
  });

  it("tell equal, reordered and divergent records apart", () => {
    const r = (key: string) => comparableRecord([key, "put-in-memory", "s", 0]);
    expect(compareRecords([r("a"), r("b")], [r("a"), r("b")]).verdict).toBe("equal");
    const reordered = compareRecords([r("a"), r("b")], [r("b"), r("a")]);
    expect(reordered.verdict).toBe("reordered");
    expect(reordered.difference?.index).toBe(0);
    const divergent = compareRecords([r("a"), r("b")], [r("a")]);
    expect(divergent.verdict).toBe("divergent");
    expect(divergent.difference).toMatchObject({ index: 1, replayed: null, missing: 1, extra: 0 });
  });
});

describe("helpers", () => {
  it("the replay clock is strictly increasing and follows handled times", () => {
    const clock = new ReplayClock();
    clock.setEventTime(1_795_992_522.5);
    const a = clock.now();
    const b = clock.now();
    expect(a).toBe(1_795_992_522.5);
    expect(b).toBeGreaterThan(a);
    expect(b - a).toBeLessThan(1e-5);
    clock.setEventTime(1_795_992_522.4); // earlier than the last reading: still increasing
    expect(clock.now()).toBeGreaterThan(b);
    clock.setEventTime(1_795_992_600);
    expect(clock.now()).toBe(1_795_992_600);
    // A corrupt handled time at the top of the double range is ignored: readings from
    // there would overflow to Infinity, from which no larger one can be found (a hang).
    clock.setEventTime(Number.MAX_VALUE);
    const c = clock.now();
    const d = clock.now();
    expect(Number.isFinite(d)).toBe(true);
    expect(d).toBeGreaterThan(c);
  });

  it("groups consecutive events of one stimulus", () => {
    const ev = (stimulus_id: string) => ({ stimulus_id });
    expect(eventGroups([ev("a"), ev("a"), ev("b"), ev("a")])).toEqual([
      { stimulusId: "a", first: 0, end: 2 },
      { stimulusId: "b", first: 2, end: 3 },
      { stimulusId: "a", first: 3, end: 4 },
    ]);
  });

  it("knows the kinds of input and formats times", () => {
    expect(inputKindOf("x.msgpack.gz")).toBe("dump");
    expect(inputKindOf("x.YAML")).toBe("dump");
    expect(inputKindOf("x.json.gz")).toBe("vector");
    expect(inputKindOf("x.jsonl.gz")).toBe("stream");
    expect(inputKindOf("x.txt")).toBeNull();
    expect(formatEpochSeconds(1_795_992_522.555_337)).toBe("2026-11-29T22:48:42.555337Z");
    expect(formatEpochSeconds(null)).toMatch(/^-+$/);
    // Outside Python's datetime range (years 1 to 9999): the seconds, not a crash or a cut year.
    expect(formatEpochSeconds(1e20)).toBe("100000000000000000000s".padEnd(27));
    expect(formatEpochSeconds(253_402_300_800)).toBe("253402300800s".padEnd(27));
    expect(formatEpochSeconds(253_402_300_799.5)).toBe("9999-12-31T23:59:59.500000Z");
    expect(formatEpochSeconds(-62_135_596_800)).toBe("0001-01-01T00:00:00.000000Z");
    expect(formatEpochSeconds(-62_135_596_801)).toBe("-62135596801s".padEnd(27));
  });
});

describe("LogFollower", () => {
  /** Two tasks of one dependency: its completion makes both ready, one thread runs one. */
  function twoReady(follower?: LogFollower): WorkerState {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1, chooser: follower });
    follower?.attach(ws);
    const compute = (key: string, deps: string[], prio: number) =>
      new ComputeTaskEvent({
        key,
        runId: prio,
        whoHas: Object.fromEntries(deps.map((d) => [d, ["tcp://127.0.0.1:2"]])),
        nbytes: Object.fromEntries(deps.map((d) => [d, 8])),
        priority: [prio],
        duration: 1,
        runSpec: null,
        resourceRestrictions: {},
        actor: false,
        annotations: {},
        spanId: null,
        stimulusId: `compute-${key}`,
      });
    follower?.begin([]);
    ws.handleStimulus(compute("d", [], 0));
    ws.handleStimulus(compute("x", ["d"], 1));
    ws.handleStimulus(compute("y", ["d"], 2));
    return ws;
  }

  const done = () =>
    new ExecuteSuccessEvent({
      key: "d",
      runId: 0,
      value: 1,
      start: 0,
      stop: 1,
      nbytes: 8,
      type: "int",
      stimulusId: "done-d",
    });

  it("without it, the port picks; with it, the dumped log does", () => {
    const plain = twoReady();
    plain.handleStimulus(done());
    const runs = (ws: WorkerState) => [...ws.executing].map((t) => t.key);
    const defaultPick = runs(plain)[0];
    const other = defaultPick === "x" ? "y" : "x";

    const follower = new LogFollower();
    const ws = twoReady(follower);
    const dumped = [
      comparableRecord(["d", "put-in-memory", "done-d", 0]),
      comparableRecord([
        "d",
        "executing",
        "memory",
        "memory",
        { x: "ready", y: "ready" },
        "done-d",
        0,
      ]),
      comparableRecord([other, "waiting", "ready", "ready", { [other]: "executing" }, "done-d", 0]),
    ];
    follower.begin(dumped);
    ws.handleStimulus(done());
    expect(runs(ws)).toEqual([other]);
    expect(follower.steeredRecommendations).toBe(1);
  });
});

describe("LogFollower and gathers", () => {
  /** A worker fetching `limit` transfers at a time, its peers chosen by `follower`. */
  function gathering(limit: number, follower?: LogFollower): WorkerState {
    const ws = new WorkerState({
      address: "tcp://127.0.0.1:1",
      transferIncomingCountLimit: limit,
      chooser: follower,
    });
    ws.transferIncomingBytesThrottleThreshold = 0;
    follower?.attach(ws);
    return ws;
  }

  /** One task needing a key from each of two equally good peers; one transfer at a time. */
  const gatherOne = (follower?: LogFollower) => gathering(1, follower);

  const compute = ComputeTaskEvent.dummy("x", {
    runId: 1,
    whoHas: { a: ["tcp://127.0.0.1:2"], b: ["tcp://127.0.0.1:3"] },
    nbytes: { a: 8, b: 8 },
    stimulusId: "compute-x",
  });

  const peers = (ws: WorkerState, ev: ComputeTaskEvent) =>
    ws.handleStimulus(ev).flatMap((i) => (i.cls === "GatherDep" ? [i.worker] : []));

  it("asks the peer the dumped log asked when peers tie", () => {
    const plain = gatherOne();
    const [byDefault] = peers(plain, compute);
    const [other, otherKey] =
      byDefault === "tcp://127.0.0.1:2" ? ["tcp://127.0.0.1:3", "b"] : ["tcp://127.0.0.1:2", "a"];
    // The log of a live run that asked the other peer: the same records up to the gather.
    const dumped = [...plain.log].map((r) =>
      r[0] === "gather-dependencies"
        ? comparableRecord(["gather-dependencies", other, [otherKey], "compute-x", 0])
        : comparableRecord(r),
    );
    const follower = new LogFollower();
    const ws = gatherOne(follower);
    follower.begin(dumped);
    expect(peers(ws, compute)).toEqual([other]);
    expect(follower.pinnedGathers).toBe(1);
  });

  it("ranks every dumped peer of one point before the others, in the dumped order", () => {
    // Three equally good peers, two transfers at a time: the live run asked the two
    // that the port's own tie-break leaves out of the first pair.
    const make = (follower?: LogFollower) => gathering(2, follower);
    const three = ComputeTaskEvent.dummy("x", {
      runId: 1,
      whoHas: { a: ["tcp://127.0.0.1:2"], b: ["tcp://127.0.0.1:3"], c: ["tcp://127.0.0.1:4"] },
      nbytes: { a: 8, b: 8, c: 8 },
      stimulusId: "compute-x",
    });
    const plain = make();
    const byDefault = peers(plain, three);
    expect(byDefault).toHaveLength(2);
    const keyOf: Record<string, string> = {
      "tcp://127.0.0.1:2": "a",
      "tcp://127.0.0.1:3": "b",
      "tcp://127.0.0.1:4": "c",
    };
    const [left] = Object.keys(keyOf).filter((p) => !byDefault.includes(p));
    const dumpedPeers = [left, byDefault[1]];
    const log = [...plain.log];
    const dumped = log
      .filter((r) => r[0] !== "gather-dependencies")
      .map((r) => comparableRecord(r));
    // The gathers at the point the port logged them, naming the dumped peers.
    const at = log.findIndex((r) => r[0] === "gather-dependencies");
    dumped.splice(
      at,
      0,
      ...dumpedPeers.map((p) =>
        comparableRecord(["gather-dependencies", p, [keyOf[p]], "compute-x", 0]),
      ),
    );
    const follower = new LogFollower();
    const ws = make(follower);
    follower.begin(dumped);
    expect(peers(ws, three)).toEqual(dumpedPeers);
    expect(follower.pinnedGathers).toBe(2);
  });
});
