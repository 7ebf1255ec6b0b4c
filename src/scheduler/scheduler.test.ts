import { type AddressInfo, createServer, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { muteServer } from "../comm/testMuteServer.ts";
import { strangerTls, testTls } from "../comm/testTls.ts";
import { WIRE_PROTOCOL_VERSION, weftVersion, wireVersion } from "../protocol/version.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { Scheduler } from "./scheduler.ts";
import type { SchedulerOptions } from "./schedulerOptions.ts";
import { INC_X_GRAPH, rawPeer, registerClient, registerWorker } from "./testPeer.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function start(o: SchedulerOptions = {}) {
  const { logger, records } = memoryLogger();
  const s = await Scheduler.start({ listen: "inproc://sched", validate: true, logger, ...o });
  open.push(s);
  return { s, records };
}

/** A raw connection that plays a worker or a client, recording what it receives. */
function peer(s: Scheduler, hello: Record<string, unknown>) {
  return rawPeer(s.address, hello, (c) => open.push(c));
}

/** A scheduler whose plugin records each worker joining (`+worker A`) and leaving (`-worker A`). */
async function startRecordingWorkers() {
  const log: string[] = [];
  const { s } = await start({
    plugins: [
      {
        name: "rec",
        addWorker: (_s, w) => log.push(`+worker ${w}`),
        removeWorker: (_s, w) => log.push(`-worker ${w}`),
      },
    ],
  });
  return { s, log };
}

/** A client retires `address` (the peer `w`): once retired, and `w` told to close. */
async function retireOne(
  s: Scheduler,
  w: Awaited<ReturnType<typeof peer>>,
  address: string,
): Promise<void> {
  const c = await peer(s, registerClient("c1"));
  await c.comm.send([
    { op: "retire-workers", workers: [address], clientId: "c1", stimulusId: "rt" },
  ]);
  expect(await c.waitFor((m) => m.op === "workers-retired")).toMatchObject({
    retired: [address],
  });
  await w.waitFor((m) => m.op === "close-worker");
}

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error("condition not met in time");
    await sleep(5);
  }
}

