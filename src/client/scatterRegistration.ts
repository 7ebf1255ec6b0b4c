/**
 * A client's scatters from start to end: the values put on workers (by the
 * `Scatterer`), their futures made and the scheduler told of them
 * (`update-data`), the values whose workers all left before it heard of them
 * scattered again, and what a failed scatter stored registered and let go at
 * once. Also what `close` waits for: the scatters in progress, whose values
 * would otherwise stay on workers unknown to the scheduler. Apart from the
 * client: one concern spanning several messages, needing of the client only
 * its requests, records and connection (see {@link ScattersHost}).
 */

import type {
  ClientReleasesKeysMsg,
  ScatteredKey,
  UpdateDataMsg,
} from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { ScatterError } from "./errors.ts";
import { Future, type FutureHost } from "./future.ts";
import type { KeyRecord } from "./keyRecord.ts";
import type { Requests } from "./requests.ts";
import { Scatterer, type ScatterHost, type ScatterOptions } from "./scatter.ts";
import type { Submissions } from "./submissions.ts";

/** What {@link Scatters} needs of its client. */
export interface ScattersHost extends Omit<ScatterHost, "dropStored"> {
  /** The client as its futures' host. */
  readonly futureHost: FutureHost;
  /** The client's requests answered under their stimulus id. */
  readonly requests: Pick<Requests, "ask" | "stimulusId">;
  /** The client's submissions: scattered keys are the client's from the last on. */
  readonly submissions: Pick<Submissions, "last">;
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** Throws once the client is closed. */
  checkOpen(): void;
  /** Why the client closed (or lost its scheduler); null while it is open. */
  closedError(): Error | null;
  /** Send `msg` to the scheduler. */
  send(msg: UpdateDataMsg | ClientReleasesKeysMsg): void;
}

/** A client's scatters, and those in progress. */
export class Scatters {
  private readonly scatterer: Scatterer;
  /** Scatters placing values on workers, not yet registered with the scheduler. */
  private readonly placing = new Set<Promise<unknown>>();

  constructor(private readonly host: ScattersHost) {
    this.scatterer = new Scatterer({
      id: host.id,
      peers: host.peers,
      workers: () => host.workers(),
      dropStored: (stored) => this.dropStored(stored),
      inProcess: host.inProcess,
      timeoutMs: host.timeoutMs,
    });
  }

  /**
   * Scatter `list` and register it. Values whose workers all left before the
   * scheduler heard of them are scattered again (under new keys) until
   * `timeoutMs` has passed.
   */
  async scatter(list: readonly unknown[], options: ScatterOptions): Promise<Future[]> {
    const timeoutMs = options.timeoutMs ?? this.host.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const futures: Future[] = new Array(list.length);
    let todo = list.map((_, i) => i);
    try {
      for (;;) {
        // The whole scatter waits timeoutMs, retries included; errors say so.
        const placing = this.scatterer.place(
          todo.map((i) => list[i]),
          { ...options, timeoutMs },
          todo,
          deadline,
        );
        // close() waits for it: the update-data below, or the release of what a
        // failed placement stored, then reaches the scheduler before close-client.
        this.placing.add(placing);
        const placed = await placing.finally(() => this.placing.delete(placing));
        this.host.checkOpen();
        // Held before the scheduler hears of them: its key-in-memory finishes them.
        const fresh = placed.map((p) => new Future(this.host.futureHost, p.key));
        for (const f of fresh)
          (this.host.record(f.key) as KeyRecord).submission = this.host.submissions.last;
        const answered = this.host.requests.ask({
          op: "update-data",
          keys: placed,
          clientId: this.host.id,
          stimulusId: this.host.requests.stimulusId("update-data"),
        });
        const answer = await answered.catch((err: unknown) => {
          for (const f of fresh) f.release();
          throw err;
        });
        const rejected = new Map(answer.rejected.map((r) => [r.key, r]));
        const again: number[] = [];
        let fatal: { index: number; key: string; reason: string } | null = null;
        for (let j = 0; j < todo.length; j++) {
          const r = rejected.get(placed[j].key);
          if (r === undefined) {
            futures[todo[j]] = fresh[j];
            continue;
          }
          fresh[j].release();
          if (r.workersGone && Date.now() < deadline) again.push(todo[j]);
          else fatal ??= { index: todo[j], key: r.key, reason: r.reason };
        }
        if (fatal !== null) {
          const more =
            answer.rejected.length > 1 ? ` (and ${answer.rejected.length - 1} more)` : "";
          throw new ScatterError(
            `scatter: the scheduler rejected value ${fatal.index} (${fatal.key}): ${fatal.reason}${more}`,
          );
        }
        if (again.length === 0) return futures;
        todo = again;
      }
    } catch (err) {
      for (const f of futures) f?.release();
      throw err;
    }
  }

  /** True while a scatter is placing values not yet registered with the scheduler. */
  get inProgress(): boolean {
    return this.placing.size > 0;
  }

  /**
   * Stop the scatters in progress with `error`, and wait until each has
   * registered or let go what it stored (at most the client's `timeoutMs`),
   * while the connection is still open.
   */
  async stop(error: Error): Promise<void> {
    this.scatterer.abort(error);
    const settled = Promise.allSettled([...this.placing]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.host.timeoutMs);
    });
    await Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
  }

  /** Values a failed scatter had put on workers: register them and let them go at once. */
  private dropStored(stored: readonly ScatteredKey[]): void {
    if (stored.length === 0 || this.host.closedError() !== null) return;
    this.host.send({
      op: "update-data",
      keys: stored,
      clientId: this.host.id,
      stimulusId: newStimulusId("update-data"),
    });
    this.host.send({
      op: "client-releases-keys",
      keys: stored.map((s) => s.key),
      clientId: this.host.id,
      stimulusId: newStimulusId("client-releases-keys"),
    });
  }
}
