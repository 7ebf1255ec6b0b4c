/**
 * What a `scatter` run records about its scattered keys, so that the checks
 * can tell a legitimate loss of scattered data from a lost key.
 *
 * Scattered data cannot be computed again: when the scheduler loses its last
 * holder, the key is forgotten and the clients wanting it (and the tasks
 * needing it) are cancelled. The ledger follows each scattered key through
 * the run on its own, from what the machines were told rather than from the
 * scheduler's bookkeeping: the workers the scheduler was told hold it (those
 * connected when `update-data` arrived, and those whose `add-keys` for it it
 * took), less those that said they dropped it (`release-worker-data`) or
 * that the scheduler told to drop it (`remove-replicas`, as `replicate` trims
 * copies). After
 * every scheduler stimulus it checks each registered key: still in memory, or
 * forgotten either because the client gave it up, or in a `remove-worker`
 * that took the last such holder. Anything else (forgotten while a connected
 * worker it was told of holds it, or in another stimulus, or left in a state
 * other than memory) fails the run as `lost` at once. It also checks the
 * scheduler's answer to `update-data`: a key is registered exactly when one of
 * its workers is connected.
 */

import type { SchedulerMessage } from "../protocol/messages.ts";
import type { UpdateDataMsg } from "../protocol/messagesClient.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import { itemsOf } from "../scheduler/state/sets.ts";
import { SimFailure } from "./failure.ts";
import { describeStimulus } from "./simScheduler.ts";
import type { SimWorker } from "./simWorker.ts";
import type { ScatterCount } from "./stats.ts";
import type { Workload } from "./workload.ts";

/** What became of a scattered key. */
export type ScatterFate =
  /** The client is putting it on workers, or has not heard back from the scheduler. */
  | "scattering"
  /** The scheduler has it in memory. */
  | "registered"
  /** No worker stored it: the scheduler was never told of it. */
  | "dropped"
  /** The scheduler rejected it in `data-updated` (none of its workers was connected). */
  | "rejected"
  /** The scheduler lost it with its last holder (checked against the run). */
  | "lost"
  /** The client released or cancelled it, and the scheduler then forgot it. */
  | "disowned";

/** One scattered key of the run. */
export interface ScatterRecord {
  /** The key scattered. */
  readonly key: string;
  /** Its index in the workload. */
  readonly index: number;
  /** What became of it. */
  fate: ScatterFate;
  /** How it came to its fate, for reports. */
  why: string;
  /** Workers the scheduler was told hold it, and that have not said they dropped it. */
  readonly told: Set<string>;
}

/** The fates after which a scattered key is gone for good. */
const GONE: ReadonlySet<ScatterFate> = new Set(["dropped", "rejected", "lost", "disowned"]);

/** Scheduler states in which a task still waits to run. */
const NOT_DONE: ReadonlySet<string> = new Set(["waiting", "processing", "queued", "no-worker"]);

/** The scattered keys of a run and what became of them. */
export class ScatterLedger {
  /** Every scattered key, by key. */
  readonly records = new Map<string, ScatterRecord>();
  /** Keys the client released or asked to cancel: their end is no loss. */
  private readonly disowned = new Set<string>();
  /** Registered keys not gone yet: checked after each scheduler stimulus. */
  private readonly live = new Set<ScatterRecord>();
  /** The client closed: everything goes, nothing more is checked. */
  private closed = false;

  constructor(
    workload: Workload,
    private readonly counts: Record<ScatterCount, number>,
    private readonly scheduler: SchedulerState,
    private readonly worker: (address: string) => SimWorker | undefined,
  ) {
    workload.tasks.forEach((t, index) => {
      if (t.scattered === true) {
        this.records.set(t.key, {
          key: t.key,
          index,
          fate: "scattering",
          why: "",
          told: new Set(),
        });
      }
    });
  }

  /** True once `key`'s scattered value is gone for good (never registered, or lost). */
  gone(key: string): boolean {
    const rec = this.records.get(key);
    return rec !== undefined && GONE.has(rec.fate);
  }

  /** No worker stored `key`: the client leaves it out of `update-data`. */
  dropped(key: string, why: string): void {
    const rec = this.records.get(key);
    if (rec === undefined || rec.fate !== "scattering") return;
    rec.fate = "dropped";
    rec.why = why;
    this.counts.dropped++;
  }

  /** The client releases or cancels `key`: the scheduler may forget it. */
  disown(key: string): void {
    if (this.records.has(key)) this.disowned.add(key);
  }

  /** The client closes: from now on every key goes. */
  close(): void {
    this.closed = true;
  }

  /**
   * The client's `data-updated` arrived for `sent`: the keys it rejects must be
   * those the ledger saw the scheduler reject.
   */
  dataUpdated(sent: readonly string[], rejected: readonly { key: string; reason: string }[]): void {
    const no = new Set<string>();
    for (const { key, reason } of rejected) {
      const rec = this.records.get(key);
      if (rec?.fate !== "rejected") {
        throw new SimFailure(
          "lost",
          `the scheduler rejected scattered key ${key} (${reason}), though it registered it (${rec?.fate ?? "unknown key"})`,
        );
      }
      no.add(key);
      this.counts.rejected++;
    }
    for (const key of sent) {
      if (!no.has(key) && this.records.get(key)?.fate === "rejected") {
        throw new SimFailure(
          "lost",
          `the scheduler's data-updated does not reject scattered key ${key}, which it did not register`,
        );
      }
    }
  }