describe("Scheduler server", () => {
  it("registers a worker, sends it work and routes its results to the client", async () => {
    const { s } = await start();
    const w = await peer(s, registerWorker("inproc://w/1"));
    // Each reply says the largest message the scheduler accepts (the default here).
    const maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
    expect(w.reply).toEqual({
      op: "register-worker-reply",
      status: "OK",
      maxMessageBytes,
      ...wireVersion(),
    });
    const c = await peer(s, registerClient("c1"));
    expect(c.reply).toEqual({
      op: "register-client-reply",
      status: "OK",
      maxMessageBytes,
      leaseTimeoutMs: 30_000,
      ...wireVersion(),
    });
    await c.comm.send([INC_X_GRAPH]);
    const compute = await w.waitFor((m) => m.op === "compute-task");
    expect(compute).toMatchObject({ key: "x", runSpec: { fn: "inc", args: [1] } });
    await w.comm.send([
      {
        op: "task-finished",
        key: "x",
        runId: compute.runId,
        nbytes: 8,
        typename: "number",
        stimulusId: "f1",
      },
    ]);
    const done = await c.waitFor((m) => m.op === "key-in-memory");
    expect(done).toMatchObject({ key: "x", whoHas: ["inproc://w/1"] });
    expect(s.countersSnapshot).toMatchObject({
      tasksFinished: 1,
      tasksDone: 1,
      workers: 1,
      clients: 1,
    });
    s.state.validateState();
  });

  it("refuses a second worker at the same address", async () => {
    const { s } = await start();
    await peer(s, registerWorker("inproc://w/1"));
    const again = await peer(s, registerWorker("inproc://w/1"));
    expect(again.reply).toMatchObject({ status: "error" });
    expect(String(again.reply.message)).toMatch(/already registered/);
    expect(s.state.workers.size).toBe(1);
  });

  it("gives the address of a worker it removed to a new one, even before the old connection ends", async () => {
    const { s } = await start();
    const old = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([{ op: "restart", clientId: "c1", stimulusId: "rs" }]);
    expect(await c.waitFor((m) => m.op === "restarted")).toMatchObject({
      workers: ["inproc://w/1"],
      nannies: [],
    });
    // The old worker has been told to close, but has not yet.
    expect(await old.waitFor((m) => m.op === "close-worker")).toMatchObject({ restart: true });
    const again = await peer(s, { ...registerWorker("inproc://w/1"), nanny: true });
    expect(again.reply).toMatchObject({ status: "OK" });
    expect(s.state.workers.get("inproc://w/1")?.nanny).toBe(true);
    // The old connection was dropped, and its end does not remove the new worker.
    await until(() => old.comm.isClosed);
    await sleep(20);
    expect(s.state.workers.size).toBe(1);
    s.state.validateState();
  });

  it("tells the plugins the worker it removed left when a new one takes its address before its connection ends", async () => {
    const { s, log } = await startRecordingWorkers();
    const old = await peer(s, registerWorker("inproc://w/1"));
    await retireOne(s, old, "inproc://w/1");
    // A worker started in its place (a nanny's, at a fixed port) registers before the
    // retired one's connection has ended: that session ends without a word.
    const again = await peer(s, { ...registerWorker("inproc://w/1"), nanny: true });
    expect(again.reply).toMatchObject({ status: "OK" });
    await until(() => old.comm.isClosed);
    await sleep(20);
    expect(log).toEqual(["+worker inproc://w/1", "-worker inproc://w/1", "+worker inproc://w/1"]);
  });

  it("removes a retired worker at once, as Dask's retire_workers: the plugins and the events log hear though it never closes its connection", async () => {
    const { s, log } = await startRecordingWorkers();
    const w = await peer(s, registerWorker("inproc://w/1"));
    await peer(s, registerWorker("inproc://w/2"));
    await retireOne(s, w, "inproc://w/1");
    // The worker hangs: its connection stays open, and it has left all the same.
    await sleep(20);
    expect(w.comm.isClosed).toBe(false);
    expect(log).toEqual(["+worker inproc://w/1", "+worker inproc://w/2", "-worker inproc://w/1"]);
    expect(s.events.get("inproc://w/1").map(([, m]) => m)).toEqual([
      { action: "add-worker", worker: "inproc://w/1" },
      { action: "remove-worker", worker: "inproc://w/1" },
    ]);
    expect([...s.state.workers.keys()]).toEqual(["inproc://w/2"]);
    // Its connection ending later tells nobody again.
    await w.comm.close();
    await sleep(20);
    expect(log).toHaveLength(3);
  });

  it("refuses a worker at a tcp:// address it cannot reach, unless told not to check", async () => {
    const { s } = await start({ listen: "tcp://127.0.0.1:0" });
    const unreachable = await peer(s, registerWorker("tcp://127.0.0.1:1"));
    expect(unreachable.reply).toMatchObject({ status: "error" });
    expect(String(unreachable.reply.message)).toMatch(
      /^cannot reach the worker at its address tcp:\/\/127\.0\.0\.1:1 \(.*refused.*\): its peers could not either; check its --listen \/ --contact-address$/,
    );
    expect(s.state.workers.size).toBe(0);
    // A worker that does listen there is accepted.
    const { listen } = await import("../comm/connect.ts");
    const listener = await listen("tcp://127.0.0.1:0", async (comm) => void comm.close());
    open.push(listener);
    const ok = await peer(s, registerWorker(listener.address));
    expect(ok.reply).toMatchObject({ status: "OK" });
    const { s: trusting } = await start({ listen: "tcp://127.0.0.1:0", checkWorkerAddress: false });
    const unchecked = await peer(trusting, registerWorker("tcp://127.0.0.1:1"));
    expect(unchecked.reply).toMatchObject({ status: "OK" });
  });

  it("a close ends its reach check of a registering worker whose address never makes the TLS handshake, where it waited 5 s for the check", async () => {
    const mute = await muteServer();
    try {
      const { s } = await start({ listen: "tls://127.0.0.1:0", tls: testTls() });
      void rawPeer(s.address, registerWorker(`tls://${mute.hostPort}`), (c) => open.push(c), {
        tls: testTls(),
      }).catch(() => {});
      await mute.acceptedAtLeast(1);
      const closed = s.close().then(() => "closed");
      expect(await Promise.race([closed, sleep(2_000, "still closing")])).toBe("closed");
      const ended = mute.endedAtLeast(1).then(() => "ended");
      expect(await Promise.race([ended, sleep(1_000, "still checking")])).toBe("ended");
    } finally {
      await mute.close();
    }
  });

  it("checks the addresses of many workers registering at once without a listener-leak warning", async () => {
    const mutes = await Promise.all(Array.from({ length: 12 }, () => muteServer()));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const { s } = await start({ listen: "tls://127.0.0.1:0", tls: testTls() });
      for (const mute of mutes) {
        void rawPeer(s.address, registerWorker(`tls://${mute.hostPort}`), (c) => open.push(c), {
          tls: testTls(),
        }).catch(() => {});
      }
      // Twelve reach checks in flight, each listening to the scheduler's closing signal:
      // Node warned of a "possible EventTarget memory leak" past ten, on a scheduler's stderr.
      await Promise.all(mutes.map((m) => m.acceptedAtLeast(1)));
      await s.close();
      await sleep(50); // a warning is emitted on the next tick
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await Promise.all(mutes.map((m) => m.close()));
    }
  });

  it("refuses the second of two workers registering at once at one tcp:// address, saying why", async () => {
    const { s } = await start({ listen: "tcp://127.0.0.1:0" });
    const { listen } = await import("../comm/connect.ts");
    const listener = await listen("tcp://127.0.0.1:0", async (comm) => void comm.close());
    open.push(listener);
    // Both ask before either is registered: the second may be found taken only after its reach check.
    const [a, b] = await Promise.all([
      peer(s, registerWorker(listener.address)),
      peer(s, registerWorker(listener.address)),
    ]);
    const statuses = [a.reply.status, b.reply.status].sort();
    expect(statuses).toEqual(["OK", "error"]);
    const refused = a.reply.status === "error" ? a.reply : b.reply;
    expect(refused.message).toBe(`a worker is already registered at ${listener.address}`);
    expect(s.state.workers.size).toBe(1);
  });

  it("warns once of a worker refused for a taken name, which asks again and again; then at debug", async () => {
    const { s, records } = await start();
    await peer(s, { ...registerWorker("inproc://w/1"), name: "w" });
    for (let i = 0; i < 3; i++) {
      const again = await peer(s, { ...registerWorker("inproc://w/2"), name: "w" });
      expect(again.reply).toMatchObject({ status: "error", code: "name-taken" });
    }
    // Another worker given the name is warned of in its turn.
    await peer(s, { ...registerWorker("inproc://w/3"), name: "w" });
    const refusals = records.filter((r) => String(r.msg).startsWith("refused a worker"));
    expect(refusals.map((r) => [r.level, r.msg, r.worker])).toEqual([
      [40, "refused a worker", undefined],
      [20, "refused a worker again", "inproc://w/2"],
      [20, "refused a worker again", "inproc://w/2"],
      [40, "refused a worker", undefined],
    ]);
    expect(refusals[0].reason).toBe('the name "w" is taken by the worker at inproc://w/1');
  });

  it("warns again of a refusal once the minute since it warned of it has passed", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const { s, records } = await start();
      await peer(s, { ...registerWorker("inproc://w/1"), name: "w" });
      await peer(s, { ...registerWorker("inproc://w/2"), name: "w" });
      await peer(s, { ...registerWorker("inproc://w/2"), name: "w" });
      vi.setSystemTime(Date.now() + 60_000);
      await peer(s, { ...registerWorker("inproc://w/2"), name: "w" });
      const refusals = records.filter((r) => String(r.msg).startsWith("refused a worker"));
      expect(refusals.map((r) => r.level)).toEqual([40, 20, 40]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a malformed registration", async () => {
    const { s } = await start();
    const w = await peer(s, { ...registerWorker("inproc://w/1"), nthreads: -1 });
    expect(w.reply).toMatchObject({ status: "error" });
    expect(String(w.reply.message)).toMatch(/nthreads/);
    expect(s.state.workers.size).toBe(0);
  });

  it("refuses a worker or a client whose maxMessageBytes is not a positive integer, saying so", async () => {
    const { s, records } = await start();
    const cases = [
      [
        { ...registerClient("c1"), maxMessageBytes: 0 },
        "register-client: maxMessageBytes must be a positive integer (the largest message the client accepts, in bytes), got 0",
      ],
      [
        { ...registerClient("c2"), maxMessageBytes: "1MiB" },
        'register-client: maxMessageBytes must be a positive integer (the largest message the client accepts, in bytes), got "1MiB"',
      ],
      [
        { ...registerWorker("inproc://w/1"), maxMessageBytes: 1.5 },
        "register-worker: maxMessageBytes must be a positive integer (the largest message the worker accepts, in bytes), got 1.5",
      ],
    ] as const;
    for (const [hello, message] of cases) {
      const p = await peer(s, hello);
      expect(p.reply).toEqual({
        op: `${hello.op}-reply`,
        status: "error",
        message,
        ...wireVersion(),
      });
      expect(records.map((r) => r.reason)).toContain(message);
    }
    expect(s.state.workers.size).toBe(0);
    expect(s.countersSnapshot).toMatchObject({ workers: 0, clients: 0 });
    // One that is (an in-process connection limits no sizes: nothing to apply), and none at all.
    const w = await peer(s, { ...registerWorker("inproc://w/2"), maxMessageBytes: 1024 });
    const c = await peer(s, { ...registerClient("c3"), maxMessageBytes: 1024 });
    const old = await peer(s, registerClient("c4"));
    for (const p of [w, c, old]) expect(p.reply).toMatchObject({ status: "OK" });
    expect(s.state.workers.has("inproc://w/2")).toBe(true);
  });

  it("refuses a worker or a client of another weft version, naming both, and logs it", async () => {
    const { s, records } = await start();
    const ours = `wire protocol ${WIRE_PROTOCOL_VERSION} (weft ${weftVersion()})`;
    const advice = "run the same weft version on the scheduler, workers and clients";
    const newer = { protocolVersion: WIRE_PROTOCOL_VERSION + 1, weftVersion: "99.0.0" };
    // What a weft from before the check sends: no version fields.
    const older = ({ protocolVersion: _, weftVersion: __, ...rest }: Record<string, unknown>) =>
      rest;
    const cases = [
      [
        { ...registerWorker("inproc://w/1"), ...newer },
        `the worker speaks wire protocol ${WIRE_PROTOCOL_VERSION + 1} (weft 99.0.0) and this scheduler ${ours}: ${advice}`,
      ],
      [
        older(registerWorker("inproc://w/2")),
        `the worker speaks no wire protocol version, so it runs a weft older than this scheduler, which speaks ${ours}: ${advice}`,
      ],
      [
        { ...registerClient("c1"), ...newer },
        `the client speaks wire protocol ${WIRE_PROTOCOL_VERSION + 1} (weft 99.0.0) and this scheduler ${ours}: ${advice}`,
      ],
      [
        older(registerClient("c2")),
        `the client speaks no wire protocol version, so it runs a weft older than this scheduler, which speaks ${ours}: ${advice}`,
      ],
    ] as const;
    for (const [hello, message] of cases) {
      const p = await peer(s, hello);
      expect(p.reply).toEqual({
        op: `${String(hello.op)}-reply`,
        status: "error",
        message,
        ...wireVersion(),
      });
      expect(records.map((r) => r.reason)).toContain(message);
    }
    expect(s.state.workers.size).toBe(0);
    expect(s.countersSnapshot).toMatchObject({ workers: 0, clients: 0 });
  });

  it("rejects and logs malformed messages without touching the state, and handles the rest", async () => {
    const { s, records } = await start();
    const w = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([INC_X_GRAPH]);
    const compute = await w.waitFor((m) => m.op === "compute-task");
    await w.comm.send([
      { op: "task-finished", key: 42, runId: "x", stimulusId: "bad-1" },
      "not even an object",
      { op: "no-such-op", stimulusId: "bad-2" },
      {
        op: "task-finished",
        key: "x",
        runId: compute.runId,
        nbytes: 8,
        typename: "number",
        stimulusId: "f1",
      },
    ]);
    await c.waitFor((m) => m.op === "key-in-memory");
    expect(s.counters.rejectedMessages).toBe(3);
    const rejected = records.filter((r) => r.msg === "rejected a malformed message");
    expect(rejected.map((r) => r.reason)).toEqual([
      expect.stringMatching(/key must be a non-empty string/),
      expect.stringMatching(/msg must be an object/),
      expect.stringMatching(/unknown op "no-such-op"/),
    ]);
    expect(s.status).toBe("running");
    s.state.validateState();
  });

  it("logs who sent a message over its maxMessageBytes, with the sizes, when it closes the connection", async () => {
    const { s, records } = await start({ listen: "tcp://127.0.0.1:0", maxMessageBytes: 10_000 });
    // Raw connections: they do not go by the limit the replies carry.
    const c = await peer(s, registerClient("old-client"));
    expect(c.reply.maxMessageBytes).toBe(10_000);
    const w = await peer(s, registerWorker("inproc://w/old"));
    for (const { comm } of [c, w]) {
      await comm.send([{ op: "heartbeat-worker", pad: "x".repeat(20_000) }]);
      await comm.closed;
    }
    await until(() => records.some((r) => r.worker === "inproc://w/old" && r.bytes !== undefined));
    const logged = records.filter((r) => r.bytes !== undefined);
    expect(logged).toHaveLength(2);
    for (const r of logged) {
      expect(r.level).toBe(40);
      expect(r.limit).toBe(10_000);
      expect(r.bytes).toBeGreaterThan(20_000);
      expect(r.peer).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    }
    expect(logged.find((r) => r.client === "old-client")?.msg).toMatch(
      /^client old-client sent a message of at least 19\.\d\d kiB, larger than this scheduler's --max-message-bytes \(9\.77 kiB\): closed its connection\. It did not go by the limit the scheduler told it when it registered \(is it a weft older than the scheduler's\?\)$/,
    );
    expect(logged.find((r) => r.worker === "inproc://w/old")?.msg).toMatch(
      /^the worker at inproc:\/\/w\/old sent a message of at least 19\.\d\d kiB, larger than this scheduler's --max-message-bytes \(9\.77 kiB\): closed its connection\. .*\(is it a weft older than the scheduler's\?\)$/,
    );
  });

  it("records in the task stream only the runs it accepted, and only their well-formed timings", async () => {
    const { s } = await start();
    const w = await peer(s, registerWorker("inproc://w/1", 2));
    const c = await peer(s, registerClient("c1"));
    const task = { spec: { fn: "inc", args: [1] }, dependencies: [] };
    await c.comm.send([
      {
        op: "update-graph",
        clientId: "c1",
        keys: ["x", "y"],
        stimulusId: "g1",
        tasks: new Map([
          ["x", task],
          ["y", task],
        ]),
      },
    ]);
    const x = await w.waitFor((m) => m.op === "compute-task" && m.key === "x");
    const y = await w.waitFor((m) => m.op === "compute-task" && m.key === "y");
    const t = Date.now() / 1000;
    const compute = { action: "compute", start: t - 1, stop: t };
    const junk = [null, 5, "x", { action: "compute", start: "1", stop: 2 }];
    await w.comm.send([
      // Rejected as malformed (the state machine's shape checks), and of other runs: a
      // malformed report of the current run fails its task (see malformedReport.test.ts).
      {
        op: "task-finished",
        key: "x",
        runId: (x.runId as number) + 100,
        nbytes: 8,
        typename: "n",
        startstops: junk,
        stimulusId: "a",
      },
      {
        op: "task-erred",
        key: "y",
        runId: (y.runId as number) + 100,
        exceptionText: 5,
        tracebackText: "",
        startstops: junk,
        stimulusId: "b",
      },
      {
        op: "task-finished",
        key: "x",
        runId: (x.runId as number) + 100,
        nbytes: 1e300,
        typename: "n",
        stimulusId: "c",
      },
      // Accepted, with timings the state machine lets through.
      {
        op: "task-finished",
        key: "x",
        runId: x.runId,
        nbytes: 8,
        typename: "number",
        startstops: [
          compute,
          { action: "transfer", start: Number.NaN, stop: Number.POSITIVE_INFINITY },
        ],
        stimulusId: "d",
      },
      {
        op: "task-erred",
        key: "y",
        runId: y.runId,
        exceptionText: "Error: no",
        tracebackText: "",
        startstops: [...junk, { ...compute, source: "inproc://w/2", extra: "dropped" }],
        stimulusId: "e",
      },
    ]);
    await c.waitFor((m) => m.op === "task-erred" && m.key === "y");
    expect(s.counters.rejectedMessages).toBe(3);
    const runs = [
      { key: "x", worker: "inproc://w/1", status: "OK", nbytes: 8, startstops: [compute] },
      {
        key: "y",
        worker: "inproc://w/1",
        status: "error",
        nbytes: null,
        startstops: [{ ...compute, source: "inproc://w/2" }],
      },
    ];
    expect(s.taskStream.query()).toEqual(runs);
    expect(s.taskStream.query({ since: t - 10 })).toEqual(runs);
  });

  it("stops when its state machine fails, saying why in fault", async () => {
    const { s } = await start();
    expect(s.fault).toBeNull();
    vi.spyOn(s.state, "handleStimuli").mockImplementation(() => {
      throw new Error("a bug\nat somewhere");
    });
    s.dispatch([{ kind: "remove-worker", worker: "inproc://w/1", stimulusId: "r1" }]);
    await s.closed;
    expect(s.status).toBe("failed");
    expect(s.fault).toBe("its state machine failed: a bug\nat somewhere");
  });

  it("has no fault when closed", async () => {
    const { s } = await start();
    await s.close();
    expect(s.status).toBe("closed");
    expect(s.fault).toBeNull();
  });

  it("refuses a client taking the id of the fire-and-forget stand-in", async () => {
    const { s } = await start();
    const c = await peer(s, registerClient("fire-and-forget"));
    expect(c.reply).toMatchObject({ status: "error", message: expect.stringMatching(/reserved/) });
  });

  it("rejects a client message that speaks for another client", async () => {
    const { s, records } = await start();
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      { op: "update-graph", clientId: "c2", keys: ["x"], stimulusId: "g", tasks: new Map() },
    ]);
    await until(() => s.counters.rejectedMessages === 1);
    expect(records.some((r) => String(r.msg).includes("may only speak for itself"))).toBe(true);
    expect(s.state.clients.has("c2")).toBe(false);
  });

  it("rejects a client message without a valid clientId, saying so", async () => {
    const { s, records } = await start();
    const c = await peer(s, registerClient("c1"));
    const graph = { op: "update-graph", keys: ["x"], stimulusId: "g", tasks: new Map() };
    await c.comm.send([graph, { ...graph, clientId: 42 }, { ...graph, clientId: "" }]);
    await until(() => s.counters.rejectedMessages === 3);
    const logged = records.map((r) => String(r.msg)).filter((m) => m.startsWith("rejected"));
    expect(logged).toEqual([
      "rejected a malformed message: clientId is missing",
      "rejected a malformed message: clientId must be a non-empty string",
      "rejected a malformed message: clientId must be a non-empty string",
    ]);
    expect(s.state.tasks.size).toBe(0);
  });

  it("rejects an update-graph whose tasks are not a Map", async () => {
    const { s, records } = await start();
    const c = await peer(s, registerClient("c1"));
    const task = { spec: { fn: "inc", args: [1] }, dependencies: [] };
    await c.comm.send([
      { op: "update-graph", clientId: "c1", keys: ["x"], stimulusId: "g", tasks: { x: task } },
    ]);
    await until(() => s.counters.rejectedMessages === 1);
    expect(records.map((r) => String(r.reason))).toContainEqual(
      expect.stringMatching(/tasks must be a Map key → task/),
    );
    expect(s.state.tasks.size).toBe(0);
  });

  it("answers who-has, counters and workers requests", async () => {
    const { s } = await start();
    await peer(s, registerWorker("inproc://w/1", 3));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      { op: "who-has", requestId: 1, keys: ["nope"] },
      { op: "counters", requestId: 2 },
      { op: "workers", requestId: 3 },
      { op: "who-has", requestId: 4, keys: "not a list" },
      { op: "who-has", requestId: 5 },
      { op: "has-what", requestId: 6 },
      { op: "has-what", requestId: 7, workers: ["inproc://w/1", "inproc://w/9"] },
      { op: "has-what", requestId: 8, workers: [3] },
    ]);
    const r1 = await c.waitFor((m) => m.requestId === 1);
    expect(r1).toEqual({ op: "reply", requestId: 1, result: { nope: [] } });
    const r2 = await c.waitFor((m) => m.requestId === 2);
    expect(r2.result).toMatchObject({ workers: 1, clients: 1, tasks: 0 });
    const r3 = await c.waitFor((m) => m.requestId === 3);
    expect(r3.result).toEqual([
      {
        address: "inproc://w/1",
        name: null,
        nthreads: 3,
        resources: {},
        status: "running",
        processing: 0,
        keys: 0,
        nbytes: 0,
        spilled: null,
        memoryLimit: null,
        memory: null,
        nanny: false,
        actors: 0,
        id: expect.stringMatching(/^\d+$/),
      },
    ]);
    const r4 = await c.waitFor((m) => m.requestId === 4);
    expect(r4.error).toMatch(/keys must be an array/);
    expect((await c.waitFor((m) => m.requestId === 5)).result).toEqual({});
    expect((await c.waitFor((m) => m.requestId === 6)).result).toEqual({ "inproc://w/1": [] });
    expect((await c.waitFor((m) => m.requestId === 7)).result).toEqual({
      "inproc://w/1": [],
      "inproc://w/9": [],
    });
    expect((await c.waitFor((m) => m.requestId === 8)).error).toBe(
      "has-what: workers must be an array of worker addresses",
    );
  });

  it("keeps the task modules clients load, and tells each worker registering later", async () => {
    const { s } = await start();
    const early = await peer(s, registerWorker("inproc://w/1"));
    expect(early.reply.taskModules).toBeUndefined();
    const c = await peer(s, registerClient("c1"));
    const url = "file:///tasks/later.mjs";
    await c.comm.send([
      { op: "load-task-modules", requestId: 1, modules: [url] },
      { op: "load-task-modules", requestId: 2, modules: [url, "file:///tasks/more.mjs"] },
      { op: "load-task-modules", requestId: 3, modules: ["not a url"] },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toEqual([url]);
    expect((await c.waitFor((m) => m.requestId === 2)).result).toEqual([
      url,
      "file:///tasks/more.mjs",
    ]);
    expect((await c.waitFor((m) => m.requestId === 3)).error).toBe(
      "load-task-modules: modules must be an array of URLs",
    );
    const late = await peer(s, registerWorker("inproc://w/2"));
    expect(late.reply.taskModules).toEqual([url, "file:///tasks/more.mjs"]);
  });

  it("keeps the worker plugins clients register, in order, and tells each worker registering later", async () => {
    const { s } = await start();
    const early = await peer(s, registerWorker("inproc://w/1"));
    expect(early.reply.plugins).toBeUndefined();
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      { op: "register-worker-plugin", requestId: 1, name: "p", fn: "makeP", args: [1] },
      { op: "register-worker-plugin", requestId: 2, name: "q", fn: "makeQ", args: [] },
      // the same name again: replaced where it was
      { op: "register-worker-plugin", requestId: 3, name: "p", fn: "makeP", args: [2] },
      { op: "register-worker-plugin", requestId: 4, name: "r", fn: "makeR", args: "x" },
      { op: "unregister-worker-plugin", requestId: 5, name: "q" },
      { op: "unregister-worker-plugin", requestId: 6, name: "q" },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toEqual(["p"]);
    expect((await c.waitFor((m) => m.requestId === 3)).result).toEqual(["p", "q"]);
    expect((await c.waitFor((m) => m.requestId === 4)).error).toBe(
      "register-worker-plugin: a worker plugin's args must be an array",
    );
    expect((await c.waitFor((m) => m.requestId === 5)).result).toEqual(["p"]);
    expect((await c.waitFor((m) => m.requestId === 6)).error).toBe(
      'unregister-worker-plugin: no worker plugin named "q"',
    );
    const late = await peer(s, registerWorker("inproc://w/2"));
    expect(late.reply.plugins).toEqual([{ name: "p", fn: "makeP", args: [2] }]);
  });

  it("keeps the nanny plugins clients register, and gives them to each worker with a nanny registering later", async () => {
    const { s } = await start();
    const early = await peer(s, { ...registerWorker("inproc://w/1"), nanny: true });
    expect(early.reply.nannyPlugins).toBeUndefined();
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      { op: "register-nanny-plugin", requestId: 1, name: "env", fn: "weft.environ", args: [{}] },
      { op: "register-nanny-plugin", requestId: 2, name: "q", fn: "makeQ", args: [] },
      // the same name again: replaced where it was
      {
        op: "register-nanny-plugin",
        requestId: 3,
        name: "env",
        fn: "weft.environ",
        args: [{ FOO: "1" }],
        restart: false,
      },
      { op: "register-nanny-plugin", requestId: 4, name: "r", fn: "makeR", args: "x" },
      { op: "register-nanny-plugin", requestId: 5, name: "r", fn: "makeR", args: [], restart: 1 },
      { op: "unregister-nanny-plugin", requestId: 6, name: "q" },
      { op: "unregister-nanny-plugin", requestId: 7, name: "q" },
      // Kept apart from the worker plugins.
      { op: "unregister-worker-plugin", requestId: 8, name: "env" },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toEqual(["env"]);
    expect((await c.waitFor((m) => m.requestId === 2)).result).toEqual(["env", "q"]);
    expect((await c.waitFor((m) => m.requestId === 3)).result).toEqual(["env", "q"]);
    expect((await c.waitFor((m) => m.requestId === 4)).error).toBe(
      "register-nanny-plugin: a nanny plugin's args must be an array",
    );
    expect((await c.waitFor((m) => m.requestId === 5)).error).toBe(
      "register-nanny-plugin: a nanny plugin's restart must be true or false",
    );
    expect((await c.waitFor((m) => m.requestId === 6)).result).toEqual(["env"]);
    expect((await c.waitFor((m) => m.requestId === 7)).error).toBe(
      'unregister-nanny-plugin: no nanny plugin named "q"',
    );
    expect((await c.waitFor((m) => m.requestId === 8)).error).toBe(
      'unregister-worker-plugin: no worker plugin named "env"',
    );
    const withNanny = await peer(s, { ...registerWorker("inproc://w/2"), nanny: true });
    expect(withNanny.reply.nannyPlugins).toEqual([
      { name: "env", fn: "weft.environ", args: [{ FOO: "1" }], restart: false },
    ]);
    expect(withNanny.reply.plugins).toBeUndefined();
    // A worker without a nanny has none to hand them to.
    const without = await peer(s, registerWorker("inproc://w/3"));
    expect(without.reply.nannyPlugins).toBeUndefined();
  });

  it("records a plugin named with the workers asked only once it has no other: for nanny plugins, none other with a nanny", async () => {
    const { s } = await start();
    await peer(s, { ...registerWorker("inproc://w/1"), nanny: true });
    await peer(s, registerWorker("inproc://w/2"));
    const c = await peer(s, registerClient("c1"));
    const plugin = { name: "p", fn: "makeP", args: [] };
    await c.comm.send([
      { op: "register-worker-plugin", requestId: 1, ...plugin, asked: ["inproc://w/1"] },
      { op: "register-nanny-plugin", requestId: 2, ...plugin, asked: [] },
      { op: "register-worker-plugin", requestId: 3, ...plugin, asked: "inproc://w/1" },
      { op: "load-task-modules", requestId: 4, modules: ["file:///m.mjs"], asked: [] },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toEqual({
      unasked: ["inproc://w/2"],
    });
    expect((await c.waitFor((m) => m.requestId === 2)).result).toEqual({
      unasked: ["inproc://w/1"],
    });
    expect((await c.waitFor((m) => m.requestId === 3)).error).toBe(
      "register-worker-plugin: asked must be an array of worker addresses",
    );
    expect((await c.waitFor((m) => m.requestId === 4)).result).toEqual({
      unasked: ["inproc://w/1", "inproc://w/2"],
    });
    expect(s.workerPlugins).toEqual([]);
    expect(s.nannyPlugins).toEqual([]);
    expect(s.taskModules).toEqual([]);
    await c.comm.send([
      {
        op: "register-worker-plugin",
        requestId: 5,
        ...plugin,
        asked: ["inproc://w/2", "inproc://w/1"],
      },
      { op: "register-nanny-plugin", requestId: 6, ...plugin, asked: ["inproc://w/1"] },
    ]);
    expect((await c.waitFor((m) => m.requestId === 5)).result).toEqual(["p"]);
    expect((await c.waitFor((m) => m.requestId === 6)).result).toEqual(["p"]);
  });

  it("keeps the files clients upload, and gives them to each worker registering later", async () => {
    const { s } = await start();
    const early = await peer(s, registerWorker("inproc://w/1"));
    expect(early.reply.uploads).toBeUndefined();
    const c = await peer(s, registerClient("c1"));
    const a = new TextEncoder().encode("export const a = 1;\n");
    const b = new TextEncoder().encode("{}");
    await c.comm.send([
      { op: "upload-file", requestId: 1, name: "a.mjs", data: a, load: false },
      { op: "upload-file", requestId: 2, name: "b.json", data: b, load: false },
      // The same again, to be imported from now on.
      { op: "upload-file", requestId: 3, name: "a.mjs", data: a, load: true },
      { op: "upload-file", requestId: 4, name: "a.mjs", data: b, load: true },
      { op: "upload-file", requestId: 5, name: "../a.mjs", data: a, load: true },
      { op: "upload-file", requestId: 6, name: "b.json", data: b, load: true },
      { op: "upload-file", requestId: 7, name: "c.mjs", data: "text", load: true },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toEqual(["a.mjs"]);
    expect((await c.waitFor((m) => m.requestId === 2)).result).toEqual(["a.mjs", "b.json"]);
    expect((await c.waitFor((m) => m.requestId === 3)).result).toEqual(["a.mjs", "b.json"]);
    expect((await c.waitFor((m) => m.requestId === 4)).error).toMatch(
      /^upload-file: a different file named a\.mjs was uploaded already/,
    );
    expect((await c.waitFor((m) => m.requestId === 5)).error).toBe(
      'upload-file: "../a.mjs" is not a file name (no directory part, no NUL)',
    );
    expect((await c.waitFor((m) => m.requestId === 6)).error).toMatch(
      /^upload-file: b\.json cannot be imported/,
    );
    expect((await c.waitFor((m) => m.requestId === 7)).error).toBe(
      "upload-file: the data of c.mjs must be bytes",
    );
    const late = await peer(s, registerWorker("inproc://w/2"));
    expect(late.reply.uploads).toEqual([
      { name: "a.mjs", data: a, load: true },
      { name: "b.json", data: b, load: false },
    ]);
  });

  it("answers coordination requests, later for those that wait, and refuses malformed ones", async () => {
    const { s } = await start();
    const c = await peer(s, registerClient("c1"));
    const d = await peer(s, registerClient("c2"));
    await c.comm.send([
      {
        op: "semaphore-acquire",
        requestId: 1,
        name: "S",
        maxLeases: 1,
        lease: "a",
        timeoutMs: null,
      },
      {
        op: "semaphore-acquire",
        requestId: 2,
        name: "S",
        maxLeases: 1,
        lease: "b",
        timeoutMs: null,
      },
      { op: "semaphore-acquire", requestId: 3, name: "", maxLeases: 1, lease: "c" },
      { op: "semaphore-acquire", requestId: 4, name: "S", maxLeases: 0, lease: "c" },
      { op: "event-wait", requestId: 5, name: "E", timeoutMs: -1 },
      { op: "queue-put", requestId: 6, name: "Q", maxsize: 1.5, value: 1 },
      { op: "semaphore-release", requestId: 7, name: "S", lease: "nope" },
    ]);
    expect((await c.waitFor((m) => m.requestId === 1)).result).toBe(true);
    expect((await c.waitFor((m) => m.requestId === 3)).error).toBe(
      "semaphore-acquire: name must be a non-empty string",
    );
    expect((await c.waitFor((m) => m.requestId === 4)).error).toBe(
      "semaphore-acquire: maxLeases must be an integer ≥ 1",
    );
    expect((await c.waitFor((m) => m.requestId === 5)).error).toMatch(
      /^event-wait: timeoutMs must be/,
    );
    expect((await c.waitFor((m) => m.requestId === 6)).error).toBe(
      "queue-put: maxsize must be an integer ≥ 0",
    );
    expect((await c.waitFor((m) => m.requestId === 7)).error).toMatch(
      /lease nope of "S" is not held/,
    );
    // Request 2 waits for lease a, which is released by its id (the client's secret).
    await d.comm.send([{ op: "semaphore-release", requestId: 1, name: "S", lease: "a" }]);
    expect((await d.waitFor((m) => m.requestId === 1)).result).toBe(true);
    expect((await c.waitFor((m) => m.requestId === 2)).result).toBe(true);
    expect(s.coordination.semaphores.leases("S")).toBe(1);
  });

  it("answers a coordination request of the wrong maxsize or maxLeases as the user's mistake, logged at debug", async () => {
    const { s, records } = await start();
    const c = await peer(s, registerClient("c1"));
    const acquire = { op: "semaphore-acquire", name: "S", lease: "a", timeoutMs: null };
    await c.comm.send([
      { ...acquire, requestId: 1, maxLeases: 1 },
      { ...acquire, requestId: 2, maxLeases: 2, lease: "b" },
      { op: "queue-put", requestId: 3, name: "Q", maxsize: 1, value: 1, timeoutMs: null },
      { op: "queue-get", requestId: 4, name: "Q", maxsize: 3, timeoutMs: null },
      // A lease released twice (a lock released twice).
      { op: "semaphore-release", requestId: 5, name: "S", lease: "a" },
      { op: "semaphore-release", requestId: 6, name: "S", lease: "a" },
    ]);
    expect((await c.waitFor((m) => m.requestId === 2)).error).toBe(
      'semaphore "S" has maxLeases 1, not 2',
    );
    expect((await c.waitFor((m) => m.requestId === 4)).error).toBe(
      'queue "Q" has maxsize 1, not 3',
    );
    expect((await c.waitFor((m) => m.requestId === 6)).error).toMatch(
      /^lease a of "S" is not held/,
    );
    expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
    expect(records.filter((r) => r.msg === "refused a coordination request")).toHaveLength(3);
    expect(s.counters.rejectedMessages).toBe(0);
  });

  it("answers a request refused for what it asks as the user's mistake, not a malformed message", async () => {
    const { s, records } = await start();
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      { op: "set-metadata", requestId: 1, keys: ["a"], value: 1 },
      { op: "set-metadata", requestId: 2, keys: ["a", "b"], value: 2 },
      { op: "unregister-worker-plugin", requestId: 3, name: "never" },
    ]);
    expect((await c.waitFor((m) => m.requestId === 2)).error).toBe(
      'set-metadata: ["a"] holds a value, not metadata under keys',
    );
    expect((await c.waitFor((m) => m.requestId === 3)).error).toBe(
      'unregister-worker-plugin: no worker plugin named "never"',
    );
    expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
    expect(records.filter((r) => r.msg === "refused a request")).toHaveLength(2);
    expect(s.counters.rejectedMessages).toBe(0);
  });

  it("warns of nothing when a close given no time to flush cuts a client that reads", async () => {
    const { s, records } = await start({ listen: "tcp://127.0.0.1:0" });
    const c = await peer(s, registerClient("reading"));
    await c.comm.send([{ op: "semaphore-leases", requestId: 1, name: "S" }]);
    await c.waitFor((m) => m.requestId === 1);
    // close(0): the caller gives the streams no time, and the client's end seldom closes in
    // none (run alone, never; after the file's other tests, its stream may close at once).
    await s.close(0);
    // Before, two warnings for what the caller asked: the peer "did not take what its stream
    // held ... in time", and "the connection to a client broke" (the scheduler's own abort).
    expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
    const cut = records.filter(
      (r) => r.msg === "cut off the connection of a client at the scheduler's close",
    );
    for (const record of cut) expect(record).toMatchObject({ client: "reading", level: 20 });
    const told = records.find((r) => r.level === 30 && r.waitedS === 0);
    if (cut.length > 0) expect(told).toBeDefined();
    if (told !== undefined) {
      expect(told.msg).toBe(
        "closing: cut off the connections whose peers had not taken what their streams held, or closed their ends, within the close's timeout",
      );
    }
  });

  it("logs a client's connection breaking at debug once it said close-client, at warn otherwise", async () => {
    const { s, records } = await start({ listen: "tcp://127.0.0.1:0" });
    const breakingAt = async (clientId: string, goodbye: boolean) => {
      const c = await peer(s, registerClient(clientId));
      if (goodbye) await c.comm.send([{ op: "close-client", clientId, stimulusId: "bye" }]);
      await c.comm.send([{ op: "semaphore-leases", requestId: 1, name: "S" }]);
      await c.waitFor((m) => m.requestId === 1);
      // A reset, as a process ending with the connection open gives: the scheduler's read fails.
      (c.comm as unknown as { socket: Socket }).socket.resetAndDestroy();
      await until(() => !s.router.clients.has(clientId));
      return records.filter((r) => r.client === clientId && (r.level as number) >= 40);
    };
    expect(await breakingAt("polite", true)).toEqual([]);
    const [rude] = await breakingAt("rude", false);
    // One line naming the client and the code: the transport's stack is at debug only.
    expect(rude).toMatchObject({ msg: "the connection to a client broke", code: "ECONNRESET" });
    expect(rude.reason).toMatch(/ECONNRESET/);
    expect(rude.err).toBeUndefined();
    const debug = records.find((r) => r.client === "rude" && r.level === 20 && r.err !== undefined);
    expect((debug?.err as { stack?: string } | undefined)?.stack).toMatch(/\n\s+at /);
  });

  it("logs a worker's connection reset at warn in one line naming the worker and the code", async () => {
    const { s, records } = await start({ listen: "tcp://127.0.0.1:0" });
    // Something listening at the worker's address: the scheduler checks it can reach it.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const w = await peer(s, registerWorker(address));
    await until(() => s.state.workers.size === 1);
    // A worker killed with bytes in flight: the scheduler's read fails with a reset.
    (w.comm as unknown as { socket: Socket }).socket.resetAndDestroy();
    await until(() => s.state.workers.size === 0);
    const warned = records.filter((r) => (r.level as number) >= 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      msg: "the connection to a worker broke",
      worker: address,
      code: "ECONNRESET",
    });
    expect(warned[0].err).toBeUndefined();
    server.close();
  });

  it("removes a worker whose connection closes, and reschedules its work", async () => {
    const { s } = await start();
    const w1 = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([INC_X_GRAPH]);
    await w1.waitFor((m) => m.op === "compute-task");
    await w1.comm.close();
    await until(() => s.state.workers.size === 0);
    // Back in line for a worker (a root task waits in `queued` with queuing on).
    expect(s.state.tasks.get("x")?.state).toBe("queued");
    const w2 = await peer(s, registerWorker("inproc://w/2"));
    await w2.waitFor((m) => m.op === "compute-task" && m.key === "x");
    s.state.validateState();
  });

  it("says which worker registered: its name, nanny, resources and memory limit", async () => {
    const { s, records } = await start();
    await peer(s, {
      ...registerWorker("inproc://w/1", 2),
      name: "node-3",
      nanny: true,
      resources: { GPU: 2, MEM: 8e9 },
      memoryLimit: 4096,
    });
    await peer(s, registerWorker("inproc://w/2"));
    await until(() => s.state.workers.size === 2);
    const said = records
      .filter((r) => r.msg === "worker registered")
      .map(({ worker, workerName, nthreads, nanny, resources, memoryLimit }) => ({
        worker,
        workerName,
        nthreads,
        nanny,
        resources,
        memoryLimit,
      }));
    // The address and threads alone: which --name had joined, and with what, was not said.
    expect(said).toEqual([
      {
        worker: "inproc://w/1",
        workerName: "node-3",
        nthreads: 2,
        nanny: true,
        resources: "GPU=2,MEM=8000000000",
        memoryLimit: 4096,
      },
      {
        worker: "inproc://w/2",
        workerName: undefined,
        nthreads: 1,
        nanny: undefined,
        resources: undefined,
        memoryLimit: undefined,
      },
    ]);
  });

  it("says what a worker that left held: the results computed again, the scattered values lost", async () => {
    const { s, records } = await start();
    const w = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([
      INC_X_GRAPH,
      {
        op: "update-data",
        clientId: "c1",
        stimulusId: "scatter-1",
        keys: [{ key: "data", workers: ["inproc://w/1"], nbytes: 8, typename: "number" }],
      },
    ]);
    const compute = await w.waitFor((m) => m.op === "compute-task");
    await w.comm.send([
      {
        op: "task-finished",
        key: "x",
        runId: compute.runId,
        nbytes: 8,
        typename: "number",
        stimulusId: "f1",
      },
    ]);
    await c.waitFor((m) => m.op === "key-in-memory" && m.key === "x");
    await w.comm.close();
    await until(() => s.state.workers.size === 0);
    const said = records
      .filter((r) => r.worker === "inproc://w/1" && (r.level as number) >= 30)
      .filter((r) => r.msg !== "worker registered")
      .map(({ level, msg, processing, memory, count }) => ({
        level,
        msg,
        ...(processing === undefined ? {} : { processing, memory }),
        ...(count === undefined ? {} : { count }),
      }));
    // It said "worker left" alone, whatever the worker held.
    expect(said).toEqual([
      { level: 30, msg: "worker left", processing: 0, memory: 2 },
      {
        level: 40,
        msg: "the worker at inproc://w/1 left holding the only copy of 1 result, which will be computed again: x",
        count: 1,
      },
      {
        level: 50,
        msg: "the worker at inproc://w/1 left holding the only copy of 1 scattered value, lost for good (no task computes it again): data",
        count: 1,
      },
    ]);
  });

  it.each([
    { wantedBy: "its own task's client alone", outside: false },
    { wantedBy: "another client too", outside: true },
  ])(
    "warns of a result only a task waits for as that task is wanted: by $wantedBy",
    async ({ outside }) => {
      const { s, records } = await start();
      const w = await peer(s, registerWorker("inproc://w/1"));
      // The client of a task running on the worker (a task that submits a graph).
      const c = await peer(s, { ...registerClient("c1"), worker: "inproc://w/1" });
      const graph = (clientId: string) => ({
        op: "update-graph",
        clientId,
        keys: ["b"],
        stimulusId: `g-${clientId}`,
        tasks: new Map([
          ["a", { spec: { fn: "inc", args: [1] }, dependencies: [] }],
          ["z", { spec: { fn: "inc", args: [2] }, dependencies: [] }],
          ["b", { spec: { fn: "add", args: [] }, dependencies: ["a", "z"] }],
        ]),
      });
      await c.comm.send([graph("c1")]);
      if (outside) {
        const other = await peer(s, registerClient("c2"));
        await other.comm.send([graph("c2")]);
        await until(() => s.state.tasks.get("b")?.whoWants.size === 2);
      }
      const compute = await w.waitFor((m) => m.op === "compute-task" && m.key === "a");
      await w.comm.send([
        {
          op: "task-finished",
          key: "a",
          runId: compute.runId,
          nbytes: 8,
          typename: "number",
          stimulusId: "f1",
        },
      ]);
      await until(() => s.state.tasks.get("a")?.state === "memory");
      // b waits for a (and z): only a task, not a client, wants a.
      expect(s.state.tasks.get("b")?.state).toBe("waiting");
      await w.comm.close();
      await until(() => s.state.workers.size === 0);
      expect(records.find((r) => r.msg === "worker left")).toMatchObject({ memory: 1 });
      // Wanted by the worker's own task's client alone, b goes with it: it warned all the same.
      expect(records.filter((r) => (r.level as number) >= 40).map((r) => r.msg)).toEqual(
        outside
          ? [
              "the worker at inproc://w/1 left holding the only copy of 1 result, which will be computed again: a",
            ]
          : [],
      );
    },
  );

  it("removes a worker that stops heartbeating", async () => {
    const { s, records } = await start({ workerTtlMs: 150 });
    const w = await peer(s, registerWorker("inproc://w/1"));
    await until(() => s.state.workers.size === 0);
    expect(
      records.find((r) => r.msg === "worker missed its heartbeats; removing it"),
    ).toMatchObject({ level: 40, worker: "inproc://w/1", processing: 0, memory: 0 });
    await w.comm.closed;
    // The scheduler cut the connection itself: no warning that it broke.
    const ended = (r: Record<string, unknown>) =>
      r.msg === "closed the connection of a removed worker" ||
      r.msg === "the connection to a worker broke";
    await until(() => records.some(ended));
    expect(records.filter(ended).map((r) => r.msg)).toEqual([
      "closed the connection of a removed worker",
    ]);
  });

  it("removes a silent worker under a TTL shorter than the 50 ms between looks, not taking each look for a block", async () => {
    // Every look comes 50 ms after the last, more than half of a 60 ms TTL: each was
    // taken for a blocked event loop, warned of, and the worker was never removed.
    const { s, records } = await start({ workerTtlMs: 60 });
    await peer(s, registerWorker("inproc://w/1"));
    await until(() => s.state.workers.size === 0, 2_000);
    expect(records.some((r) => r.msg === "worker missed its heartbeats; removing it")).toBe(true);
    expect(
      records.filter(
        (r) =>
          r.msg === "the scheduler's event loop was blocked; heartbeats checked at the next look",
      ),
    ).toEqual([]);
  });

  it("keeps a heartbeating worker when its own event loop was blocked longer than the TTL", async () => {
    const { s, records } = await start({ workerTtlMs: 200 });
    const w = await peer(s, registerWorker("inproc://w/1"));
    const beat = () => w.comm.send([{ op: "heartbeat-worker", stimulusId: "hb" }]);
    await beat();
    await sleep(60); // a look for silent workers ran meanwhile
    s.removeSilentWorkers();
    // A synchronous task of an inline worker in this process blocks everything; the
    // scheduler's timer may fire before the heartbeats sent meanwhile are read.
    const blockedUntil = Date.now() + 400;
    while (Date.now() < blockedUntil) {
      // blocked
    }
    s.removeSilentWorkers();
    expect(s.state.workers.size).toBe(1);
    expect(records.some((r) => r.msg === "worker missed its heartbeats; removing it")).toBe(false);
    expect(
      records.some(
        (r) =>
          r.msg === "the scheduler's event loop was blocked; heartbeats checked at the next look",
      ),
    ).toBe(true);
    // The worker goes on heartbeating: kept.
    for (let i = 0; i < 6; i++) {
      await beat();
      await sleep(50);
    }
    expect(s.state.workers.size).toBe(1);
  });

  it("does not take silence across a block of more than half the TTL for missed heartbeats", async () => {
    // A TTL long enough that a loaded machine does not make the worker silent before the block.
    const { s } = await start({ workerTtlMs: 1_000 });
    await peer(s, registerWorker("inproc://w/1"));
    s.removeSilentWorkers();
    // Blocked for longer than the TTL but less than twice it: the worker's heartbeats are unread.
    const blockedUntil = Date.now() + 1_500;
    while (Date.now() < blockedUntil) {
      // blocked
    }
    s.removeSilentWorkers();
    expect(s.state.workers.size).toBe(1);
  });

  it("sends its workers no close-worker when a shutdown is asked of it while it closes", async () => {
    const { s } = await start();
    const w = await peer(s, registerWorker("inproc://w/1"));
    const closing = s.close();
    expect(s.shutdownCluster()).toEqual(["inproc://w/1"]);
    await closing;
    await w.comm.closed;
    expect(w.received.filter((m) => m.op === "close-worker")).toEqual([]);
  });

  it("drops a connection whose first message is not a handshake", async () => {
    const { s } = await start();
    const comm = await connect(s.address);
    await comm.send({ op: "hello" });
    await comm.closed;
    expect(s.counters.rejectedMessages).toBe(1);
  });

  it("with handshakeTimeoutMs Infinity, waits for a connection's first message as long as it takes", async () => {
    const { s, records } = await start({ handshakeTimeoutMs: Infinity });
    const comm = await connect(s.address);
    let closed = false;
    void comm.closed.then(() => {
      closed = true;
    });
    // A Node.js timer of Infinity fires after 1 ms: every connection was closed
    // before it could say who it was, logged as not introducing itself in time.
    await sleep(200);
    expect(closed).toBe(false);
    expect(
      records.filter((r) => r.msg === "a connection did not introduce itself in time"),
    ).toEqual([]);
    comm.abort();
  });

  it("logs a connection that sent what it cannot read before introducing itself; a hang-up quietly", async () => {
    const { s, records } = await start({ listen: "tcp://127.0.0.1:0" });
    const { host, port } = (() => {
      const u = new URL(s.address.replace("tcp://", "http://"));
      return { host: u.hostname, port: Number(u.port) };
    })();
    const { createConnection } = await import("node:net");
    const send = (bytes: Buffer) =>
      new Promise<void>((resolve) => {
        const sock = createConnection({ host, port }, () => sock.end(bytes));
        sock.on("close", () => resolve());
        sock.on("error", () => resolve());
      });
    await send(Buffer.alloc(0)); // connects and hangs up
    // A frame of 3 bytes that is no message layout, then the end.
    await send(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
    await until(() =>
      records.some((r) => r.msg === "a connection closed before introducing itself"),
    );
    const logged = records.filter((r) => r.msg === "a connection closed before introducing itself");
    expect(logged).toHaveLength(1);
    expect(String(logged[0].reason)).toMatch(/malformed|frame|message/);
  });

  it("refuses a worker at a tls:// address whose certificate the cluster's CA did not sign", async () => {
    const { s } = await start({ listen: "tls://127.0.0.1:0", tls: testTls() });
    const { listen } = await import("../comm/connect.ts");
    const serve = async (comm: import("../comm/comm.ts").Comm) => void comm.close();
    // Listening with a certificate of another CA: its peers could not fetch from it.
    const stranger = await listen("tls://127.0.0.1:0", serve, {
      tls: { ...strangerTls(), ca: testTls().ca },
    });
    open.push(stranger);
    const member = await listen("tls://127.0.0.1:0", serve, { tls: testTls() });
    open.push(member);
    const register = (address: string) =>
      rawPeer(s.address, registerWorker(address), (c) => open.push(c), { tls: testTls() });
    const refused = await register(stranger.address);
    expect(refused.reply).toMatchObject({ status: "error" });
    expect(String(refused.reply.message)).toMatch(
      /^cannot reach the worker at its address tls:\/\/127\.0\.0\.1:\d+ \(.*the TLS handshake failed.*\): its peers could not either/,
    );
    expect((await register(member.address)).reply).toMatchObject({ status: "OK" });
    expect([...s.state.workers.keys()]).toEqual([member.address]);
  });

  it("logs a peer refused in the TLS handshake, saying why (the peer hears only that it closed)", async () => {
    const { s, records } = await start({ listen: "tls://127.0.0.1:0", tls: testTls() });
    const intruder = await connect(s.address, {
      tls: { ...strangerTls(), ca: testTls().ca },
      timeoutMs: 5_000,
    });
    await intruder.closed;
    await until(() => records.some((r) => r.msg === "refused a TLS connection"));
    const logged = records.find((r) => r.msg === "refused a TLS connection");
    expect(logged).toMatchObject({
      level: 40,
      peer: expect.stringMatching(/^tls:\/\/127\.0\.0\.1:/),
    });
    expect(String(logged?.reason)).toMatch(
      /^its TLS certificate is not signed by this cluster's CA/,
    );
  });

  it("close() ends every connection", async () => {
    const { s } = await start();
    const w = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await s.close();
    await w.comm.closed;
    await c.comm.closed;
    expect(s.status).toBe("closed");
  });

  it("refuses an option it does not know before listening", async () => {
    const given = { listen: "inproc://x", workerTTLMs: 5 };
    await expect(Scheduler.start(given as never)).rejects.toThrow(
      'Scheduler options: unknown option "workerTTLMs" (did you mean workerTtlMs?)',
    );
  });

  it("refuses bad work-stealing options before listening", async () => {
    await expect(
      Scheduler.start({ listen: "inproc://x", workStealingIntervalMs: 0 }),
    ).rejects.toThrow(/^Scheduler option workStealingIntervalMs must be a number of ms > 0/);
    await expect(
      Scheduler.start({ listen: "inproc://x", workStealing: "yes" as never }),
    ).rejects.toThrow('Scheduler option workStealing must be a boolean, got "yes"');
  });

  it("refuses bad active-memory-manager options before listening", async () => {
    await expect(
      Scheduler.start({ listen: "inproc://x", activeMemoryManagerIntervalMs: -1 }),
    ).rejects.toThrow(/^Scheduler option activeMemoryManagerIntervalMs must be a number of ms > 0/);
    await expect(
      Scheduler.start({ listen: "inproc://x", activeMemoryManager: 1 as never }),
    ).rejects.toThrow("Scheduler option activeMemoryManager must be a boolean, got 1");
  });

  it("refuses frame limits out of range before listening, naming the option", async () => {
    await expect(Scheduler.start({ listen: "inproc://x", maxFrameBytes: 0 })).rejects.toThrow(
      /^Scheduler option maxFrameBytes must be an integer from 1 to 2147483647, got 0$/,
    );
    await expect(
      Scheduler.start({ listen: "inproc://x", maxMessageBytes: 2 ** 40 }),
    ).rejects.toThrow(
      /^Scheduler option maxMessageBytes must be an integer from 1 to \d+ \(the largest Node.js buffer\)/,
    );
    // Values a message cannot hold as they are: shown, not a TypeError of their own.
    await expect(
      Scheduler.start({ listen: "inproc://x", maxFrameBytes: Symbol("f") as never }),
    ).rejects.toThrow(/^Scheduler option maxFrameBytes must be an integer .*, got Symbol\(f\)$/);
    await expect(
      Scheduler.start({ listen: "inproc://x", batchedSendIntervalMs: Symbol("i") as never }),
    ).rejects.toThrow(
      /^Scheduler option batchedSendIntervalMs must be a number >= 0, got Symbol\(i\)$/,
    );
  });
});

describe("the active memory manager operated by clients (amm requests)", () => {
  /**
   * A scheduler with `o`, two raw workers and a raw client; `x` computed on
   * w/1, and `hold(worker)` has a worker say it holds a replica of it too
   * (as after fetching it), once the scheduler knows it. `ask(method)`
   * sends an `amm` request and resolves with its reply.
   */
  async function cluster(o: SchedulerOptions) {
    const { s, records } = await start(o);
    const w1 = await peer(s, registerWorker("inproc://w/1"));
    const c = await peer(s, registerClient("c1"));
    await c.comm.send([INC_X_GRAPH]);
    const compute = await w1.waitFor((m) => m.op === "compute-task");
    await w1.comm.send([
      {
        op: "task-finished",
        key: "x",
        runId: compute.runId,
        nbytes: 8,
        typename: "number",
        stimulusId: "f1",
      },
    ]);
    await c.waitFor((m) => m.op === "key-in-memory");
    const w2 = await peer(s, registerWorker("inproc://w/2"));
    const holders = () => [...(s.state.tasks.get("x")?.whoHas ?? [])].map((ws) => ws.address);
    let added = 0;
    const hold = async (w: typeof w1) => {
      await w.comm.send([{ op: "add-keys", keys: ["x"], stimulusId: `add-${++added}` }]);
      await until(() => holders().length === 2);
    };
    let requestId = 100;
    const ask = async (method: unknown) => {
      const id = ++requestId;
      await c.comm.send([{ op: "amm", requestId: id, method }]);
      return c.waitFor((m) => m.op === "reply" && m.requestId === id);
    };
    /** The worker of each remove-replicas received so far, by worker (w/1's first). */
    const removals = () =>
      [w1, w2].flatMap((w) => w.received.filter((m) => m.op === "remove-replicas").map(() => w));
    /** The worker told to drop its replica of x by the `n`-th remove-replicas. */
    const dropper = (n: number) =>
      until(() => removals().length >= n).then(() => removals()[n - 1]);
    return { s, records, w2, hold, ask, holders, dropper };
  }

  it("a client starts it where it was configured off, stops it, and asks whether it runs", async () => {
    const { s, records, w2, hold, ask, holders, dropper } = await cluster({
      activeMemoryManager: false,
      activeMemoryManagerIntervalMs: 10,
    });
    expect(s.amm.running).toBe(false);
    expect((await ask("status")).result).toEqual({ running: false, intervalMs: 10 });
    await hold(w2);
    // Started: a round drops the replica (polled: the timer's, not this test's, time).
    expect((await ask("start")).result).toEqual({ running: true, intervalMs: 10 });
    expect(s.amm.running).toBe(true);
    await until(() => holders().length === 1);
    const first = await dropper(1);
    expect(s.state.replicasDropped).toBe(1);
    // A second start changes nothing, and is not logged again.
    expect((await ask("start")).result).toEqual({ running: true, intervalMs: 10 });
    const said = (msg: string) => records.filter((r) => r.msg === msg);
    expect(said("a client started the active memory manager")).toMatchObject([
      { client: "c1", intervalMs: 10 },
    ]);
    // Stopped: a replica made now stays through many would-be rounds, for run-once to drop.
    expect((await ask("stop")).result).toEqual({ running: false, intervalMs: 10 });
    expect((await ask("stop")).result).toEqual({ running: false, intervalMs: 10 });
    expect(said("a client stopped the active memory manager")).toHaveLength(1);
    expect(s.amm.running).toBe(false);
    await hold(first); // fetched again
    await sleep(200);
    expect(holders()).toHaveLength(2);
    expect(s.state.replicasDropped).toBe(1);
    expect((await ask("run-once")).result).toBe(1);
    expect(holders()).toHaveLength(1);
    expect((await ask("status")).result).toEqual({ running: false, intervalMs: 10 });
    s.state.validateState();
  });

  it("run-once drops the surplus replicas through a logged reduce-replicas stimulus, and says how many", async () => {
    const { s, w2, hold, ask, holders, dropper } = await cluster({
      activeMemoryManager: false,
    });
    // Nothing held twice: no round, nothing dropped.
    expect((await ask("run-once")).result).toBe(0);
    expect(s.state.stimulusLog.toArray().some((r) => r.kind === "reduce-replicas")).toBe(false);
    await hold(w2);
    expect((await ask("run-once")).result).toBe(1);
    expect(holders()).toHaveLength(1);
    const told = await dropper(1);
    const msg = told.received.find((m) => m.op === "remove-replicas");
    expect(msg).toMatchObject({ op: "remove-replicas", keys: ["x"] });
    const round = s.state.stimulusLog.toArray().filter((r) => r.kind === "reduce-replicas");
    expect(round).toHaveLength(1);
    expect(round[0].stimulusId).toBe(msg?.stimulusId);
    expect(s.countersSnapshot.replicasDropped).toBe(1);
    expect((await ask("run-once")).result).toBe(0);
    expect(s.amm.running).toBe(false);
    s.state.validateState();
  });

  it("refuses an unknown method, naming the methods", async () => {
    const { s, ask } = await cluster({});
    expect((await ask("restart")).error).toBe(
      'amm: method must be one of start, stop, status, run-once, got "restart"',
    );
    expect((await ask(undefined)).error).toMatch(/^amm: method must be one of .*, got undefined$/);
    expect(s.countersSnapshot.rejectedMessages).toBe(2);
    expect(s.amm.running).toBe(true); // the default, untouched
  });

  it("close() stops the rounds, and a start after it does nothing", async () => {
    const { s } = await start({});
    expect(s.amm.running).toBe(true);
    await s.close();
    expect(s.amm.running).toBe(false);
    s.amm.start();
    expect(s.amm.running).toBe(false);
  });
});

describe("the connection of a worker told to close", () => {
  const closedAfterGrace =
    "a worker told to close still had its connection open after the grace: closed it";

  it("is closed by the scheduler once the grace is over if the worker has not closed it", async () => {
    const { s, records } = await start({ closeWorkerGraceMs: 150 });
    const w = await peer(s, registerWorker("inproc://w/1"));
    await peer(s, registerWorker("inproc://w/2"));
    await retireOne(s, w, "inproc://w/1");
    // Within the grace it stays open: the worker's orderly close may still flush over it.
    await sleep(20);
    expect(w.comm.isClosed).toBe(false);
    // The worker hangs: before, its socket stayed open as long as the scheduler ran.
    await until(() => w.comm.isClosed, 5_000);
    expect(s.router.leaving.size).toBe(0);
    expect(records.filter((r) => r.msg === closedAfterGrace)).toMatchObject([
      { worker: "inproc://w/1", graceMs: 150 },
    ]);
    expect([...s.state.workers.keys()]).toEqual(["inproc://w/2"]);
  });

  it("closed by the worker within the grace, is left to it, and nothing said", async () => {
    const { s, records } = await start({ closeWorkerGraceMs: 300 });
    const w = await peer(s, registerWorker("inproc://w/1"));
    await retireOne(s, w, "inproc://w/1");
    await w.comm.close();
    await until(() => s.router.leaving.size === 0);
    await sleep(400);
    expect(records.some((r) => r.msg === closedAfterGrace)).toBe(false);
  });

  it("has a grace of what a worker's close may take by default, Infinity for none, and refuses a bad one", async () => {
    const { s } = await start();
    expect(s.options.closeWorkerGraceMs).toBe(100_000);
    const { s: never } = await start({
      listen: "inproc://sched-never",
      closeWorkerGraceMs: Infinity,
    });
    expect(never.options.closeWorkerGraceMs).toBe(Infinity);
    for (const bad of [-1, Number.NaN, 2 ** 31, "5" as unknown as number]) {
      await expect(
        Scheduler.start({ listen: "inproc://bad", closeWorkerGraceMs: bad }),
      ).rejects.toThrow(
        /^Scheduler option closeWorkerGraceMs must be a number of ms >= 0 and at most \d+ \(Infinity: never\), got /,
      );
    }
  });
});

describe("Scheduler.close(timeout)'s timeout", () => {
  it("is refused when not a number of seconds ≥ 0, as LocalCluster.close's, closing nothing; Infinity is one", async () => {
    const { s } = await start();
    // Before, each closed the scheduler at once, as a timeout of 0.
    for (const bad of [-1, Number.NaN, "5", null]) {
      await expect(s.close(bad as number)).rejects.toThrow(
        new RangeError(
          `Scheduler.close: timeout must be a number of seconds ≥ 0, got ${bad === "5" ? '"5"' : String(bad)}`,
        ),
      );
    }
    expect(s.status).toBe("running");
    await s.close(Number.POSITIVE_INFINITY);
    expect(s.status).toBe("closed");
  });
});
