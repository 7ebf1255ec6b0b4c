/**
 * Real processes under chaos: a `weft scheduler` and `--workers` `weft worker`
 * processes on 127.0.0.1, and a Client computing rounds of a shuffle and a
 * chain reduction with checked answers, while a timer SIGKILLs random workers
 * (with `--freeze`, SIGSTOPs some instead) and starts replacements.
 *
 * The simulator (docs/sim.md) tests the state machines; this tests what it
 * cannot reach, the shells: TCP connections closed by a process dying, or kept
 * open by a frozen one, and peers and the client fetching from either.
 *
 *   npm run chaos:tcp [-- --seed 1 --rounds 30 --workers 3 --freeze]
 *
 * One line per round on stdout, then a summary; the processes' errors, and any
 * exit not caused by the harness, on stderr. Exit 0 when every round passed.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { runScript } from "../../bench/benchCli.ts";
import { nonNegativeInteger, positiveInteger } from "../../src/bench/benchOptions.ts";
import { RESTARTING_LINE } from "../../src/cli/commands/nanny.ts";
import { Client } from "../../src/client/client.ts";
import { RebalanceError, ReplicateError } from "../../src/client/errors.ts";
import type { Future } from "../../src/client/future.ts";
import { TEST_TLS_FILES, TEST_TLS_FLAGS } from "../../src/comm/testTls.ts";
import { loadTlsCredentials } from "../../src/comm/tls.ts";
import type { SchedulerCounters } from "../../src/protocol/messagesSession.ts";
import { SimRng } from "../../src/sim/rng.ts";
import { parseDecimal } from "../../src/util/decimal.ts";
import { isEntryPoint } from "../../src/util/entryPoint.ts";
import { weftLogger } from "../../src/util/logger.ts";
import { makeBlock, tally as makeTally, rangeSum, tallyBlock } from "./tasks.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The `weft` command of this checkout (it runs the sources through tsx). */
const WEFT = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));
/** The task module every worker of a run loads. */
export const CHAOS_TASKS = fileURLToPath(new URL("./tasks.ts", import.meta.url));

/** Where a process of the run is. */
export type ProcessState = "starting" | "up" | "retiring" | "frozen" | "killed" | "exited";

/** A `weft scheduler` or `weft worker` process. */
export interface WeftProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The address it printed once started (a worker: once registered); null before. */
  address: string | null;
  /** Resolves with the address; rejects if the process exits first. */
  readonly started: Promise<string>;
  /** Resolves once the process has exited and its output has been read. */
  readonly closed: Promise<void>;
  state: ProcessState;
}

/** With `--tls`: every process shows the test credentials (`test/fixtures/tls`). */
const TLS_FLAGS = TEST_TLS_FLAGS;

/** The stderr lines kept of each process, for the report of an unexpected exit. */
const TAIL_LINES = 20;
/**
 * How long a process may take to print its address (a worker: to register).
 * Loading under tsx takes 1–2 s, several on a loaded machine; past this the
 * process is killed and its start fails with its last lines.
 */
const START_TIMEOUT_MS = 60_000;

/**
 * How {@link Processes} starts its processes, beyond `bin/weft.js` with the
 * chaos tasks: what a test that has them run the build gives
 * (test/chaosTcp.test.ts), as through tsx each start costs about 0.8 s more CPU.
 */
export interface ProcessCommand {
  /** Added to every process's environment (`WEFT_RUN_BUILD=1`). */
  readonly env?: Readonly<Record<string, string>>;
  /** The task module workers load in place of {@link CHAOS_TASKS}: the same tasks. */
  readonly tasks?: string;
}

/**
 * Every process of a run: started, frozen and killed through it, and all
 * SIGKILLed by {@link Processes.killAll}, so that no exit path of the harness
 * leaves one behind (a SIGSTOPped process dies of SIGKILL too, no SIGCONT needed).
 */
export class Processes {
  readonly all: WeftProcess[] = [];
  /** Processes that exited without the harness killing them. */
  unexpectedExits = 0;
  /** The first of them: its name, how it exited and the last line it wrote on stderr. */
  firstUnexpectedExit: string | null = null;
  /** Workers a nanny started again after a fault (`--nanny`). */
  nannyRestarts = 0;
  /** Workers a nanny started again for a restart of the cluster (`--restart`). */
  restartedWorkers = 0;
  private stopping = false;

  /** `say` gets the lines worth showing: errors of the processes, unexpected exits. */
  constructor(
    private readonly say: (line: string) => void,
    private readonly command: ProcessCommand = {},
  ) {}

