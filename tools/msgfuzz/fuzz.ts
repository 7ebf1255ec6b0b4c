/**
 * Hostile and malformed messages against a real `weft scheduler` and `weft worker`
 * over TCP: as a client, as a fake worker, as a peer of the worker's data server,
 * and as a fake scheduler of a second worker. After each burst (one op, `--per-op`
 * messages): both processes must be alive, their memory not ballooned, and a fresh
 * well-formed client must compute a small graph right.
 *
 *   npx tsx tools/msgfuzz/fuzz.ts [--seed 1] [--per-op 2000] [--port 47700]
 *
 * Exit 0 when nothing failed. See README.md.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "../../src/client/client.ts";
import type { Comm } from "../../src/comm/comm.ts";
import { connect, listen } from "../../src/comm/connect.ts";
import { wireVersion } from "../../src/protocol/version.ts";
import { weftLogger } from "../../src/util/logger.ts";
import { CHAOS_TASKS, Processes, type WeftProcess } from "../chaos/tcp.ts";
import {
  CLIENT_TEMPLATES,
  mutate,
  oddValue,
  PEER_TEMPLATES,
  Rng,
  SCHEDULER_TEMPLATES,
  WORKER_TEMPLATES,
  type World,
} from "./messages.ts";
import { anythingPool } from "./values.ts";

const args = process.argv.slice(2);
function opt(name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(args[i + 1]);
}
const SEED = opt("seed", 1);
const PER_OP = opt("per-op", 2000);
const PORT = opt("port", 47700);
const BATCH = 20;
const ONLY = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : null;

const failures: string[] = [];
const errorLines = new Map<string, number>();
function say(line: string): void {
  const m = /^\[(\w+)\] (.*)$/.exec(line);
  const text = m?.[2] ?? line;
  let rec: { level?: number; msg?: string; reason?: string } | null = null;
  try {
    rec = JSON.parse(text);
  } catch {
    rec = null;
  }
  if (rec === null || (rec.level ?? 0) >= 60) {
    failures.push(line);
    console.log(`!! ${line.slice(0, 2000)}`);
    return;
  }
  const reason = String(rec.reason ?? "")
    .replace(/\d+/g, "N")
    .slice(0, 160);
  const k = `[${m?.[1]}] ${rec.msg} ${reason}`;
  errorLines.set(k, (errorLines.get(k) ?? 0) + 1);
}

const procs = new Processes(say);
process.on("exit", () => procs.killAll());
process.on("SIGINT", () => process.exit(130));

function rss(p: WeftProcess): number {
  try {
    const s = readFileSync(`/proc/${p.child.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) * 1024;
  } catch {
    return -1;
  }
}

const clientLogger = weftLogger("weft.client", "fatal");

async function handshakeClient(address: string, id: string): Promise<Comm> {
  const comm = await connect(address, { timeoutMs: 10_000 });
  await comm.send({ op: "register-client", clientId: id, ...wireVersion() });
  const reply = (await comm.recv()) as { status?: string };
  if (reply?.status !== "OK") throw new Error(`register-client refused: ${JSON.stringify(reply)}`);
  return comm;
}

/** Read and drop whatever the peer sends, until it closes. */
function drain(comm: Comm): void {
  void (async () => {
    try {
      for (;;) await comm.recv();
    } catch {
      // closed
    }
  })();
}

/** Send `n` messages made by `make`, in batches, reconnecting through `open` when closed. */
async function burst(
  open: () => Promise<Comm>,
  make: () => unknown,
  n: number,
  framing: "batch" | "single" = "batch",
): Promise<{ sent: number; reconnects: number; unencodable: number }> {
  let comm = await open();
  let sent = 0;
  let reconnects = 0;
  let unencodable = 0;
  while (sent < n) {
    const batch = Array.from({ length: Math.min(BATCH, n - sent) }, make);
    try {
      if (framing === "batch") await comm.send(batch);
      else for (const m of batch) await comm.send(m);
    } catch (err) {
      if (
        (err as Error).name === "SerializationError" ||
        (err as Error).name === "MessageTooLargeError"
      ) {
        // One of them: the others one at a time.
        for (const m of batch) {
          if (comm.isClosed) break;
          try {
            await comm.send(framing === "batch" ? [m] : m);
          } catch {
            unencodable++;
          }
        }
        sent += batch.length;
        if (!comm.isClosed) continue;
      }
      if (!comm.isClosed) comm.abort();
      reconnects++;
      comm = await open();
      continue;
    }
    sent += batch.length;
    if (comm.isClosed) {
      reconnects++;
      comm = await open();
    }
  }
  // Let the peer read the last ones before the check.
  await new Promise((r) => setTimeout(r, 50));
  await comm.close().catch(() => {});
  return { sent, reconnects, unencodable };
}

