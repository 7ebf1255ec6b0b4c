/** The package versions recorded in the dump. */

import { type Ctx, child } from "./errors.ts";
import type { DumpObject } from "./values.ts";
import { isDumpObject } from "./values.ts";

/** The dask/distributed release whose dumps the loader reads and whose worker weft ports. */
export const DISTRIBUTED_VERSION = "2023.7.0";

/**
 * Why a dump may not read or replay as one of {@link DISTRIBUTED_VERSION}'s: null for
 * that release or for a dump that names none (weft's own).
 */
export function otherVersionNote(distributed: string | null): string | null {
  if (distributed === null || distributed === DISTRIBUTED_VERSION) return null;
  // Quoted unless a plain version: the text goes to a terminal.
  const v = /^[\w.+-]+$/.test(distributed) ? distributed : JSON.stringify(distributed);
  return `the dump was written by distributed ${v}; weft reads the dumps of ${DISTRIBUTED_VERSION}, whose worker it ports`;
}

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