  /** Start `weft <args>` as `name`. */
  start(name: string, args: readonly string[]): WeftProcess {
    const child = spawn(process.execPath, [WEFT, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...this.command.env },
    });
    const tail: string[] = [];
    let resolveStarted!: (address: string) => void;
    let rejectStarted!: (err: Error) => void;
    const started = new Promise<string>((resolve, reject) => {
      resolveStarted = resolve;
      rejectStarted = reject;
    });
    // A replacement is not awaited: its failure to start is reported as its exit.
    started.catch(() => {});
    const startTimer = setTimeout(() => {
      if (p.state !== "starting") return;
      rejectStarted(
        new Error(`${name} did not start within ${START_TIMEOUT_MS} ms: ${tail.join("\n")}`),
      );
      this.kill(p);
    }, START_TIMEOUT_MS);
    startTimer.unref();
    const p: WeftProcess = {
      name,
      child,
      address: null,
      started,
      closed: new Promise((resolve) => child.once("close", () => resolve())),
      state: "starting",
    };
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /^(?:scheduler|worker) at ((?:tcp|tls):\/\/\S+)/.exec(line);
      if (m === null) return;
      // A nanny's worker started again comes back at another address.
      p.address = m[1];
      if (p.state === "starting") p.state = "up";
      clearTimeout(startTimer);
      resolveStarted(m[1]);
    });
    createInterface({ input: child.stderr! }).on("line", (line) => {
      if (line.startsWith("weft worker: nanny: the worker stopped on a fault; starting another")) {
        this.nannyRestarts++;
        return; // expected: the worker's own last line says why
      }
      if (line === RESTARTING_LINE) {
        this.restartedWorkers++;
        return;
      }
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      if (!this.stopping && worthShowing(line)) this.say(`[${name}] ${line}`);
    });
    child.on("error", (err) => this.say(`[${name}] ${err.message}`));
    // "close", not "exit": the tail then holds the last lines the process wrote.
    child.once("close", (code, signal) => {
      clearTimeout(startTimer);
      // A worker the client retired exits by itself, with code 0.
      const harness =
        p.state === "killed" || this.stopping || (p.state === "retiring" && code === 0);
      p.state = "exited";
      const how = signal === null ? `code ${code}` : signal;
      rejectStarted(new Error(`${name} exited (${how}) before starting: ${tail.join("\n")}`));
      if (harness) return;
      this.unexpectedExits++;
      this.firstUnexpectedExit ??= `${name} (${how}): ${exitReason(tail)}`;
      this.say(`[${name}] exited unexpectedly (${how})`);
      for (const line of tail) this.say(`[${name}]   ${line}`);
    });
    this.all.push(p);
    return p;
  }

  /** A scheduler on 127.0.0.1, once listening. */
  async scheduler(o: {
    readonly workerTtlMs: number;
    readonly validate: boolean;
    readonly tls?: boolean;
  }): Promise<{
    process: WeftProcess;
    address: string;
  }> {
    const p = this.start("scheduler", [
      "scheduler",
      "--listen",
      `${o.tls === true ? "tls" : "tcp"}://127.0.0.1:0`,
      ...(o.tls === true ? TLS_FLAGS : []),
      "--worker-ttl",
      String(o.workerTtlMs),
      "--log-level",
      "warn",
      ...(o.validate ? ["--validate"] : []),
    ]);
    return { process: p, address: await p.started };
  }

  /** A worker of the chaos tasks for the scheduler at `scheduler`; `started` once registered. */
  worker(
    name: string,
    scheduler: string,
    o: {
      readonly executor: "inline" | "threads";
      readonly nthreads: number;
      readonly validate: boolean;
      readonly memoryLimit?: string;
      readonly memoryPressure?: boolean;
      readonly nanny?: boolean;
      readonly tls?: boolean;
      readonly lifetimeMs?: number;
    },
  ): WeftProcess {
    return this.start(name, [
      "worker",
      scheduler,
      "--listen",
      `${o.tls === true ? "tls" : "tcp"}://127.0.0.1:0`,
      ...(o.tls === true ? TLS_FLAGS : []),
      "--nthreads",
      String(o.nthreads),
      "--executor",
      o.executor,
      "--tasks",
      this.command.tasks ?? CHAOS_TASKS,
      "--log-level",
      "warn",
      ...(o.validate ? ["--validate"] : []),
      ...(o.nanny === true ? ["--nanny"] : []),
      ...(o.lifetimeMs !== undefined
        ? [
            "--lifetime",
            `${o.lifetimeMs}ms`,
            "--lifetime-stagger",
            `${Math.floor(o.lifetimeMs / 2)}ms`,
            "--lifetime-restart",
          ]
        : []),
      // A limit of a few kB makes workers spill: held against the values, not the process.
      ...(o.memoryLimit !== undefined
        ? ["--memory-limit", o.memoryLimit, "--memory-measure", "managed"]
        : []),
      // Memory pressure: held against the process's resident memory, as Dask's.
      ...(o.memoryPressure === true
        ? ["--memory-limit", String(PRESSURE_LIMIT), "--memory-measure", "process"]
        : []),
    ]);
  }

  /**
   * The workers (every process but the scheduler) in `state`. One that has
   * exited but whose exit is not yet handled is neither starting nor up: the
   * harness must not take it for a victim, nor its exit for its own doing.
   */
  workers(state: ProcessState): WeftProcess[] {
    return this.all.filter(
      (p) =>
        p.name !== "scheduler" &&
        p.state === state &&
        ((state !== "starting" && state !== "up") ||
          (p.child.exitCode === null && p.child.signalCode === null)),
    );
  }

  /** SIGKILL `p`: its sockets close with it. */
  kill(p: WeftProcess): void {
    p.state = "killed";
    p.child.kill("SIGKILL");
  }

  /** `p` is being retired (`client.retireWorkers`): its exit with code 0 is expected. */
  retiring(p: WeftProcess): void {
    p.state = "retiring";
  }

  /** `p`'s retirement failed: it goes on as before. */
  notRetired(p: WeftProcess): void {
    if (p.state === "retiring") p.state = "up";
  }

  /** SIGSTOP `p`: its sockets stay open, and nothing answers on them. */
  freeze(p: WeftProcess): void {
    p.state = "frozen";
    p.child.kill("SIGSTOP");
  }

  /** SIGKILL every process still there (synchronous: usable in an `exit` handler). */
  killAll(): void {
    this.stopping = true;
    for (const p of this.all) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    }
  }

  /** {@link killAll}, then wait until every process has exited. */
  async close(): Promise<void> {
    this.killAll();
    await Promise.all(this.all.map((p) => p.closed));
  }
}

/**
 * The line of a process's last stderr lines that best says why it exited: the
 * error of Node's report of an uncaught error (which ends with its version
 * line, after the stack), else the last line written.
 */
