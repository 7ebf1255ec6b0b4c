/**
 * A paired comparison of two versions of weft on the cluster benchmark's
 * graphs: this checkout and another one (`--base DIR`, e.g. a `git worktree`
 * of an older commit with its `node_modules`). Each side is a LocalCluster of
 * 2 workers × 1 thread in a process of its own (`clusterAbSide.ts`, with this
 * process's V8 flags); they run each graph in turn, pair after pair,
 * alternating which goes first, while the other waits. The result is the
 * median of the per-pair time ratios (base / this: above 1, this checkout is
 * faster), over all pairs and per round: each round starts both sides
 * afresh, since a process's JIT and heap are a draw that lasts its life.
 *
 * On a shared machine whose speed drifts by tens of percent within minutes,
 * two separate `bench:cluster` invocations cannot resolve a few percent; the
 * two halves of a pair run within a second of each other, each in its own
 * heap. See `docs/client.md` for what identical code gives.
 *
 *   npm run bench:cluster-ab -- --base ../weft-old [--graphs tree,map] [--rounds 4 --pairs 25]
 *
 * Prints one JSON line per graph, after one for the configuration.
 */

import { type ChildProcess, fork } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { isEntryPoint } from "../src/util/entryPoint.ts";
import { clusterRunOptions, graphNames, positiveInteger, runScript } from "./benchCli.ts";
import { checkoutProblem, type SideReply, type SideRequest } from "./clusterAbSide.ts";
import { scaledGraph } from "./clusterGraphs.ts";
import { median, quantile, round } from "./stats.ts";

/** Options of a paired comparison. */
export interface ClusterAbOptions {
  /** The other checkout (its root directory). */
  readonly base: string;
  readonly graphs: readonly string[];
  /** Timed pairs per graph and round. */
  readonly pairs: number;
  /** Rounds, each with fresh side processes. */
  readonly rounds: number;
  /** Untimed runs of each graph on each side first. */
  readonly warmup: number;
  /** Root-task queuing threshold; Infinity disables queuing. */
  readonly saturation: number;
  /** Multiply the graph sizes (quick checks). */
  readonly scale: number;
}

const SIDE_SCRIPT = fileURLToPath(new URL("./clusterAbSide.ts", import.meta.url));

/** The V8 flags of this process that shape the heap: the sides run with the same. */
function heapFlags(): string[] {
  return process.execArgv.filter((a) =>
    /^--(max-semi-space-size|min-semi-space-size|heap-growing-percent|max-old-space-size)=/.test(a),
  );
}

/** A side process: run a graph, get its seconds. */
class Side {
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
    child.on("exit", (code, signal) => {
      this.exited = new Error(`${this.name}: its process exited (${signal ?? code})`);
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    });
  }

  /** Fork a side for the checkout at `root`; resolves once its cluster runs. */
  static start(name: Side["name"], root: string, saturation: number, scale: number): Promise<Side> {
    const child = fork(SIDE_SCRIPT, [root, String(saturation), String(scale)], {
      execArgv: [...heapFlags(), "--import", "tsx"],
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
    });
  }

  /** Run `graph` once; its seconds (the side checks the answer). */
  run(graph: string, prefix: string): Promise<number> {
    if (this.exited !== null) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolveRun, rejectRun) => {
      this.pending.set(id, { resolve: resolveRun, reject: rejectRun });
      const req: SideRequest = { op: "run", id, graph, prefix };
      this.child.send(req);
    });
  }

  /** Close its cluster and let it exit. */
  async close(): Promise<void> {
    if (this.exited !== null || !this.child.connected) return;
    const gone = new Promise<void>((r) => this.child.once("exit", () => r()));
    const req: SideRequest = { op: "close" };
    this.child.send(req);
    const timer = setTimeout(() => this.child.kill(), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

/** Run the comparison; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchClusterAb(
  o: ClusterAbOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  const here = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const base = resolve(o.base);
  const problem = checkoutProblem(base);
  if (problem !== null) throw new Error(problem);
  emit({
    bench: "cluster-ab",
    base,
    this: here,
    rounds: o.rounds,
    pairsPerRound: o.pairs,
    warmup: o.warmup,
    workerSaturation: Number.isFinite(o.saturation) ? o.saturation : "inf",
    node: process.version,
    nodeFlags: heapFlags(),
  });
  const results = new Map<string, { base: number[]; this: number[]; ratios: number[][] }>();
  for (const name of o.graphs) results.set(name, { base: [], this: [], ratios: [] });
  let run = 0;
  for (let round = 0; round < o.rounds; round++) {
    // Fresh processes each round: a process's JIT and heap are a draw that lasts its life.
    const sides: Side[] = [];
    try {
      sides.push(await Side.start("base", base, o.saturation, o.scale));
      sides.push(await Side.start("this", here, o.saturation, o.scale));
      const [a, b] = sides;
      for (const name of o.graphs) {
        const r = results.get(name) as { base: number[]; this: number[]; ratios: number[][] };
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
  for (const name of o.graphs) {
    const r = results.get(name) as { base: number[]; this: number[]; ratios: number[][] };
    const all = r.ratios.flat();
    const tasks = scaledGraph(name, o.scale).tasks;
    const roundMedians = r.ratios.map((xs) => round(median(xs), 3));
    emit({
      graph: name,
      tasks,
      rounds: o.rounds,
      pairsPerRound: o.pairs,
      baseSeconds: round(median(r.base), 4),
      thisSeconds: round(median(r.this), 4),
      baseTasksPerS: round(tasks / median(r.base)),
      thisTasksPerS: round(tasks / median(r.this)),
      // base / this time: above 1, this checkout is faster.
      medianRatio: round(median(all), 3),
      roundMedianRatios: roundMedians,
      ratioQuartiles: [round(quantile(all, 0.25), 3), round(quantile(all, 0.75), 3)],
      checked: true,
    });
  }
}

/** `npm run bench:cluster-ab`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:cluster-ab")
    .description(
      "Paired comparison with another checkout on the cluster benchmark's graphs (each side a process with 2 workers × 1 thread)",
    )
    .requiredOption("--base <dir>", "the other checkout (a weft directory with node_modules)")
    .option("--graphs <list>", "comma-separated graphs", "tree,map")
    .option("--rounds <n>", "rounds, each with fresh processes for both sides", "4")
    .option("--pairs <n>", "timed pairs per graph and round", "25")
    .option("--warmup <n>", "untimed runs per graph, side and round first", "3")
    .option("--saturation <x>", "worker saturation (root-task queuing); inf disables", "inf")
    .option("--scale <x>", "multiply the graph sizes (quick checks)", "1")
    .addHelpText(
      "after",
      "\nmedianRatio is the median of base/this time over all pairs: above 1, this checkout\n" +
        "is faster. roundMedianRatios gives it per round: each round starts both sides afresh,\n" +
        "and a process's JIT and heap are a draw that lasts its life, so only rounds that agree\n" +
        "tell the versions apart. The npm script runs node with the flags of bench:cluster;\n" +
        "the sides inherit them.",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const pairs = positiveInteger(opts.pairs, "--pairs");
  const rounds = positiveInteger(opts.rounds, "--rounds");
  const { warmup, saturation, scale } = clusterRunOptions(opts);
  const graphs = graphNames(opts.graphs);
  await benchClusterAb(
    { base: opts.base, graphs, pairs, rounds, warmup, saturation, scale },
    (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) await runScript("bench:cluster-ab", main);