/** What the scheduler says of its workers and their tasks, for a failed check. */
async function schedulerView(scheduler: string): Promise<string> {
  try {
    const comm = await handshakeClient(scheduler, `fuzz-view-${Date.now()}`);
    const out: unknown[] = [];
    for (const [i, op] of ["workers", "processing", "counters"].entries()) {
      await comm.send([{ op, requestId: i, clientId: "x" }]);
      for (;;) {
        const got = (await comm.recv()) as unknown[];
        const reply = (Array.isArray(got) ? got : [got]).find(
          (m) => (m as { requestId?: unknown }).requestId === i,
        );
        if (reply !== undefined) {
          out.push(reply);
          break;
        }
      }
    }
    comm.abort();
    return JSON.stringify(out);
  } catch (err) {
    return `(cannot ask: ${(err as Error).message})`;
  }
}

/**
 * `m` unless it is a well-formed request to retire the real worker, which a client
 * may make (an idle worker, or `n` of them): the check after would find no worker;
 * or a `get-events` of every topic (below).
 */
function harmless(m: Record<string, unknown>): Record<string, unknown> {
  // Without a topic: every event logged, odd ones of 100,000 keys among them, a thousand
  // times over: the scheduler encodes answers for minutes (load, not a fault).
  if (m.op === "get-events" && m.topic === undefined) m.topic = "t2";
  if (m.op !== "retire-workers") return m;
  if (m.workers === undefined) m.workers = ["nope"];
  if (Number.isSafeInteger(m.n)) delete m.n;
  if (
    Array.isArray(m.workers) &&
    m.workers.some((x) => typeof x === "string" && x.includes("127.0.0.1"))
  ) {
    m.workers = ["nope"];
  }
  return m;
}

let checks = 0;
async function healthCheck(
  what: string,
  scheduler: string,
  sched: WeftProcess,
  worker: WeftProcess,
  baseline: { s: number; w: number },
): Promise<void> {
  for (const p of [sched, worker]) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      throw new Error(
        `after ${what}: ${p.name} exited (${p.child.exitCode ?? p.child.signalCode})`,
      );
    }
  }
  const i = ++checks;
  const client = await Client.connect(scheduler, { timeoutMs: 30_000, logger: clientLogger });
  try {
    const futures = client.compute({
      [`check-${i}-a`]: ["chaos.add", i, 2, 0],
      [`check-${i}-b`]: ["chaos.add", `check-${i}-a`, 10, 0],
    });
    const got = await Promise.race([
      futures[`check-${i}-b`].result(),
      new Promise((_, rej) => setTimeout(() => rej(new Error("no answer within 20 s")), 20_000)),
    ]);
    if (got !== i + 12) throw new Error(`after ${what}: the check computed ${got}, not ${i + 12}`);
  } catch (err) {
    throw new Error(
      `after ${what}: the check failed: ${(err as Error).message}; the scheduler's view: ${await schedulerView(scheduler)}`,
    );
  } finally {
    await client.close();
  }
  const s = rss(sched);
  const w = rss(worker);
  // Generous: a thousand requests in flight at once (dump-state) take their memory while
  // answered, which the process may keep (1000 dump-state: 654 MiB); a leak grows past it.
  if (s > baseline.s + 1536 * 2 ** 20 || w > baseline.w + 1536 * 2 ** 20) {
    throw new Error(
      `after ${what}: memory ballooned: scheduler ${s >> 20} MiB, worker ${w >> 20} MiB`,
    );
  }
}

