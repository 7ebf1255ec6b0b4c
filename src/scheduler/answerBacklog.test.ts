import { connect as netConnect, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { FrameReader, framesOf } from "../comm/framing.ts";
import { messageSegments, splitMessage } from "../comm/messageLayout.ts";
import { decodeMessage, encodeMessage } from "../comm/wireCodec.ts";
import { wireVersion } from "../protocol/version.ts";
import { parseHostPort } from "../util/address.ts";
import {
  AnswerBacklog,
  isAnsweredMessage,
  isLargeAnswer,
  LARGE_ANSWER_BYTES,
  MAX_ANSWERS_IN_FLIGHT,
} from "./answerBacklog.ts";
import { type Scheduler, STREAMS_FLUSH_S } from "./scheduler.ts";
import { rawPeer, startTestScheduler } from "./testPeer.ts";
import { ANSWER_OPS } from "./unsentToClient.ts";

/** The scheduler dumps made (`dump-state`'s answers). */
const dumps = vi.hoisted(() => ({ made: 0 }));
vi.mock("./dumpState.ts", async (original) => {
  const actual = await original<typeof import("./dumpState.ts")>();
  return {
    ...actual,
    schedulerDumpInParts(...args: Parameters<typeof actual.schedulerDumpInParts>) {
      dumps.made++;
      return actual.schedulerDumpInParts(...args);
    },
  };
});

/** Something a test opened, to close once it finished. */
type Closable = { close(): Promise<void> };

/**
 * Where a test's helpers put what they open: closed in reverse order once the
 * test finished, by the test's own hook (its tests run concurrently: one
 * `afterEach` over a shared list closed the others' schedulers under them).
 */
function closedAfter(onTestFinished: (fn: () => Promise<void>) => void): (x: Closable) => void {
  const open: Closable[] = [];
  onTestFinished(async () => {
    for (const x of open.splice(0).reverse()) await x.close();
  });
  return (x) => open.push(x);
}

const reply = (requestId: number) => ({ op: "reply", requestId, result: null });

describe("AnswerBacklog", () => {
  it("counts the answers the state machine sends by stimulus id as replies", () => {
    const b = new AnswerBacklog(2);
    const dataset = { op: "dataset", name: "d", found: true, stimulusId: "s1" };
    b.queued(dataset);
    b.queued({ op: "key-in-memory", key: "x", stimulusId: "s2" }); // not an answer
    b.queued({ op: "data-updated", rejected: [], stimulusId: "s3" });
    expect(b.full).toBe(true);
    b.taken([dataset]);
    expect(b.size).toBe(1);
  });

  it("counts every answer the client matches by stimulus id, and holds back the messages they answer", () => {
    // `rebalanced` was not counted, nor was `rebalance` held back when the backlog was full.
    for (const op of ANSWER_OPS) {
      const b = new AnswerBacklog(1);
      b.queued({ op, stimulusId: "s1" });
      expect(b.full, op).toBe(true);
    }
    for (const op of ["rebalance", "replicate", "get-dataset"]) {
      expect(isAnsweredMessage({ op }), op).toBe(true);
    }
    expect(isAnsweredMessage({ op: "client-releases-keys" })).toBe(false);
  });

  it("counts an answer from its queueing until the transport took it, and is full at the limit", async () => {
    const b = new AnswerBacklog(2);
    const [r1, r2] = [reply(1), reply(2)];
    b.queued(r1);
    b.queued({ op: "key-in-memory", key: "x" }); // not an answer
    expect(b.size).toBe(1);
    b.queued(r2);
    expect(b.full).toBe(true);
    let room = false;
    const waiting = b.whenRoom().then(() => {
      room = true;
    });
    b.taken([{ op: "key-in-memory", key: "x" }]);
    await Promise.resolve();
    expect(room).toBe(false);
    b.taken([r1]);
    await waiting;
    expect(b.full).toBe(false);
    b.taken([r1]); // told twice: counted once
    expect(b.size).toBe(1);
  });

  it("counts a dump from its asking, once, even under a request id given twice", () => {
    const b = new AnswerBacklog();
    b.asked({ op: "dump-state", requestId: 7 });
    b.asked({ op: "dump-state", requestId: 7 });
    b.asked({ op: "who-has", requestId: 8 }); // answered at once: counted when queued
    b.asked({ op: "dump-state" }); // malformed: never answered
    expect(b.size).toBe(2);
    const answers = [reply(7), reply(7)];
    for (const a of answers) b.queued(a);
    expect(b.size).toBe(2);
    b.taken(answers);
    expect(b.size).toBe(0);
  });

  it("lets every waiter go once the connection ended", async () => {
    const b = new AnswerBacklog(1);
    b.queued(reply(1));
    const waiting = b.whenRoom();
    b.close();
    await waiting;
    expect(b.full).toBe(false);
  });
});

/** Frame `msg` as a TCP comm sends it. */
function frame(msg: unknown): Buffer {
  return Buffer.concat(framesOf(messageSegments(encodeMessage(msg)), 64 * 1024 * 1024));
}

/** The messages that arrive on `socket` from now on, batches flattened, in order. */
function readMessages(socket: Socket): Record<string, unknown>[] {
  const got: Record<string, unknown>[] = [];
  const reader = new FrameReader(64 * 1024 * 1024);
  socket.on("data", (chunk: Buffer) => {
    for (const bytes of reader.push(chunk)) {
      const { payload, buffers } = splitMessage(bytes);
      const m = decodeMessage(payload, buffers);
      for (const one of Array.isArray(m) ? m : [m]) got.push(one as Record<string, unknown>);
    }
  });
  return got;
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(cond()).toBe(true);
}

/** A scheduler over TCP whose topic `big` holds one event of 128 KiB, and a client of it. */
async function schedulerWithBigEvent(track: (x: Closable) => void) {
  const s: Scheduler = await startTestScheduler("tcp://127.0.0.1:0", track);
  const other = await rawPeer(
    s.address,
    { op: "register-client", clientId: "other", ...wireVersion() },
    track,
  );
  const big = "x".repeat(128 * 1024);
  await other.comm.send([{ op: "log-event", requestId: 1, topics: ["big"], msg: big }]);
  await other.waitFor((m) => m.requestId === 1);
  return { s, other };
}

/** A raw connection to `s` that registers as client `flood`, sends `requests` in one frame and reads nothing. */
async function flood(
  track: (x: Closable) => void,
  s: Scheduler,
  requests: readonly Record<string, unknown>[],
  after: readonly Record<string, unknown>[][] = [],
): Promise<Socket> {
  const { host, port } = parseHostPort(s.address);
  const socket = netConnect({ host, port });
  await new Promise((r) => socket.once("connect", r));
  track({ close: async () => void socket.destroy() });
  // No 'data' listener: the socket reads nothing past Node's small buffer.
  socket.write(
    Buffer.concat([
      frame({ op: "register-client", clientId: "flood", ...wireVersion() }),
      frame(requests),
      ...after.map(frame),
    ]),
  );
  await until(() => s.router.clients.has("flood"));
  return socket;
}

/** The number `answered()` gives once it stopped growing (or reached `n`). */
async function settled(answered: () => number, n: number): Promise<number> {
  let last = -1;
  for (let quiet = 0; quiet < 5 && answered() < n; ) {
    await new Promise((r) => setTimeout(r, 100));
    quiet = answered() === last ? quiet + 1 : 0;
    last = answered();
  }
  return answered();
}

const getBig = (i: number) => ({ op: "get-events", requestId: i + 1, topic: "big" });

// Concurrent: each test has a scheduler of its own, and most of their time is spent
// waiting for the network and the closes' bounds (STREAMS_FLUSH_S).
describe.concurrent("a client that sends requests in bulk and does not read the answers", () => {
  it("is answered no further than the bound beyond what the network took, other clients are, and it gets every answer in order once it reads", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s, other } = await schedulerWithBigEvent(track);
    const n = 600; // answers of 128 KiB: 75 MiB
    const requests = Array.from({ length: n }, (_, i) => getBig(i));
    const socket = await flood(track, s, requests);
    const stream = s.router.clients.get("flood")!;
    const answered = () => stream.messageCount + stream.pending;
    // What the kernel's buffers took (some megabytes), and the bound: not all 600.
    expect(await settled(answered, n)).toBeLessThan(n / 2);
    expect(answered()).toBeGreaterThanOrEqual(MAX_ANSWERS_IN_FLIGHT);
    // Another client is answered meanwhile.
    await other.comm.send([{ op: "counters", requestId: 2 }]);
    expect(await other.waitFor((m) => m.requestId === 2)).toMatchObject({ op: "reply" });

    const got = readMessages(socket);
    await until(() => got.filter((m) => m.op === "reply").length >= n);
    const ids = got.filter((m) => m.op === "reply").map((m) => m.requestId);
    expect(ids).toEqual(requests.map((r) => r.requestId));
    expect(got.every((m) => m.op !== "reply" || m.error === undefined)).toBe(true);
  }, 60_000);

  it("is answered no further than the bound beyond what the network took for get-dataset, answered by stimulus id", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s, other } = await schedulerWithBigEvent(track);
    // A dataset of a value of 128 KiB: each get-dataset of a few bytes is answered with it.
    await other.comm.send([
      {
        op: "publish-dataset",
        clientId: "other",
        name: "big",
        keys: [],
        data: "x".repeat(128 * 1024),
        stimulusId: "p1",
      },
    ]);
    await other.waitFor((m) => m.op === "dataset-published");
    const n = 600; // answers of 128 KiB: 75 MiB
    const gets = Array.from({ length: n }, (_, i) => ({
      op: "get-dataset",
      clientId: "flood",
      name: "big",
      stimulusId: `g${i}`,
    }));
    const socket = await flood(track, s, gets);
    const stream = s.router.clients.get("flood")!;
    const answered = () => stream.messageCount + stream.pending;
    // Before, not counted by the bound: all 600 held (75 MiB), as many as the client sent.
    expect(await settled(answered, n)).toBeLessThan(n / 2);
    const got = readMessages(socket);
    await until(() => got.filter((m) => m.op === "dataset").length >= n);
    expect(got.filter((m) => m.op === "dataset").map((m) => m.stimulusId)).toEqual(
      gets.map((g) => g.stimulusId),
    );
  }, 60_000);

  it("has its large answers encoded one at a time, not coalesced into one batch", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s, other } = await schedulerWithBigEvent(track);
    // The topic: 64 events of 128 KiB, 8 MiB an answer.
    const big = "x".repeat(128 * 1024);
    await other.comm.send(
      Array.from({ length: 63 }, (_, i) => ({
        op: "log-event",
        requestId: 100 + i,
        topics: ["big"],
        msg: big,
      })),
    );
    await other.waitFor((m) => m.requestId === 162);
    const n = 16;
    await flood(
      track,
      s,
      Array.from({ length: n }, (_, i) => getBig(i)),
    );
    const stream = s.router.clients.get("flood")!;
    await settled(() => stream.messageCount + stream.pending, n);
    // Before, all 16 in one batch of 128 MiB, encoded at once; now each alone, the next
    // one encoded once the network took the last, which the client does not read.
    expect(stream.pending).toBeGreaterThan(n / 2);
    expect(stream.batchCount).toBe(stream.messageCount);
  }, 60_000);

  it("holds the scheduler's close no longer than STREAMS_FLUSH_S", async ({ onTestFinished }) => {
    const track = closedAfter(onTestFinished);
    const { s } = await schedulerWithBigEvent(track);
    await flood(
      track,
      s,
      Array.from({ length: 100 }, (_, i) => getBig(i)),
    );
    const stream = s.router.clients.get("flood")!;
    await settled(() => stream.messageCount + stream.pending, 100);
    // Before, the close waited for the stream's batch of 8 MiB until the stall timeout
    // cut the connection: 60 s, past this test's own timeout.
    await s.close();
    expect(s.status).toBe("closed");
  }, 40_000);

  it("holds a close given a shorter timeout no longer than that timeout for the streams", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s } = await schedulerWithBigEvent(track);
    await flood(
      track,
      s,
      Array.from({ length: 100 }, (_, i) => getBig(i)),
    );
    const stream = s.router.clients.get("flood")!;
    await settled(() => stream.messageCount + stream.pending, 100);
    const started = performance.now();
    // Before, a close(1) still waited STREAMS_FLUSH_S (5 s) for the frozen client's stream.
    await s.close(1);
    expect(performance.now() - started).toBeLessThan(STREAMS_FLUSH_S * 1000 - 1000);
    expect(s.status).toBe("closed");
  }, 40_000);

  it("makes no dump for the requests it left unanswered when it went", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s } = await schedulerWithBigEvent(track);
    const held = Array.from({ length: 100 }, (_, i) => getBig(i));
    const dumpRequests = Array.from({ length: 50 }, (_, i) => ({
      op: "dump-state",
      requestId: 1000 + i,
    }));
    const socket = await flood(track, s, [...held, ...dumpRequests]);
    const stream = s.router.clients.get("flood")!;
    await settled(() => stream.messageCount + stream.pending, held.length);
    const before = dumps.made;
    socket.destroy();
    await until(() => !s.router.clients.has("flood"));
    // The requests after the bound were still handled (the get-events), but no dump made.
    expect(dumps.made).toBe(before);
  }, 60_000);

  it("has the messages it sent after the held request handled for their effects when it went", async ({
    onTestFinished,
  }) => {
    const track = closedAfter(onTestFinished);
    const { s, other } = await schedulerWithBigEvent(track);
    const held = Array.from({ length: 100 }, (_, i) => getBig(i));
    // In frames of their own after the one held: unread in the comm when the client goes.
    const later = [[{ op: "log-event", requestId: 5000, topics: ["later"], msg: "left" }]];
    const socket = await flood(track, s, held, later);
    const stream = s.router.clients.get("flood")!;
    await settled(() => stream.messageCount + stream.pending, held.length);
    socket.resetAndDestroy();
    await until(() => !s.router.clients.has("flood"));
    await other.comm.send([{ op: "get-events", requestId: 3, topic: "later" }]);
    const events = await other.waitFor((m) => m.requestId === 3);
    expect((events.result as unknown[]).length).toBe(1);
  }, 60_000);
});

describe("an answer sent in a batch of its own", () => {
  const reply = (result: unknown) => ({ op: "reply", requestId: 1, result });

  it("is one of the requests whose answers are large by nature, whatever its size", () => {
    for (const op of ["get-events", "logs", "task-stream", "dump-state", "story", "profile-stop"]) {
      expect(isLargeAnswer(reply([]), op), op).toBe(true);
    }
    expect(isLargeAnswer({ op: "dataset", stimulusId: "g", data: 1 }, undefined)).toBe(true);
  });

  it("is one of the others only when its result is large: small ones are coalesced", () => {
    // Before, every who-has or variable-get answer went alone: 1,000 concurrent who-has
    // took 4 to 6 times as long as coalesced.
    const small = { x: ["tcp://127.0.0.1:4001"] };
    const large = "v".repeat(LARGE_ANSWER_BYTES);
    for (const op of ["who-has", "has-what", "processing", "variable-get", "queue-get"]) {
      expect(isLargeAnswer(reply(small), op), op).toBe(false);
      expect(isLargeAnswer(reply(large), op), op).toBe(true);
    }
    expect(isLargeAnswer(reply(large), "set-metadata")).toBe(false);
    expect(isLargeAnswer(reply(large), undefined)).toBe(false);
  });
});