export function exitReason(tail: readonly string[]): string {
  const lines = [...tail];
  while (
    lines.length > 0 &&
    (lines.at(-1)?.trim() === "" || /^Node\.js v\d/.test(lines.at(-1) ?? ""))
  ) {
    lines.pop();
  }
  const error = lines.findLast((l) => /^(?:[A-Z]\w*)?Error(?: \[\w+\])?: /.test(l));
  return error ?? lines.at(-1) ?? "nothing on stderr";
}

/** An error or fatal pino line (level 50, 60), or a line that is not a log record (a crash). */
function worthShowing(line: string): boolean {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return line.trim() !== "";
  }
  const level = (record as { level?: unknown } | null)?.level;
  return typeof level !== "number" || level >= 50;
}

/** A round's graph, its output key and the answer it must give. */
export interface ChaosRound {
  readonly graph: Readonly<Record<string, unknown>>;
  readonly key: string;
  readonly expected: number;
  readonly tasks: number;
  /** The key of the last merge, which only the chain's last step needs. */
  readonly lastMerge: string;
}

/**
 * The integers 0..P·N-1 made in P blocks of N, shuffled into P partitions by
 * value mod P (every block sends a piece to every partition: transfers between
 * workers), each partition summed, and the sums added along a chain whose every
 * step takes `stepMs`: the answer is (P·N)(P·N-1)/2. Keys start with `prefix`.
 * With `blocks` (futures of the P blocks, scattered by the client), the graph
 * starts from those instead of making them.
 */
export function chaosGraph(
  prefix: string,
  p: number,
  n: number,
  stepMs: number,
  blocks?: readonly Future[],
): ChaosRound {
  const graph: Record<string, unknown> = {};
  if (blocks === undefined) {
    for (let i = 0; i < p; i++) graph[`${prefix}make-${i}`] = ["chaos.make", i, n];
  }
  for (let i = 0; i < p; i++) {
    const block = blocks === undefined ? `${prefix}make-${i}` : blocks[i];
    for (let j = 0; j < p; j++) {
      graph[`${prefix}part-${i}-${j}`] = ["chaos.part", block, j, p];
    }
  }
  for (let j = 0; j < p; j++) {
    const parts = Array.from({ length: p }, (_, i) => `${prefix}part-${i}-${j}`);
    graph[`${prefix}merge-${j}`] = ["chaos.merge", ...parts];
  }
  let acc = `${prefix}merge-0`;
  for (let j = 1; j < p; j++) {
    graph[`${prefix}acc-${j}`] = ["chaos.add", acc, `${prefix}merge-${j}`, stepMs];
    acc = `${prefix}acc-${j}`;
  }
  const m = p * n;
  return {
    graph,
    key: acc,
    expected: (m * (m - 1)) / 2,
    tasks: Object.keys(graph).length,
    lastMerge: `${prefix}merge-${p - 1}`,
  };
}

/** A client of the run's scheduler; its errors go to `say`, prefixed `[client]`. */
export function chaosClient(scheduler: string, say: (line: string) => void): Promise<Client> {
  const logger = weftLogger("weft.client", "error", {
    write: (line: string) => say(`[client] ${line.trimEnd()}`),
  });
  const tls = scheduler.startsWith("tls://") ? { tls: loadTlsCredentials(TEST_TLS_FILES) } : {};
  return Client.connect(scheduler, { timeoutMs: 30_000, logger, ...tls });
}

/** Options of a chaos run. */
export interface ChaosOptions {
  readonly seed: number;
  readonly rounds: number;
  readonly workers: number;
  readonly nthreads: number;
  readonly executor: "inline" | "threads" | "mixed";
  /** The chaos timer's period. */
  readonly intervalMs: number;
  /** The chance that a tick hits a worker. */
  readonly killRate: number;
  /** Freeze (SIGSTOP) half of the workers hit instead of killing them. */
  readonly freeze: boolean;
  readonly roundTimeoutMs: number;
  readonly workerTtlMs: number;
  readonly validate: boolean;
  /** Each worker's `--memory-limit`: it spills values to disk beyond 60% of it. Default none. */
  readonly memoryLimit?: string;
  /**
   * Workers get a memory limit of {@link PRESSURE_LIMIT} against their
   * process's memory, and half of the ticks that hit a worker make it hold
   * memory beyond its pause share for a while (`chaos.hog`) instead of killing
   * or freezing it.
   */
  readonly memoryPressure?: boolean;
  /**
   * Workers run under a nanny (`weft worker --nanny`), and with
   * `memoryPressure` a third of the holds go beyond the terminate share: the
   * worker closes, and its nanny starts another.
   */
  readonly nanny?: boolean;
  /**
   * The client scatters each round's blocks, and replicates them to two
   * workers, instead of having tasks make them; as the tasks of every other
   * round start, it trims them back to one copy each, then rebalances them,
   * and in every fourth round it retires a worker meanwhile.
   */
  readonly scatter?: boolean;
  /**
   * A third of the rounds restart the cluster (`client.restart()`) while their
   * tasks run: the round's futures are cancelled, and the nannies (implied)
   * start every worker again for the rounds after. A third of the others
   * restart one worker (`client.restartWorkers`) while their tasks run, and
   * must still answer right.
   */
  readonly restart?: boolean;
  /**
   * Each worker retires after this many ms, give or take half of it, and its
   * nanny (implied) starts a new one (`weft worker --lifetime
   * --lifetime-restart`): workers come and go by themselves while rounds run,
   * their results moved to others as they go.
   */
  readonly lifetimeMs?: number;
  /** Every connection over `tls://`, with the test credentials. */
  readonly tls?: boolean;
  /**
   * Every other round sums the integers 0..P·N-1 with tasks that split their
   * range through their clients (`getClient`, `workerClient`) rather than with
   * the shuffle graph.
   */
  readonly dynamic?: boolean;
  /**
   * Every other round (alternating with `dynamic`'s) sums the blocks with
   * tasks that report them to an actor, through handles, and asks it the total.
   */
  readonly actors?: boolean;
  /**
   * At the first round that hangs, fails or answers wrong, dump the cluster
   * (`client.dumpClusterState`) to `<dump>-round<r>.msgpack.gz`, for `weft
   * story` and `weft replay`. Default none.
   */
  readonly dump?: string;
}

