/**
 * What the paired benchmarks (`bench:cluster-ab`, `bench:state-ab`) share: a side is
 * a process of its own running one checkout's code, and the two sides run each
 * workload in turn, pair after pair, alternating which goes first, in rounds that
 * start both afresh.
 *
 * A side script is forked with its arguments; it sends `{ op: "ready" }` once it can
 * run (or `{ op: "failed", error }`), answers `{ op: "run", id, name, prefix }` with
 * `{ id, seconds }` (or `{ id, error }`), and exits on `{ op: "close" }`.
 */

import { type ChildProcess, fork } from "node:child_process";
import { median, quantile, round } from "../src/bench/stats.ts";

/** What a side is asked to do. */
export type SideRequest =
  | { readonly op: "run"; readonly id: number; readonly name: string; readonly prefix: string }
  | { readonly op: "close" };

/** What a side answers. */
export type SideReply =
  | { readonly op: "ready" }
  | { readonly op: "failed"; readonly error: string }
  | { readonly id: number; readonly seconds: number }
  | { readonly id: number; readonly error: string };

/** The V8 flags of this process that shape the heap: the sides run with the same. */
export function heapFlags(): string[] {
  return process.execArgv.filter((a) =>
    /^--(max-semi-space-size|min-semi-space-size|heap-growing-percent|max-old-space-size)=/.test(a),
  );
}

/** How long a side may take to answer one run before it is killed. */
const RUN_TIMEOUT_MS = 600_000;

