/**
 * The records of the keys a client holds futures of, counted by reference:
 * a key's record lives while a future of it does, and the keys whose last
 * future went are released together, once per turn (or before the next
 * message that must follow their release). Apart from the client: reference
 * counting and the batching of releases are one concern, needing of the
 * client only whether it is closed and its connection (see {@link RecordsHost}).
 */

import type { ClientReleasesKeysMsg } from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { ClientClosedError } from "./errors.ts";
import { KeyRecord } from "./keyRecord.ts";

/** What {@link KeyRecords} needs of its client. */
export interface RecordsHost {
  /** The client's id, in its messages. */
  readonly id: string;
  /** Why the client closed (or lost its scheduler); null while it is open. */
  closedError(): Error | null;
  /** Send `msg` to the scheduler. */
  send(msg: ClientReleasesKeysMsg): void;
  /** Keep the process alive while a record's change is waited for (see `KeyRecord`). */
  holdLoop?: () => () => void;
}

/** A client's records of keys, by key, and the releases of those no future refers to. */
export class KeyRecords {
  private readonly records = new Map<string, KeyRecord>();
  /** Keys whose last future went, to be released at the next {@link flushReleases}. */
  private toRelease: string[] = [];
  private releaseScheduled = false;
  /** How many `client-releases-keys` were sent: a release racing a request shows as a change. */
  releasesSent = 0;

  constructor(private readonly host: RecordsHost) {}

  /** The record of `key`, if a future of it is held. */
  get(key: string): KeyRecord | undefined {
    return this.records.get(key);
  }

  /** The number of keys held. */
  get size(): number {
    return this.records.size;
  }

  /** Every record held. */
  values(): IterableIterator<KeyRecord> {
    return this.records.values();
  }

  /** The record of `key`, made if none is held (failed at once if the client is closed), one reference more. */
  addRef(key: string): KeyRecord {
    let rec = this.records.get(key);
    if (rec === undefined) {
      rec = new KeyRecord(key, this.host.holdLoop ?? null);
      const closed = this.host.closedError();
      if (closed !== null) rec.fail("lost", closed);
      this.records.set(key, rec);
    }
    rec.refs++;
    return rec;
  }

  /** One reference fewer to `key`: released, with others, at the end of the turn if that was the last. */
  dropRef(key: string): void {
    const rec = this.records.get(key);
    if (rec === undefined || rec.refs === 0) return;
    rec.refs--;
    if (rec.refs > 0 || this.host.closedError() !== null) return;
    this.toRelease.push(key);
    if (!this.releaseScheduled) {
      this.releaseScheduled = true;
      queueMicrotask(() => this.flushReleases());
    }
  }

  /** Tell the scheduler about the keys no future refers to any more. */
  flushReleases(): void {
    this.releaseScheduled = false;
    if (this.toRelease.length === 0) return;
    const keys: string[] = [];
    let released: Error | null = null;
    for (const key of this.toRelease) {
      const rec = this.records.get(key);
      if (rec === undefined || rec.refs > 0) continue;
      this.records.delete(key);
      released ??= new ClientClosedError("the last future of the key was released");
      rec.fail("lost", released);
      keys.push(key);
    }
    this.toRelease = [];
    if (keys.length === 0 || this.host.closedError() !== null) return;
    this.releasesSent++;
    this.host.send({
      op: "client-releases-keys",
      keys,
      clientId: this.host.id,
      stimulusId: newStimulusId("client-releases-keys"),
    });
  }
}