/** What a run did. */
export interface ChaosSummary {
  readonly rounds: number;
  readonly passed: number;
  readonly failed: number;
  /**
   * Rounds given up by design: a task died with `allowedFailures` workers
   * (Dask's KilledWorker), or (with `scatter`) every holder of a block died.
   */
  readonly killedWorker: number;
  readonly kills: number;
  readonly freezes: number;
  /** Workers the client retired (`--scatter`, every fourth round). */
  readonly retired: number;
  /** Workers made to hold memory (`--memory-pressure`), and ticks that saw a worker paused. */
  readonly pressured: number;
  readonly pausesSeen: number;
  /** Workers a nanny started again (`--nanny`). */
  readonly nannyRestarts: number;
  /** Rounds whose futures a restart of the cluster cancelled (`--restart`), and workers started again for one. */
  readonly restartedRounds: number;
  readonly restartedWorkers: number;
  /** Workers restarted alone (`client.restartWorkers`) while a round ran (`--restart`). */
  readonly restartedOne: number;
  readonly unexpectedExits: number;
  /**
   * Worker processes of the run still alive after it (a nanny's child outliving
   * its nanny): killed then, and a failure.
   */
  readonly leftBehind: number;
  /** The first unexpected exit, with the last line the process wrote, or null. */
  readonly firstUnexpectedExit: string | null;
}

/** Each worker's memory limit with `--memory-pressure`: 1 GiB of its process's memory. */
export const PRESSURE_LIMIT = 2 ** 30;
/** The share of it a pressured worker is taken to: beyond the pause share (0.8), short of terminate (0.95). */
const PRESSURE_SHARE = 0.87;
/** With `--nanny`, now and then: beyond the terminate share. */
const TERMINATE_SHARE = 1.05;

/** Partitions of a round: from 8 to 19, as the seed picks. */
const MIN_PARTITIONS = 8;
const MAX_PARTITIONS = 19;
/** Integers per block. */
const BLOCK = 2_000;
/** Each step of a round's chain. */
const STEP_MS = 20;

/**
 * Run `o.rounds` rounds under chaos; round lines and the summary go to `log`,
 * the processes' errors to `say`. Every process is killed before it returns or
 * throws (and by `procs.killAll()` from a signal handler meanwhile).
 */