/** A side process: run a workload, get its seconds. */
export class Side {
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (s: number) => void; reject: (e: Error) => void }
  >();
  private exited: Error | null = null;

  private constructor(
    readonly name: "base" | "this",
    private readonly child: ChildProcess,
  ) {
    child.on("message", (reply: SideReply) => {
      if (!("id" in reply)) return;
      const p = this.pending.get(reply.id);
      if (p === undefined) return;
      this.pending.delete(reply.id);
      if ("error" in reply) p.reject(new Error(`${this.name}: ${reply.error}`));
      else p.resolve(reply.seconds);
    });
    child.on("exit", (code, signal) =>
      this.fail(new Error(`${this.name}: its process exited (${signal ?? code})`)),
    );
    // A failed fork, or a send on a channel the side has closed: without a listener
    // the error would end this process with a message that does not say which side.
    child.on("error", (err) => this.fail(new Error(`${this.name}: ${err.message}`)));
  }

  private fail(err: Error): void {
    this.exited ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Fork `script` with `args` (node flags `execArgv`); resolves once it is ready. */
  static start(
    name: Side["name"],
    script: string,
    args: readonly string[],
    execArgv: readonly string[],
  ): Promise<Side> {
    const child = fork(script, [...args], {
      execArgv: [...execArgv, "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const side = new Side(name, child);
    return new Promise((resolveStart, rejectStart) => {
      const onMessage = (reply: SideReply): void => {
        if ("op" in reply && reply.op === "ready") {
          child.off("message", onMessage);
          resolveStart(side);
        } else if ("op" in reply && reply.op === "failed") {
          child.off("message", onMessage);
          rejectStart(new Error(reply.error));
        }
      };
      child.on("message", onMessage);
      child.once("exit", (code, signal) =>
        rejectStart(new Error(`${name}: its process exited before starting (${signal ?? code})`)),
      );
      child.once("error", (err) => rejectStart(new Error(`${name}: ${err.message}`)));
    });
  }

  /**
   * Run the workload `name` once; its seconds (the side checks the result). A side that
   * does not answer within `timeoutMs` is killed, and the run fails.
   */
  run(name: string, prefix: string, timeoutMs = RUN_TIMEOUT_MS): Promise<number> {
    if (this.exited !== null) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolveRun, rejectRun) => {
      const timer = setTimeout(() => {
        this.fail(
          new Error(`${this.name}: no answer to a run of ${name} in ${timeoutMs / 1000} s`),
        );
        this.child.kill();
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (seconds) => {
          clearTimeout(timer);
          resolveRun(seconds);
        },
        reject: (err) => {
          clearTimeout(timer);
          rejectRun(err);
        },
      });
      const req: SideRequest = { op: "run", id, name, prefix };
      this.child.send(req, (err) => {
        if (err) this.fail(new Error(`${this.name}: ${err.message}`));
      });
    });
  }

  /** Ask it to exit, and wait (killing it after 10 s). */
  async close(): Promise<void> {
    if (this.exited !== null || !this.child.connected) return;
    const gone = new Promise<void>((r) => this.child.once("exit", () => r()));
    const req: SideRequest = { op: "close" };
    // If the channel closed meanwhile, the side is exiting anyway (the timer kills it otherwise).
    this.child.send(req, () => {});
    const timer = setTimeout(() => this.child.kill(), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

/** Each workload's times on both sides, and the base/this ratios per round. */
export interface PairedTimes {
  readonly base: number[];
  readonly this: number[];
  readonly ratios: number[][];
}

/**
 * Run every workload `pairs` times per round on both sides (after `warmup` untimed
 * runs each), alternating which side goes first; each round starts both sides afresh
 * with `start`, since a process's JIT and heap are a draw that lasts its life.
 */
export async function pairedRuns(
  names: readonly string[],
  o: { readonly rounds: number; readonly pairs: number; readonly warmup: number },
  start: (side: Side["name"]) => Promise<Side>,
): Promise<Map<string, PairedTimes>> {
  const results = new Map<string, PairedTimes>();
  for (const name of names) results.set(name, { base: [], this: [], ratios: [] });
  let run = 0;
  for (let round = 0; round < o.rounds; round++) {
    const sides: Side[] = [];
    try {
      sides.push(await start("base"));
      sides.push(await start("this"));
      const [a, b] = sides;
      for (const name of names) {
        const r = results.get(name) as PairedTimes;
        for (let w = 0; w < o.warmup; w++) {
          await a.run(name, `w${run}-`);
          await b.run(name, `w${run++}-`);
        }
        const ratios: number[] = [];
        for (let p = 0; p < o.pairs; p++) {
          const prefix = `p${run++}-`;
          let sa: number;
          let sb: number;
          if ((p + round) % 2 === 0) {
            sa = await a.run(name, prefix);
            sb = await b.run(name, prefix);
          } else {
            sb = await b.run(name, prefix);
            sa = await a.run(name, prefix);
          }
          r.base.push(sa);
          r.this.push(sb);
          ratios.push(sa / sb);
        }
        r.ratios.push(ratios);
      }
    } finally {
      await Promise.all(sides.map((side) => side.close()));
    }
  }
  return results;
}

/** The medians of a workload's paired times; ratios are base/this time (above 1, this is faster). */
export function pairedSummary(r: PairedTimes): {
  baseSeconds: number;
  thisSeconds: number;
  medianRatio: number;
  roundMedianRatios: number[];
  ratioQuartiles: [number, number];
} {
  const all = r.ratios.flat();
  return {
    baseSeconds: round(median(r.base), 4),
    thisSeconds: round(median(r.this), 4),
    medianRatio: round(median(all), 3),
    roundMedianRatios: r.ratios.map((xs) => round(median(xs), 3)),
    ratioQuartiles: [round(quantile(all, 0.25), 3), round(quantile(all, 0.75), 3)],
  };
}

/** The paired benchmarks' `--help` epilogue; `bench` is the benchmark whose node flags the npm script uses. */
export function pairedHelp(bench: string): string {
  return (
    "\nmedianRatio is the median of base/this time over all pairs: above 1, this checkout\n" +
    "is faster. roundMedianRatios gives it per round: each round starts both sides afresh,\n" +
    "and a process's JIT and heap are a draw that lasts its life, so only rounds that agree\n" +
    `tell the versions apart. The npm script runs node with the heap flags of ${bench};\n` +
    "the sides inherit them."
  );
}
