/**
 * Deliberately broken clusters, built from {@link SimHooks} alone (the cores
 * are untouched), to prove that the simulator catches each kind of bug and
 * reports it with a seed that reproduces it.
 */

import type { SimHooks } from "./hooks.ts";

/** A broken variant: its name, what is broken, and how the simulator should notice. */
export interface Variant {
  /** The variant's name (`--variant`). */
  readonly name: string;
  /** What is broken, in words. */
  readonly description: string;
  /** Fresh hooks for one run (they keep per-run state in their closure). */
  readonly hooks: () => SimHooks;
}

/** Every broken variant, by name. */
export const VARIANTS: readonly Variant[] = [
  {
    name: "forget-lost-keys",
    description:
      "the scheduler forgets to recompute keys held only by a dead worker (their compute-task is never sent)",
    hooks: () => {
      const lost = new Set<string>();
      return {
        schedulerStimulus(ctx, ev) {
          if (ev.kind === "remove-worker") {
            const ws = ctx.scheduler.workers.get(ev.worker);
            if (ws !== undefined) {
              for (const ts of ws.hasWhat) if (ts.whoHas.size === 1) lost.add(ts.key);
            }
          }
          return ev;
        },
        schedulerMessage(_ctx, m) {
          const msg = m.msg;
          return msg.op === "compute-task" && lost.has(msg.key) ? null : m;
        },
      };
    },
  },
  {
    name: "drop-gather-completion",
    description: "a worker shell drops the first completed gather that brought data",
    hooks: () => {
      let dropped = false;
      return {
        workerEvent(_ctx, _worker, ev) {
          if (!dropped && ev.cls === "GatherDepSuccessEvent" && ev.data.size > 0) {
            dropped = true;
            return null;
          }
          return ev;
        },
      };
    },
  },
  {
    name: "drop-task-finished",
    description: "the first task-finished message never reaches the scheduler",
    hooks: () => {
      let dropped = false;
      return {
        schedulerStimulus(_ctx, ev) {
          if (!dropped && ev.kind === "worker-message" && ev.msg.op === "task-finished") {
            dropped = true;
            return null;
          }
          return ev;
        },
      };
    },
  },
  {
    name: "wrong-value",
    description: "the first task to finish computes a wrong value",
    hooks: () => {
      let done = false;
      return {
        taskValue(_ctx, _key, correct) {
          if (done) return correct;
          done = true;
          return (correct + 1) >>> 0;
        },
      };
    },
  },
  {
    name: "ignore-worker-death",
    description: "the scheduler never removes a worker that stopped heartbeating",
    hooks: () => ({
      schedulerStimulus(_ctx, ev) {
        return ev.kind === "remove-worker" ? null : ev;
      },
    }),
  },
  {
    name: "ignore-fetch-failure",
    description:
      "the scheduler takes a worker's failed fetch of an input for a stale report, as Dask's does (dask/distributed#7060): the tasks there that need it wait forever",
    hooks: () => ({
      schedulerStimulus(_ctx, ev) {
        if (ev.kind !== "worker-message" || ev.msg.op !== "task-erred") return ev;
        const { fetchFailed: _, ...msg } = ev.msg;
        return { ...ev, msg };
      },
    }),
  },
  {
    name: "corrupt-occupancy",
    description:
      "after its 20th stimulus the scheduler counts a task more on one worker than it has, its occupancy half a second more",
    hooks: () => {
      let n = 0;
      return {
        afterScheduler(ctx) {
          if (++n !== 20) return;
          const ws = ctx.scheduler.workers.values().next().value;
          if (ws !== undefined) ws.countsByFn.set("phantom", 1);
        },
      };
    },
  },
];

/** The hooks of the variant `name`; null for "" (the real cluster). Throws for an unknown name. */
export function variantHooks(name: string): SimHooks | null {
  if (name === "") return null;
  const v = VARIANTS.find((x) => x.name === name);
  if (v === undefined) {
    throw new RangeError(
      `unknown variant '${name}'; known: ${VARIANTS.map((x) => x.name).join(", ")}`,
    );
  }
  return v.hooks();
}