export async function runChaos(
  o: ChaosOptions,
  log: (line: string) => void,
  say: (line: string) => void,
  procs: Processes = new Processes(say),
): Promise<ChaosSummary> {
  // One stream per kind of choice: a seed picks the same graph sizes and the
  // same sequence of chaos decisions however the timing of the run goes.
  const root = SimRng.forSeed(o.seed);
  const sizes = root.fork(1);
  const decisions = root.fork(2);
  const executors = root.fork(3);
  const retirements = root.fork(4);
  const pressures = root.fork(5);
  const restarts = root.fork(6);
  const restartOnes = root.fork(7);
  let restartedRounds = 0;
  let restartedOne = 0;
  let pressured = 0;
  /** Workers holding memory for the pressure now. */
  const squeezing = new Set<WeftProcess>();
  let pausesSeen = 0;
  let kills = 0;
  let retired = 0;
  let freezes = 0;
  let passed = 0;
  let failed = 0;
  let killedWorker = 0;
  let ticker: NodeJS.Timeout | undefined;
  let client: Client | undefined;
  let schedulerAddress: string | null = null;
  let leftBehind = 0;
  try {
    const { process: scheduler, address } = await procs.scheduler(o);
    schedulerAddress = address;
    let nextWorker = 0;
    const startWorker = () => {
      const executor =
        o.executor === "mixed" ? (executors.chance(0.5) ? "inline" : "threads") : o.executor;
      return procs.worker(`w${nextWorker++}`, address, { ...o, executor });
    };
    const first = Array.from({ length: o.workers }, startWorker);
    await Promise.all(first.map((w) => w.started));
    client = await chaosClient(address, say);

    /**
     * Make `victim` hold memory beyond its pause share for a while: what it needs
     * on top of the memory its last heartbeat gave (none if it gave none yet).
     */
    const pressure = (c: Client, victim: WeftProcess, holdMs: number, share: number): void => {
      // One hold at a time a worker: its heartbeat's memory does not count the first.
      if (squeezing.has(victim)) return;
      squeezing.add(victim);
      pressured++;
      void (async () => {
        const me = (await c.workers()).find((w) => w.address === victim.address);
        if (me?.memory === null || me?.memory === undefined) return;
        const mb = Math.floor((share * PRESSURE_LIMIT - me.memory) / 2 ** 20);
        if (mb > 0) await c.runWith({ workers: [me.address] }, "chaos.hog", mb, holdMs);
      })()
        .catch(() => {
          // The worker died or was retired meanwhile: nothing held.
        })
        .finally(() => squeezing.delete(victim));
    };

    const tick = () => {
      const hit = decisions.chance(o.killRate);
      const pick = decisions.random();
      const freeze = decisions.chance(0.5);
      let squeezed = false;
      if (o.memoryPressure === true && client !== undefined) {
        const c = client;
        void c.workers().then(
          (ws) => {
            if (ws.some((w) => w.status === "paused")) pausesSeen++;
          },
          () => {},
        );
        // Its own stream: the other decisions are those of a run without pressure.
        const squeeze = pressures.chance(0.5);
        const holdMs = pressures.range(200, 1500);
        const share =
          o.nanny === true && pressures.chance(1 / 3) ? TERMINATE_SHARE : PRESSURE_SHARE;
        const up = procs.workers("up").filter((w) => w.address !== null);
        if (hit && squeeze && up.length >= 1) {
          pressure(c, up[Math.floor(pick * up.length)], holdMs, share);
          squeezed = true;
        }
      }
      // Only registered workers are hit (one still loading its modules, 1-2 s under
      // tsx, would leave the cluster without workers for long stretches), and
      // never the last one up.
      const up = procs.workers("up");
      if (hit && !squeezed && up.length >= 2) {
        const victim = up[Math.floor(pick * up.length)];
        if (o.freeze && freeze) {
          // Frozen processes keep their memory: at most `workers` of them, the oldest
          // dying when one more would exceed that.
          const frozen = procs.workers("frozen");
          if (frozen.length >= o.workers) procs.kill(frozen[0]);
          procs.freeze(victim);
          freezes++;
        } else {
          procs.kill(victim);
          kills++;
        }
      }
      const alive = procs.workers("starting").length + procs.workers("up").length;
      for (let i = alive; i < o.workers; i++) startWorker();
    };
    ticker = setInterval(tick, o.intervalMs);

    /** Retire one worker that is up (not the last), as the client's `retireWorkers`. */
    const retireOne = async (c: Client): Promise<void> => {
      const up = procs.workers("up").filter((w) => w.address !== null);
      const pick = retirements.random();
      if (up.length < 2) return;
      const victim = up[Math.floor(pick * up.length)];
      procs.retiring(victim);
      const answer = await c.retireWorkers(victim.address as string);
      if (answer.retired.includes(victim.address as string)) retired++;
      else procs.notRetired(victim);
    };

    for (let r = 0; r < o.rounds; r++) {
      const p = sizes.range(MIN_PARTITIONS, MAX_PARTITIONS);
      const started = performance.now();
      const c = client;
      let round = chaosGraph(`r${r}-`, p, BLOCK, STEP_MS);
      let blocks: Future[] = [];
      const kind = roundKind(o, r);
      /** The worker holding an `actors` round's actor, once made. */
      let actorAt: string | null = null;
      // Its own stream: the other decisions are those of a run without restarts.
      const restartAfterMs =
        o.restart === true && restarts.chance(1 / 3) ? restarts.range(0, 300) : -1;
      /** With a restart: whether the answer came before it. */
      let answeredFirst = false;
      // In another third of the rounds, one worker restarts while the tasks run.
      const restartOneAfterMs =
        o.restart === true && restartAfterMs < 0 && restartOnes.chance(1 / 2)
          ? restartOnes.range(0, 300)
          : -1;
      const restartOnePick = restartOneAfterMs >= 0 ? restartOnes.random() : 0;
      let restartedHere = "";
      const restartOne = async (): Promise<void> => {
        await sleep(restartOneAfterMs);
        const up = procs.workers("up").filter((w) => w.address !== null);
        if (up.length === 0) return;
        const victim = up[Math.floor(restartOnePick * up.length)];
        const { restarted } = await c.restartWorkers(victim.address as string, {
          waitForWorkers: false,
        });
        restartedOne += restarted.length;
        if (restarted.length > 0)
          restartedHere = ` (${victim.name} restarted after ${restartOneAfterMs} ms)`;
      };
      const outcome = await withTimeout(
        (async () => {
          if (restartAfterMs >= 0) {
            const result = c.get(round.graph, { keys: [round.key] });
            void result.then(
              () => {
                answeredFirst = true;
              },
              () => {},
            );
            // The workers come back while the next round starts: a kill meanwhile may
            // leave fewer than there were for a while, which is no failure here.
            const restarted = sleep(restartAfterMs).then(() =>
              c.restart({ waitForWorkers: false }),
            );
            const [value] = await Promise.all([result, restarted]);
            return value;
          }
          if (restartOneAfterMs >= 0) {
            const [value] = await Promise.all([
              c.get(round.graph, { keys: [round.key] }),
              restartOne(),
            ]);
            return value;
          }
          if (o.scatter === true) {
            blocks = await c.scatter(Array.from({ length: p }, (_, i) => makeBlock(i, BLOCK)));
            // A copy lost to a kill is no failure: the round goes on from the holders left.
            await c.replicate(blocks, { n: 2 }).catch((e: unknown) => {
              if (!(e instanceof ReplicateError)) throw e;
            });
            round = chaosGraph(`r${r}-`, p, BLOCK, STEP_MS, blocks);
            const result = c.get(round.graph, { keys: [round.key] });
            // Every other round keeps its two copies, to outlive a kill.
            if (r % 2 === 0) return result;
            // While the parts start, trim each block back to one copy (remove-replicas),
            // then rebalance them (copies, then drops): tasks fetching a dropped copy
            // must find another, and a worker running a task that needs its copy keeps it.
            const trimmed = c
              .replicate(blocks, { n: 1 })
              .then(() => c.rebalance(blocks))
              .catch((e: unknown) => {
                if (!(e instanceof ReplicateError || e instanceof RebalanceError)) throw e;
              });
            // In every fourth round, a worker is retired while the tasks run.
            const retire = r % 4 === 3 ? retireOne(c) : Promise.resolve();
            const [value] = await Promise.all([result, trimmed, retire]);
            return value;
          }
          if (kind === "dynamic") {
            // Every range of at most BLOCK a leaf: about 2P tasks, each waiting on two.
            const m = p * BLOCK;
            const sum = await c.submitWith({ pure: false }, rangeSum, 0, m, BLOCK, STEP_MS);
            return { [round.key]: sum };
          }
          if (kind === "actors") {
            const future = c.submitWith({ actor: true, pure: false }, makeTally);
            const handle = await future.result();
            actorAt = handle.address;
            try {
              const adds = Array.from({ length: p }, (_, i) =>
                c.submitWith({ pure: false }, tallyBlock, handle, i, BLOCK, STEP_MS),
              );
              await c.gather(adds);
              return { [round.key]: await handle.call("total") };
            } finally {
              future.release();
              handle.release();
            }
          }
          return c.get(round.graph, { keys: [round.key] });
        })(),
        o.roundTimeoutMs,
      );
      for (const b of blocks) b.release();
      const ms = Math.round(performance.now() - started);
      const what =
        kind === "dynamic"
          ? "dynamic: tasks submit tasks"
          : kind === "actors"
            ? `actors: ${p} tasks report to one`
            : `${round.tasks} tasks`;
      const head = `round ${r}: P=${p} (${what})`;
      const tally = `kills ${kills}, freezes ${freezes}`;
      if (outcome.kind === "timeout") {
        failed++;
        log(`${head} HANG: no answer in ${o.roundTimeoutMs} ms; ${tally}`);
        log(`  scheduler counters: ${JSON.stringify(await countersOrError(client))}`);
        log(`  processes: ${procs.all.map((x) => `${x.name} ${x.state}`).join(", ")}`);
        if (failed === 1) await dumpCluster(client, o, r, log);
        break;
      }
      if (outcome.kind === "error") {
        const text = `${outcome.error.name}: ${outcome.error.message}`;
        if (restartAfterMs >= 0 && /^CancelledError: .* the cluster restarted$/.test(text)) {
          restartedRounds++;
          log(`${head} cancelled by a restart after ${restartAfterMs} ms, ${ms} ms, ${tally}`);
          continue;
        }
        if (/KilledWorker|scattered data lost|lost dependencies/.test(text)) {
          killedWorker++;
          log(`${head} gave up (${text.split("\n")[0]}), ${ms} ms, ${tally}`);
        } else if (kind === "actors" && ACTOR_GONE.test(text) && !(await stillUp(procs, actorAt))) {
          // The actor's worker was killed or frozen, or left by itself (its lifetime over,
          // or closed beyond its memory limit): the actor is gone by design.
          killedWorker++;
          log(
            `${head} gave up (its actor's worker went: ${text.split("\n")[0]}), ${ms} ms, ${tally}`,
          );
        } else {
          failed++;
          log(`${head} FAILED ${ms} ms: ${text}; ${tally}`);
          if (failed === 1) await dumpCluster(client, o, r, log);
          if (scheduler.state === "exited") break; // every round after would fail the same way
        }
        continue;
      }
      const got = outcome.value[round.key];
      if (got === round.expected) {
        passed++;
        const note =
          restartAfterMs >= 0 && answeredFirst ? " (answered before its restart)" : restartedHere;
        log(`${head} ok ${ms} ms${note}, ${tally}`);
      } else {
        failed++;
        log(`${head} WRONG: ${String(got)}, expected ${round.expected}; ${tally}`);
        if (failed === 1) await dumpCluster(client, o, r, log);
      }
    }
  } finally {
    clearInterval(ticker);
    // The cluster may be broken: the client is not waited for long.
    if (client !== undefined) await withTimeout(client.close(), 5_000);
    await procs.close();
    if (schedulerAddress !== null) leftBehind = await killLeftBehind(schedulerAddress, say);
  }
  return {
    rounds: o.rounds,
    passed,
    failed,
    killedWorker,
    kills,
    freezes,
    retired,
    pressured,
    pausesSeen,
    nannyRestarts: procs.nannyRestarts,
    restartedRounds,
    restartedWorkers: procs.restartedWorkers,
    restartedOne,
    unexpectedExits: procs.unexpectedExits,
    leftBehind,
    firstUnexpectedExit: procs.firstUnexpectedExit,
  };
}