  /** Worker `w` dies (or exits): count the scattered values it takes with it while needed. */
  workerDied(w: SimWorker): void {
    if (this.closed || this.live.size === 0) return;
    for (const rec of this.live) {
      if (!w.state.data.has(rec.key)) continue;
      const ts = this.scheduler.tasks.get(rec.key);
      if (ts === undefined) continue;
      if (itemsOf(ts.dependents).some((d) => NOT_DONE.has(d.state))) {
        this.counts.holderDiedWhileNeeded++;
      }
    }
  }

  /** The scheduler handled `ev` (and passed its validation): follow and check the scattered keys. */
  afterSchedulerStimulus(ev: SchedulerEvent, out: readonly SchedulerMessage[]): void {
    if (this.closed) return;
    const s = this.scheduler;
    if (ev.kind === "client-message") {
      if (ev.msg.op === "update-data") this.updateDataHandled(ev.msg);
    } else if (ev.kind === "worker-message") {
      const msg = ev.msg;
      if (msg.op === "add-keys" && s.workers.has(ev.worker)) {
        for (const key of msg.keys) {
          const rec = this.records.get(key);
          if (rec !== undefined && this.live.has(rec) && s.tasks.get(key)?.state === "memory") {
            rec.told.add(ev.worker);
          }
        }
      } else if (msg.op === "release-worker-data") {
        this.records.get(msg.key)?.told.delete(ev.worker);
      }
    }
    for (const { to, msg } of out) {
      if (to.kind !== "worker" || msg.op !== "remove-replicas") continue;
      for (const key of msg.keys) this.records.get(key)?.told.delete(to.address);
    }
    for (const rec of this.live) {
      const ts = s.tasks.get(rec.key);
      if (ts?.state === "memory") continue;
      if (ts !== undefined) {
        throw new SimFailure(
          "lost",
          `scattered key ${rec.key} is ${ts.state} at the scheduler after ${describeStimulus(ev)}: scattered data is in memory or forgotten`,
        );
      }
      this.live.delete(rec);
      const connected = [...rec.told].filter((a) => s.workers.has(a));
      const lostWithHolder = ev.kind === "remove-worker" && connected.length === 0;
      // Lost with its last holder while the client's release or cancel was on its way: the
      // scheduler tells the client it is lost (SCATTERED_DATA_LOST), and it is.
      if (this.disowned.has(rec.key) && !lostWithHolder) {
        rec.fate = "disowned";
        rec.why = `the client gave it up; forgotten after ${describeStimulus(ev)}`;
        continue;
      }
      if (!lostWithHolder) {
        throw new SimFailure(
          "lost",
          `the scheduler forgot scattered key ${rec.key} after ${describeStimulus(ev)}, ` +
            (connected.length > 0
              ? `though it was told that ${connected.join(", ")}, still connected, hold${connected.length === 1 ? "s" : ""} it`
              : "which took none of its holders"),
        );
      }
      rec.fate = "lost";
      rec.why = `its last holder ${ev.worker} was removed (${ev.stimulusId})`;
      this.counts.lost++;
    }
  }

  /** The scheduler handled `update-data`: each key is registered iff one of its workers is connected. */
  private updateDataHandled(msg: UpdateDataMsg): void {
    const s = this.scheduler;
    for (const entry of msg.keys) {
      const rec = this.records.get(entry.key);
      if (rec === undefined || rec.fate !== "scattering") continue;
      const connected = entry.workers.filter((a) => s.workers.has(a));
      if (connected.some((a) => this.worker(a)?.alive !== true)) this.counts.departedHolder++;
      if (connected.length < entry.workers.length) this.counts.removedHolder++;
      const ts = s.tasks.get(entry.key);
      if (connected.length === 0) {
        if (ts !== undefined) {
          throw new SimFailure(
            "lost",
            `the scheduler registered scattered key ${entry.key} (${ts.state}) though none of its workers (${entry.workers.join(", ")}) is connected`,
          );
        }
        rec.fate = "rejected";
        rec.why = `none of ${entry.workers.join(", ")} was connected when update-data arrived`;
        continue;
      }
      const holders = ts === undefined ? [] : [...ts.whoHas].map((ws) => ws.address).sort();
      if (
        ts === undefined ||
        ts.state !== "memory" ||
        ts.runSpec !== null ||
        holders.join() !== [...connected].sort().join()
      ) {
        throw new SimFailure(
          "lost",
          `update-data put scattered key ${entry.key} on ${connected.join(", ")} (connected); ` +
            `the scheduler has it ${ts === undefined ? "nowhere" : `${ts.state} on [${holders.join(", ")}]`}`,
        );
      }
      rec.fate = "registered";
      rec.why = `registered on ${connected.join(", ")}`;
      for (const a of connected) rec.told.add(a);
      this.live.add(rec);
    }
  }
}
