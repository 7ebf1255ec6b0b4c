/** The whole dump, `{scheduler, workers, versions}`: {@link ClusterDump} and its building. */

import type { DumpEncoding } from "./encoding.ts";
import { type Ctx, child, DumpFormatError, describe } from "./errors.ts";
import { normalizeTree } from "./normalize.ts";
import { buildScheduler, type SchedulerDump } from "./schedulerDump.ts";
import type { DumpObject } from "./values.ts";
import { isDumpObject } from "./values.ts";
import { buildVersions, type DumpVersions, otherVersionNote } from "./versions.ts";
import { buildWorker, type WorkerDump } from "./workerDump.ts";

/** A loaded cluster dump. */
export interface ClusterDump {
  /** The file it was read from (or the label given to {@link parseClusterDump}). */
  readonly file: string;
  /** The file's encoding. */
  readonly encoding: DumpEncoding;
  /** The scheduler. */
  readonly scheduler: SchedulerDump;
  /** The workers that answered, by address, in dump order. */
  readonly workers: ReadonlyMap<string, WorkerDump>;
  /** Workers whose entry is not a dict (the repr of the error the dump got from them). */
  readonly unavailableWorkers: ReadonlyMap<string, string>;
  /** Package versions. */
  readonly versions: DumpVersions;
  /** The whole normalized dump. */
  readonly raw: DumpObject;
}

export function buildDump(decoded: unknown, ctx: Ctx, encoding: DumpEncoding): ClusterDump {
  const root = normalizeTree(decoded, null, ctx);
  if (!isDumpObject(root)) {
    ctx.fail(
      null,
      `not a cluster dump: expected a mapping with "scheduler", "workers" and "versions" at the top level, got ${describe(root)}`,
    );
  }
  const missing = ["scheduler", "workers", "versions"].filter((k) => !Object.hasOwn(root, k));
  if (missing.length > 0) {
    const found = Object.keys(root)
      .slice(0, 5)
      .map((k) => JSON.stringify(k))
      .join(", ");
    ctx.fail(
      null,
      `not a cluster dump: no ${missing.map((k) => JSON.stringify(k)).join(", ")} at the top level (found ${found || "nothing"})`,
    );
  }
  // Read first: a field another release of Dask lays out otherwise is refused
  // below, and the error then says which release wrote the dump.
  const versions = buildVersions(ctx.object(root.versions, child(null, "versions")), ctx);
  try {
    return buildParts(root, versions, ctx, encoding);
  } catch (e) {
    const note = otherVersionNote(versions.distributed);
    if (!(e instanceof DumpFormatError) || note === null) throw e;
    throw new DumpFormatError(e.file, e.path, `${e.reason} (${note})`, { cause: e.cause });
  }
}

function buildParts(
  root: DumpObject,
  versions: DumpVersions,
  ctx: Ctx,
  encoding: DumpEncoding,
): ClusterDump {
  const scheduler = buildScheduler(ctx.object(root.scheduler, child(null, "scheduler")), ctx);
  const workersPath = child(null, "workers");
  const workers = new Map<string, WorkerDump>();
  const unavailableWorkers = new Map<string, string>();
  for (const [address, w] of Object.entries(ctx.object(root.workers, workersPath))) {
    const p = child(workersPath, address);
    if (typeof w === "string") {
      unavailableWorkers.set(address, w);
      continue;
    }
    workers.set(
      address,
      buildWorker(address, ctx.object(w, p), p, scheduler.workers.get(address), ctx),
    );
  }
  return { file: ctx.file, encoding, scheduler, workers, unavailableWorkers, versions, raw: root };
}
