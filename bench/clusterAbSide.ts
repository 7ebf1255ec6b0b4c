/**
 * One side of `bench:cluster-ab`, in a process of its own (forked by
 * `clusterAb.ts`): a LocalCluster of 2 workers × 1 thread from the checkout
 * at `root`, running that checkout's benchmark graphs when asked.
 *
 *   (forked) clusterAbSide.ts ROOT SATURATION SCALE [EXECUTOR]
 *
 * Messages (pairedSides.ts): it sends `{ op: "ready" }` once its cluster runs (or
 * `{ op: "failed", error }`); to `{ op: "run", id, name, prefix }` it runs the graph
 * `name` and answers `{ id, seconds }` after checking the answer and letting the
 * run's releases settle (or `{ id, error }`); `{ op: "close" }` closes the cluster and
 * exits.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
// Types only: the graphs come from the checkout under test. Importing this checkout's
// graphs would define its task functions too, in the process-wide task registry where
// the other checkout's task module defines the same names.
import type { BenchGraph, scaledGraph } from "../src/bench/clusterGraphs.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import type { SideReply, SideRequest } from "./pairedSides.ts";

interface Cluster {
  client(): Promise<unknown>;
  close(): Promise<void>;
  readonly scheduler: { readonly state: { readonly tasks: { readonly size: number } } };
}

/**
 * The files a checkout must have to take part. The graphs and their tasks are in
 * `src/bench/` since `weft bench` came, in `bench/` in older checkouts.
 */
export function checkoutFiles(root: string): { cluster: string; graphs: string; tasks: string } {
  const dir = existsSync(join(root, "src/bench/clusterGraphs.ts")) ? "src/bench" : "bench";
  return {
    cluster: join(root, "src/client/localCluster.ts"),
    graphs: join(root, dir, "clusterGraphs.ts"),
    tasks: join(root, dir, "clusterTasks.ts"),
  };
}

/** Why `root` cannot take part, or null. */
export function checkoutProblem(root: string): string | null {
  for (const f of Object.values(checkoutFiles(root))) {
    if (!existsSync(f)) return `${root} is not a weft checkout: ${f} is missing`;
  }
  return null;
}

function send(reply: SideReply): void {
  process.send?.(reply);
}

async function serve(
  root: string,
  saturation: number,
  scale: number,
  executor: string,
): Promise<void> {
  const problem = checkoutProblem(root);
  if (problem !== null) throw new Error(problem);
  const files = checkoutFiles(root);
  const { LocalCluster } = (await import(pathToFileURL(files.cluster).href)) as {
    LocalCluster: { start(o: Record<string, unknown>): Promise<Cluster> };
  };
  const graphFunctions = (await import(pathToFileURL(files.graphs).href)) as Record<
    string,
    unknown
  >;
  if (typeof graphFunctions.scaledGraph !== "function") {
    throw new Error(
      `${root}: bench/clusterGraphs.ts exports no scaledGraph (too old for bench:cluster-ab)`,
    );
  }
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor,
    protocol: "inproc",
    taskModules: [pathToFileURL(files.tasks).href],
    scheduler: { state: { workerSaturation: saturation } },
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  const client = await cluster.client();
  const graphs = new Map<string, BenchGraph>();
  const graphNamed = (name: string): BenchGraph => {
    let g = graphs.get(name);
    if (g === undefined) {
      g = (graphFunctions.scaledGraph as typeof scaledGraph)(name, scale);
      graphs.set(name, g);
    }
    return g;
  };
  process.on("message", (req: SideRequest) => {
    if (req.op === "close") {
      void cluster.close().finally(() => process.exit(0));
      return;
    }
    void (async () => {
      try {
        const graph = graphNamed(req.name);
        const t0 = performance.now();
        const answer = await graph.run(client as never, req.prefix);
        const seconds = (performance.now() - t0) / 1000;
        const wrong = graph.check(answer);
        if (wrong !== null) throw new Error(`wrong answer: ${wrong}`);
        while (cluster.scheduler.state.tasks.size > 0) await sleep(1);
        send({ id: req.id, seconds });
      } catch (err) {
        send({ id: req.id, error: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  send({ op: "ready" });
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  const [root, saturation, scale, executor = "inline"] = process.argv.slice(2);
  serve(root, Number(saturation), Number(scale), executor).catch((err: unknown) => {
    send({ op: "failed", error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
}
