/**
 * Published datasets (Dask's `PublishExtension`): named values holding
 * futures, kept by the scheduler for any client to get. Each dataset's keys
 * are wanted by a stand-in client of its own, `published-<name>` as in Dask,
 * so that they live on whoever published them, until the dataset is
 * unpublished.
 */

import type {
  GetDatasetMsg,
  PublishDatasetMsg,
  UnpublishDatasetMsg,
} from "../../protocol/messagesClient.ts";
import { addWant, clientDesiresKeys, clientReleasesKeys } from "./clientHandlers.ts";
import { ClientInfo, DATASET_CLIENT_PREFIX } from "./clientInfo.ts";
import type { SchedulerState } from "./schedulerState.ts";

/** One published dataset. */
export interface Dataset {
  /** The name it was published under. */
  readonly name: string;
  /** The keys of the futures in `data`. */
  readonly keys: readonly string[];
  /** What a client gets back: the publishing client's encoding, opaque here. */
  readonly data: unknown;
  /** The stand-in client wanting `keys`. */
  readonly holder: ClientInfo;
}

/**
 * Publish `msg.data` under `msg.name`, its keys held by the dataset's stand-in
 * client. Refused (in the answer, changing nothing) when a dataset of that
 * name exists and `override` is not set, or when a key is unknown (forgotten,
 * cancelled). Overriding holds the new keys before it lets the old ones go,
 * so that a key in both is not forgotten in between.
 */
export function publishDataset(s: SchedulerState, msg: PublishDatasetMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const answer = (error: string | null): void =>
    s.sendToClient(cs, { op: "dataset-published", error, stimulusId: s.stimulusId });
  const old = s.datasets.get(msg.name);
  if (old !== undefined && msg.override !== true) {
    answer(
      `dataset ${JSON.stringify(msg.name)} already exists (publish with override to replace it)`,
    );
    return;
  }
  const unknown = msg.keys.filter((key) => !s.tasks.has(key));
  if (unknown.length > 0) {
    answer(`unknown keys (released or cancelled): ${unknown.join(", ")}`);
    return;
  }
  const holder = old?.holder ?? new ClientInfo(`${DATASET_CLIENT_PREFIX}${msg.name}`, true);
  s.clients.set(holder.id, holder);
  const keys = [...new Set(msg.keys)];
  for (const key of keys) {
    const ts = s.tasks.get(key);
    if (ts !== undefined && !holder.wantsWhat.has(ts)) addWant(s, holder, ts);
  }
  if (old !== undefined) {
    const kept = new Set(keys);
    clientReleasesKeys(
      s,
      holder,
      old.keys.filter((key) => !kept.has(key)),
    );
  }
  s.datasets.set(msg.name, { name: msg.name, keys, data: msg.data, holder });
  answer(null);
}

/**
 * Answer with the dataset `msg.name` (or that there is none); the client then
 * wants its keys, and hears what is known of them after the answer (so that it
 * has made its futures of them by then).
 */
export function getDataset(s: SchedulerState, msg: GetDatasetMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const ds = s.datasets.get(msg.name);
  s.sendToClient(cs, {
    op: "dataset",
    name: msg.name,
    found: ds !== undefined,
    keys: ds?.keys ?? [],
    data: ds?.data ?? null,
    ...(msg.submission !== undefined ? { submission: msg.submission } : {}),
    stimulusId: s.stimulusId,
  });
  if (ds === undefined) return;
  if (msg.submission !== undefined) cs.lastSubmission = msg.submission;
  clientDesiresKeys(s, cs, ds.keys);
}

/** Forget the dataset `msg.name`: its stand-in client lets its keys go. */
export function unpublishDataset(s: SchedulerState, msg: UnpublishDatasetMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const ds = s.datasets.get(msg.name);
  if (ds !== undefined) {
    s.datasets.delete(msg.name);
    clientReleasesKeys(
      s,
      ds.holder,
      [...ds.holder.wantsWhat].map((ts) => ts.key),
    );
    s.clients.delete(ds.holder.id);
  }
  s.sendToClient(cs, {
    op: "dataset-unpublished",
    existed: ds !== undefined,
    stimulusId: s.stimulusId,
  });
}
