/** The package versions recorded in the dump. */

import { type Ctx, child } from "./errors.ts";
import type { DumpObject } from "./values.ts";
import { isDumpObject } from "./values.ts";

/** The `versions` part of the dump. */
export interface DumpVersions {
  /** `packages.distributed` of the scheduler, or null. */
  readonly distributed: string | null;
  /** `packages.dask` of the scheduler, or null. */
  readonly dask: string | null;
  /** `packages.python` of the scheduler, or null. */
  readonly python: string | null;
  /** The scheduler's `{host, packages}`, or null. */
  readonly scheduler: DumpObject | null;
  /** Each worker's `{host, packages}`. */
  readonly workers: Readonly<Record<string, DumpObject>>;
  /** The whole normalized dict. */
  readonly raw: DumpObject;
}

export function buildVersions(v: DumpObject, ctx: Ctx): DumpVersions {
  const path = child(null, "versions");
  const scheduler =
    v.scheduler === undefined || v.scheduler === null
      ? null
      : ctx.object(v.scheduler, child(path, "scheduler"));
  const workers: Record<string, DumpObject> = {};
  if (v.workers !== undefined && v.workers !== null) {
    const p = child(path, "workers");
    for (const [address, w] of Object.entries(ctx.object(v.workers, p))) {
      if (isDumpObject(w)) workers[address] = w;
    }
  }
  const packages = scheduler && isDumpObject(scheduler.packages) ? scheduler.packages : {};
  const pkg = (name: string): string | null =>
    typeof packages[name] === "string" ? packages[name] : null;
  return {
    distributed: pkg("distributed"),
    dask: pkg("dask"),
    python: pkg("python"),
    scheduler,
    workers,
    raw: v,
  };
}