/** `weft worker`'s arguments for a worker of `scheduler` listening at `listen`, validating. */
function workerArgs(scheduler: string, listen: string): string[] {
  return [
    "worker",
    scheduler,
    "--listen",
    listen,
    "--nthreads",
    "2",
    "--executor",
    "inline",
    "--tasks",
    CHAOS_TASKS,
    "--log-level",
    "error",
    "--validate",
  ];
}
async function main(): Promise<void> {
  const t0 = Date.now();
  const schedAddr = `tcp://127.0.0.1:${PORT}`;
  const sched = procs.start("scheduler", [
    "scheduler",
    "--listen",
    schedAddr,
    "--log-level",
    "error",
    "--validate",
  ]);
  await sched.started;
  const worker = procs.start("worker", workerArgs(schedAddr, `tcp://127.0.0.1:${PORT + 1}`));
  const workerAddr = await worker.started;
  const fakeWorker = `tcp://127.0.0.1:${PORT + 2}`;

  // The real graph: keys in memory the fuzzing names, held by this client.
  const owner = await Client.connect(schedAddr, { timeoutMs: 10_000, logger: clientLogger });
  const real = owner.compute({
    "real-0": ["chaos.add", 1, 2, 0],
    "real-1": ["chaos.add", "real-0", 2, 0],
    "real-2": ["chaos.add", "real-1", 2, 0],
    "real-slow": ["chaos.add", 1, 2, 600_000],
  });
  await real["real-2"].result();
  const world: World = {
    keys: ["real-0", "real-1", "real-2", "real-slow"],
    worker: workerAddr,
    fakeWorker,
    client: owner.id,
    pool: anythingPool(3000, SEED),
  };
  const r = new Rng(SEED);
  const baseline = { s: rss(sched), w: rss(worker) };
  const counts: Record<string, number> = {};
  const run = async (what: string, f: () => Promise<{ sent: number }>) => {
    if (ONLY !== null && !ONLY.some((o) => what.startsWith(o))) return;
    const started = Date.now();
    const res = await f();
    counts[what] = res.sent;
    await healthCheck(what, schedAddr, sched, worker, baseline);
    console.log(
      `${what}: ${JSON.stringify(res)} ${Date.now() - started} ms, rss ${rss(sched) >> 20}/${rss(worker) >> 20} MiB`,
    );
  };

  // 1. Before the handshake: anything as the first message.
  await run("first-message", async () => {
    let sent = 0;
    for (let i = 0; i < Math.min(PER_OP, 500); i++) {
      const comm = await connect(schedAddr, { timeoutMs: 10_000 });
      const first = r.chance(0.5)
        ? mutate(r, world, {
            op: r.pick(["register-client", "register-worker"]),
            clientId: `c${i}`,
            address: fakeWorker,
            nthreads: 1,
            resources: {},
            ...wireVersion(),
          })
        : oddValue(r, world);
      try {
        await comm.send(first);
        sent++;
        await Promise.race([comm.recv(), new Promise((res) => setTimeout(res, 100))]);
      } catch {
        // refused or unencodable
      }
      comm.abort();
    }
    return { sent };
  });

  // 2. As a client, every op.
  let cid = 0;
  for (const op of Object.keys(CLIENT_TEMPLATES)) {
    await run(`client ${op}`, () =>
      burst(
        async () => {
          const id = `fuzz-client-${++cid}`;
          const c = await handshakeClient(schedAddr, id);
          drain(c);
          return c;
        },
        () => {
          const m = mutate(r, world, CLIENT_TEMPLATES[op](r, world));
          if (!("clientId" in m) || r.chance(0.9)) m.clientId = `fuzz-client-${cid}`;
          if (m.requestId === undefined && r.chance(0.9)) m.requestId = r.int(1e6);
          return harmless(m);
        },
        PER_OP,
      ),
    );
  }

  // 3. As a worker: register (with odd registrations), then every op. Something listens at
  // its address, for the scheduler's check that a worker can be reached there.
  await listen(fakeWorker, (comm) => drain(comm));
  let refusals = 0;
  for (const op of Object.keys(WORKER_TEMPLATES)) {
    await run(`worker ${op}`, () =>
      burst(
        async () => {
          for (;;) {
            const comm = await connect(schedAddr, { timeoutMs: 10_000 });
            await comm.send({
              op: "register-worker",
              address: fakeWorker,
              nthreads: 1,
              resources: {},
              name: "fake",
              stimulusId: "reg",
              ...wireVersion(),
            });
            const reply = (await comm.recv()) as { status?: string };
            if (reply?.status === "OK") {
              drain(comm);
              return comm;
            }
            comm.abort();
            if (++refusals > 50)
              throw new Error(`the fake worker is refused: ${JSON.stringify(reply)}`);
            await new Promise((res) => setTimeout(res, 200));
          }
        },
        () => mutate(r, world, WORKER_TEMPLATES[op](r, world)),
        PER_OP,
      ),
    );
  }

  // 4. As a peer of the worker's server: requests with odd args.
  for (const op of Object.keys(PEER_TEMPLATES)) {
    let id = 0;
    await run(`peer ${op}`, () =>
      burst(
        async () => {
          const c = await connect(workerAddr, { timeoutMs: 10_000 });
          drain(c);
          return c;
        },
        () => {
          const roll = r.next();
          const msg: Record<string, unknown> = {
            op,
            id: ++id,
            args: mutate(r, world, PEER_TEMPLATES[op](r, world)),
          };
          if (roll < 0.1) msg.args = oddValue(r, world);
          else if (roll < 0.15) msg.id = oddValue(r, world);
          return msg;
        },
        PER_OP,
        "single",
      ),
    );
  }

  // 5. As the scheduler of a second worker: its stream, with odd messages.
  await fakeSchedulerPhase(r, world, schedAddr, sched, worker, baseline);

  await owner.close();
  console.log(
    `\nseed ${SEED}: ${Object.values(counts).reduce((a, b) => a + b, 0)} messages in ${Object.keys(counts).length} bursts, ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  writeFileSync(
    `${process.env.TMPDIR ?? "/tmp"}/msgfuzz-counts.json`,
    JSON.stringify(counts, null, 1),
  );
}

/**
 * A second worker, registered with a fake scheduler here: the fake answers its
 * handshake, then sends its stream odd messages, op by op; the worker must not
 * crash (it may close, logging why, on a message it cannot act on? no: it skips it).
 */
async function fakeSchedulerPhase(
  r: Rng,
  world: World,
  _schedAddr: string,
  _sched: WeftProcess,
  _worker: WeftProcess,
  _baseline: { s: number; w: number },
): Promise<void> {
  if (
    ONLY !== null &&
    !ONLY.some((o) => "scheduler-stream".startsWith(o) || o.startsWith("scheduler"))
  )
    return;
  let stream: Comm | null = null;
  let resolveRegistered!: (comm: Comm) => void;
  const registered = new Promise<Comm>((resolve) => {
    resolveRegistered = resolve;
  });
  // Any free port, as the second worker's (below).
  const fake = await listen("tcp://127.0.0.1:0", async (comm) => {
    const first = (await comm.recv()) as { op?: string };
    if (first?.op !== "register-worker") {
      comm.abort();
      return;
    }
    await comm.send({
      op: "register-worker-reply",
      status: "OK",
      maxMessageBytes: 2 ** 30,
      ...wireVersion(),
    });
    drain(comm);
    resolveRegistered(comm);
  });
  const fakeAddr = fake.address;
  // Any free port: by now thousands of connections went out, and one of them may hold
  // PORT + 4 as its own end (the ports of the range are the system's ephemeral ones).
  const second = procs.start("worker2", workerArgs(fakeAddr, "tcp://127.0.0.1:0"));
  stream = await registered;
  const secondAddr = await second.started;
  for (const op of Object.keys(SCHEDULER_TEMPLATES)) {
    if (ONLY !== null && !ONLY.some((o) => `scheduler ${op}`.startsWith(o))) continue;
    let sent = 0;
    for (let i = 0; i < PER_OP; i += BATCH) {
      const batch = Array.from({ length: BATCH }, () =>
        mutate(r, world, SCHEDULER_TEMPLATES[op](r, world)),
      );
      try {
        await stream.send(batch);
        sent += batch.length;
      } catch (err) {
        if ((err as Error).name !== "SerializationError") throw err;
        // One of them cannot be encoded: the others one at a time.
        for (const m of batch)
          await stream.send([m]).then(
            () => sent++,
            () => {},
          );
      }
      if (stream.isClosed) throw new Error(`scheduler ${op}: the worker closed its stream`);
    }
    await new Promise((res) => setTimeout(res, 100));
    if (second.child.exitCode !== null || second.child.signalCode !== null || stream.isClosed) {
      throw new Error(`after scheduler ${op}: the second worker exited or closed its stream`);
    }
    // Its data server still answers.
    const c = await connect(secondAddr, { timeoutMs: 5_000 });
    await c.send({ op: "identity", id: 1 });
    const reply = (await Promise.race([
      c.recv(),
      new Promise((res) => setTimeout(() => res(null), 10_000)),
    ])) as { result?: unknown } | null;
    c.abort();
    if (reply === null || reply.result === undefined) {
      throw new Error(`after scheduler ${op}: the second worker's server did not answer identity`);
    }
    console.log(`scheduler ${op}: ${sent} sent, rss ${rss(second) >> 20} MiB`);
  }
}

/** The error lines the processes logged, by message and reason. */
function errorSummary(): void {
  console.log("log lines at error by message:");
  for (const [k, n] of [...errorLines].sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${k}`);
}

/**
 * Exit with `code` once stdout has been written out: to a pipe (under npx and tsx)
 * it is written asynchronously, and process.exit cut the summary off.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write("", () => process.exit(code));
}

main().then(
  async () => {
    errorSummary();
    await procs.close();
    if (failures.length > 0) {
      console.log(`FAILED: ${failures.length} crash or fatal lines`);
      exitAfterOutput(1);
      return;
    }
    exitAfterOutput(0);
  },
  async (err) => {
    errorSummary();
    console.log(`FAILED: ${(err as Error).stack}`);
    await procs.close();
    exitAfterOutput(1);
  },
);