/** The pids of the `weft worker` processes for `scheduler` still alive (Linux: read from /proc). */
function workersOf(scheduler: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return []; // no /proc: nothing to look at
  }
  const out: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const i = args.indexOf("worker");
    if (i > 0 && args[i + 1] === scheduler && args[i - 1]?.endsWith("weft.js")) out.push(Number(e));
  }
  return out;
}

/**
 * Once every process the harness started has exited: wait up to `waitMs` for
 * the workers of the run that a nanny started to exit too (they close when
 * their nanny dies), then SIGKILL those left and say so. Returns how many were left.
 */
export async function killLeftBehind(
  scheduler: string,
  say: (line: string) => void,
  waitMs = 20_000,
): Promise<number> {
  const deadline = Date.now() + waitMs;
  let left = workersOf(scheduler);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250);
    left = workersOf(scheduler);
  }
  for (const pid of left) {
    say(`[harness] a worker process (pid ${pid}) outlived its nanny; killed`);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
  return left.length;
}

type Outcome<T> =
  | { kind: "value"; value: T }
  | { kind: "error"; error: Error }
  | { kind: "timeout" };

/**
 * With `--dump`, the cluster as the first failed round left it, for `weft
 * story` and `weft replay` (a frozen worker's entry is the error met asking it).
 */
async function dumpCluster(
  client: Client,
  o: ChaosOptions,
  round: number,
  log: (line: string) => void,
): Promise<void> {
  if (o.dump === undefined) return;
  const out = await withTimeout(client.dumpClusterState(`${o.dump}-round${round}`), 30_000);
  if (out.kind === "value") log(`  cluster dumped: ${out.value} (weft story KEY ${out.value})`);
  else {
    const why = out.kind === "timeout" ? "no answer in 30 s" : out.error.message;
    log(`  cannot dump the cluster: ${why}`);
  }
}

/** `promise`'s outcome, or a timeout after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  const ac = new AbortController();
  try {
    return await Promise.race([
      promise.then(
        (value): Outcome<T> => ({ kind: "value", value }),
        (err: unknown): Outcome<T> => ({
          kind: "error",
          error: err instanceof Error ? err : new Error(String(err)),
        }),
      ),
      sleep(ms, undefined, { signal: ac.signal }).then((): Outcome<T> => ({ kind: "timeout" })),
    ]);
  } finally {
    ac.abort();
  }
}

/** The scheduler's counters, or why they could not be had (within 5 s). */
async function countersOrError(client: Client): Promise<SchedulerCounters | string> {
  const outcome = await withTimeout(client.counters(), 5_000);
  if (outcome.kind === "value") return outcome.value;
  return outcome.kind === "timeout" ? "no answer in 5 s" : outcome.error.message;
}

/** The summary line of a run. */
export function summaryLine(seed: number, s: ChaosSummary): string {
  const notRun = s.rounds - s.passed - s.failed - s.killedWorker - s.restartedRounds;
  return (
    `seed ${seed}: ${s.rounds} rounds, ${s.passed} passed, ${s.failed} failed` +
    (s.killedWorker > 0 ? `, ${s.killedWorker} gave up (KilledWorker, or data lost)` : "") +
    (notRun > 0 ? `, ${notRun} not run` : "") +
    `; ${s.kills} kills, ${s.freezes} freezes` +
    (s.retired > 0 ? `, ${s.retired} retired` : "") +
    (s.pressured > 0
      ? `, ${s.pressured} pressured (${s.pausesSeen} ticks saw a worker paused)`
      : "") +
    (s.nannyRestarts > 0 ? `, ${s.nannyRestarts} nanny restarts` : "") +
    (s.restartedRounds > 0
      ? `, ${s.restartedRounds} rounds cancelled by a restart (${s.restartedWorkers} workers started again)`
      : "") +
    (s.restartedOne > 0 ? `, ${s.restartedOne} workers restarted alone` : "") +
    (s.restartedRounds === 0 && s.restartedWorkers > 0
      ? `, ${s.restartedWorkers} workers started again (their lifetime over, or restarted alone)`
      : "") +
    `, ${s.unexpectedExits} unexpected exits` +
    (s.leftBehind > 0 ? `, ${s.leftBehind} processes left behind` : "") +
    (s.firstUnexpectedExit !== null ? ` (first: ${s.firstUnexpectedExit})` : "")
  );
}

/** Every round answered right (or gave up by design), and no process exited by itself. */
export function passedAll(s: ChaosSummary): boolean {
  return (
    s.failed === 0 &&
    s.unexpectedExits === 0 &&
    s.leftBehind === 0 &&
    s.passed + s.killedWorker + s.restartedRounds === s.rounds
  );
}

/**
 * What round `r` computes: the shuffle graph, or in every other round the same sum
 * with `--dynamic`'s tasks that submit tasks or `--actors`' actor (with both, each
 * in every fourth round).
 */
function roundKind(o: ChaosOptions, r: number): "graph" | "dynamic" | "actors" {
  // A --scatter run's every round computes the scattered graph (main refuses the mix).
  if (r % 2 === 0 || o.scatter === true) return "graph";
  if (o.dynamic === true && o.actors === true) return r % 4 === 1 ? "dynamic" : "actors";
  if (o.dynamic === true) return "dynamic";
  return o.actors === true ? "actors" : "graph";
}

/** How an `actors` round ends when its actor's worker is gone. */
const ACTOR_GONE = /Worker holding Actor was lost|ActorLostError|cannot reach the actor's worker/;

/** True while the worker at `address` is up (not killed, frozen or exited). */
function isUp(procs: Processes, address: string | null): boolean {
  return address !== null && procs.workers("up").some((w) => w.address === address);
}

/**
 * How long a worker that left by itself may take to show it: its nanny's next worker
 * printing its address, the harness's only sign of it (1–2 s under tsx, more on a
 * loaded host).
 */
const LEFT_BY_ITSELF_MS = 10_000;

/**
 * Whether the worker at `address` is still up {@link LEFT_BY_ITSELF_MS} from now.
 * A worker that retired at its `--lifetime`, or closed beyond its memory limit,
 * is gone before its nanny starts the next: until that one prints its address,
 * `isUp` still says the old one is up (an actor lost with it failed the round).
 */
async function stillUp(procs: Processes, address: string | null): Promise<boolean> {
  const until = performance.now() + LEFT_BY_ITSELF_MS;
  while (isUp(procs, address) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return isUp(procs, address);
}

/** The value of option `flag` as a number in [0, 1]; throws otherwise. */
function rate(value: string, flag: string): number {
  const x = parseDecimal(value);
  if (!(x >= 0 && x <= 1)) throw new Error(`${flag} must be a number from 0 to 1`);
  return x;
}

/** `npm run chaos:tcp`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("chaos:tcp")
    .description(
      "A weft scheduler and worker processes on 127.0.0.1 computing checked rounds of a\n" +
        "shuffle and a chain reduction while workers are SIGKILLed (and with --freeze\n" +
        "SIGSTOPped) and replaced",
    )
    .option("--seed <n>", "picks the graph sizes, executors and chaos decisions", "1")
    .option("--rounds <n>", "graphs computed one after the other", "20")
    .option("--workers <n>", "worker processes (dead and frozen ones are replaced)", "3")
    .option("--nthreads <n>", "threads of each worker", "2")
    .addOption(
      new Option("--executor <kind>", "how workers run tasks; mixed: each worker at random")
        .choices(["inline", "threads", "mixed"])
        .default("mixed"),
    )
    .option("--interval <ms>", "period of the chaos timer", "400")
    .option("--kill-rate <p>", "chance that a tick of the timer hits a worker", "0.5")
    .option("--freeze", "SIGSTOP half of the workers hit instead of killing them")
    .option("--round-timeout <ms>", "a round without an answer by then is a HANG", "60000")
    .option("--worker-ttl <ms>", "the scheduler's --worker-ttl (frozen workers go then)", "3000")
    .option("--validate", "the processes check their state machines after every stimulus")
    .option(
      "--memory-limit <size>",
      "each worker's --memory-limit (e.g. 256kB): values beyond 60% of it are spilled to disk",
    )
    .option(
      "--memory-pressure",
      "workers get a 1 GiB limit on their process's memory, and half of the hits make a worker hold memory beyond its pause share (87%) for 0.2-1.5 s instead",
    )
    .option(
      "--nanny",
      "workers run under a nanny (weft worker --nanny); with --memory-pressure a third of the holds go beyond the terminate share, and the nanny starts the worker again",
    )
    .option(
      "--scatter",
      "the client scatters each round's blocks (replicates them to 2 workers; in every other round trims them to 1 and rebalances them as the tasks start, and in every fourth retires a worker) instead of making them in tasks",
    )
    .option(
      "--restart",
      "a third of the rounds restart the cluster (client.restart) while their tasks run, after 0-300 ms: their futures are cancelled; half of the others restart one worker (client.restartWorkers) and must answer right; workers run under a nanny, which starts them again",
    )
    .option(
      "--lifetime <ms>",
      "each worker retires after MS, give or take half of it, and its nanny (implied) starts a new one (weft worker --lifetime --lifetime-restart)",
    )
    .option("--tls", "every connection over tls://, with the test credentials (test/fixtures/tls)")
    .option(
      "--dump <prefix>",
      "at the first failed round, dump the cluster to PREFIX-roundR.msgpack.gz (weft story, weft replay)",
    )
    .option(
      "--dynamic",
      "every other round sums the same integers with tasks that split their range in tasks of their own (getClient, workerClient), down to blocks; not with --scatter, whose rounds all compute the scattered graph",
    )
    .option(
      "--actors",
      "every other round (with --dynamic, every fourth) sums the blocks with tasks that report them to an actor through its handle; a round whose actor's worker was killed or frozen gives up (Worker holding Actor was lost); not with --scatter",
    )
    .addHelpText(
      "after",
      "\nA seed picks the same graph sizes, executors and sequence of chaos decisions (hit\n" +
        "or not, kill or freeze, the draw that picks among the workers up), but not the\n" +
        "timing: which workers are up at a tick, and what a worker is doing when hit, vary\n" +
        "from run to run, so a failure may need a few runs to come back.\n" +
        "Only workers that have registered are hit, never the last one up; replacements\n" +
        "start at the next tick. Frozen workers stay frozen until the end (at most --workers\n" +
        "of them: the oldest is killed to freeze one more), then are SIGKILLed with the rest.\n" +
        "Every process is killed on any exit, Ctrl-C included.\n" +
        "Exit 0: every round passed. Exit 1: a wrong answer, a failed round, a HANG (the\n" +
        "scheduler's counters are printed), or a process that exited by itself.",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string | boolean | undefined>>();
  const str = (k: string) => String(opts[k]);
  const o: ChaosOptions = {
    seed: nonNegativeInteger(str("seed"), "--seed"),
    rounds: positiveInteger(str("rounds"), "--rounds"),
    workers: positiveInteger(str("workers"), "--workers"),
    nthreads: positiveInteger(str("nthreads"), "--nthreads"),
    executor: str("executor") as ChaosOptions["executor"],
    intervalMs: positiveInteger(str("interval"), "--interval"),
    killRate: rate(str("killRate"), "--kill-rate"),
    freeze: opts.freeze === true,
    roundTimeoutMs: positiveInteger(str("roundTimeout"), "--round-timeout"),
    workerTtlMs: positiveInteger(str("workerTtl"), "--worker-ttl"),
    validate: opts.validate === true,
    scatter: opts.scatter === true,
    ...(opts.memoryLimit !== undefined ? { memoryLimit: str("memoryLimit") } : {}),
    memoryPressure: opts.memoryPressure === true,
    nanny: opts.nanny === true || opts.restart === true || opts.lifetime !== undefined,
    restart: opts.restart === true,
    tls: opts.tls === true,
    dynamic: opts.dynamic === true,
    actors: opts.actors === true,
    ...(opts.dump !== undefined ? { dump: str("dump") } : {}),
    ...(opts.lifetime !== undefined
      ? { lifetimeMs: positiveInteger(str("lifetime"), "--lifetime") }
      : {}),
  };
  if (o.nanny === true && o.freeze) {
    throw new Error(
      "--nanny (or --restart, --lifetime) and --freeze: the harness would freeze the nanny, not its worker",
    );
  }
  if (o.scatter === true && (o.dynamic === true || o.actors === true)) {
    throw new Error(
      `--scatter and ${o.dynamic === true ? "--dynamic" : "--actors"}: every round of a --scatter run computes the scattered graph, so no dynamic or actor round would run`,
    );
  }
  if (o.memoryPressure === true && o.memoryLimit !== undefined) {
    throw new Error("--memory-pressure sets the workers' memory limit: give it or --memory-limit");
  }
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const procs = new Processes(say);
  process.once("exit", () => procs.killAll());
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      procs.killAll();
      say(`chaos:tcp: ${signal}: every process killed`);
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
  const summary = await runChaos(o, (line) => process.stdout.write(`${line}\n`), say, procs);
  process.stdout.write(`${summaryLine(o.seed, summary)}\n`);
  return passedAll(summary) ? 0 : 1;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await runScript("chaos:tcp", main);
