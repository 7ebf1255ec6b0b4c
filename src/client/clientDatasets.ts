/**
 * The client's side of published datasets: publishing one, getting one (with
 * futures of this client made for its keys as the answer arrives, before the
 * scheduler's news of them), unpublishing one, and the datasets that hold the
 * futures of variables and queues (`HeldDatasets`). Apart from the client:
 * these requests and the futures they make are one concern, and need of the
 * client only its requests, its records and a new submission number (see
 * {@link DatasetHost}); how a dataset is encoded is `datasets.ts`'s.
 */

import type {
  ClientDesiresKeysMsg,
  ClientReleasesKeysMsg,
  DatasetMsg,
} from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import type { HeldDatasets } from "./coordination.ts";
import { checkDatasetName, decodeDataset, encodeDataset } from "./datasets.ts";
import { DatasetError } from "./errors.ts";
import { Future, type FutureHost } from "./future.ts";
import type { KeyRecord } from "./keyRecord.ts";
import type { ReceivedDataset, Requests } from "./requests.ts";

/** What {@link ClientDatasets} needs of its client. */
export interface DatasetHost {
  /** The client's id, in its requests. */
  readonly id: string;
  /** The client as its futures' host: a dataset got has futures of it. */
  readonly futureHost: FutureHost;
  /** The client's requests answered under their stimulus id. */
  readonly requests: Pick<Requests, "ask" | "stimulusId" | "answer" | "fail">;
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** How many `client-releases-keys` the client sent so far. */
  releasesSent(): number;
  /** The number of a new submission (a dataset asked for counts as one). */
  nextSubmission(): number;
  /** Send `msg` to the scheduler. */
  send(msg: ClientReleasesKeysMsg | ClientDesiresKeysMsg): void;
  /** Throws once the client is closed. */
  checkOpen(): void;
}

/** Publishes, gets and unpublishes datasets for a client. */
export class ClientDatasets {
  /**
   * The held datasets this client is to let go of if it closes first: published
   * for a value whose set or put is not sent yet, or handed back by a variable or
   * queue and not unpublished yet. Nothing else would let them go: they would
   * hold their keys on the cluster for good, hidden from `listDatasets`.
   */
  private readonly owed = new Set<string>();

  /** Where variables and queues keep values with futures (see `coordination.ts`). */
  readonly held: HeldDatasets = {
    publish: (what, name, value) => {
      this.host.checkOpen();
      this.owed.add(name);
      return this.publish(what, name, value, false).catch((err: unknown) => {
        // Refused (or the client closed, which let it go): nothing to let go.
        this.owed.delete(name);
        throw err;
      });
    },
    get: async (name) => {
      this.host.checkOpen();
      const answer = await this.get(name);
      return answer.found ? { value: answer.value } : null;
    },
    unpublish: async (name) => {
      // As `Client.unpublishDataset`.
      this.host.checkOpen();
      checkDatasetName("unpublishDataset", name);
      const sent = this.unpublish(name);
      this.owed.delete(name);
      await sent;
    },
    disown: (name) => {
      this.owed.delete(name);
    },
    owe: (name) => {
      this.owed.add(name);
    },
  };

  /**
   * The client is closing, its connection still open: let go of the held
   * datasets it owes (see {@link owed}), before it says goodbye.
   */
  letGoOwed(): void {
    for (const name of this.owed) void this.unpublish(name).catch(() => undefined);
    this.owed.clear();
  }

  constructor(private readonly host: DatasetHost) {}

  /**
   * Publish `value` under `name`; errors name `what`. Its futures must be
   * the client's, and not released.
   */
  async publish(what: string, name: string, value: unknown, override: boolean): Promise<void> {
    const { keys, data } = encodeDataset(
      value,
      (f) => {
        if (f.host !== this.host.futureHost) {
          throw new TypeError(`${what}: the future of ${f.key} is of another client`);
        }
        if (f.status === "released") {
          throw new TypeError(`${what}: the future of ${f.key} was released`);
        }
      },
      what,
    );
    const answer = await this.host.requests.ask({
      op: "publish-dataset",
      name,
      keys,
      data,
      ...(override ? { override: true } : {}),
      clientId: this.host.id,
      stimulusId: this.host.requests.stimulusId("publish-dataset"),
    });
    if (answer.error !== null) throw new DatasetError(`${what}: ${answer.error}`);
  }

  /** The dataset published under `name`, if there is one, with futures of the client. */
  async get(name: string): Promise<ReceivedDataset> {
    const releasesBefore = this.host.releasesSent();
    const submission = this.host.nextSubmission();
    const answer = await this.host.requests.ask({
      op: "get-dataset",
      name,
      clientId: this.host.id,
      stimulusId: this.host.requests.stimulusId("get-dataset"),
      submission,
    });
    const fresh = answer.fresh ?? [];
    if (fresh.length > 0 && this.host.releasesSent() !== releasesBefore) {
      // A release sent after the request may have let go of keys the answer made
      // futures of anew (the scheduler got the request first): want them again
      // (unknown ones are answered with cancelled-keys), as Dask's futures do
      // when unpickled.
      this.host.send({
        op: "client-desires-keys",
        keys: fresh,
        clientId: this.host.id,
        stimulusId: newStimulusId("client-desires-keys"),
        submission,
      });
    }
    return answer;
  }

  /** Forget the dataset `name`: whether there was one. */
  async unpublish(name: string): Promise<boolean> {
    const answer = await this.host.requests.ask({
      op: "unpublish-dataset",
      name,
      clientId: this.host.id,
      stimulusId: this.host.requests.stimulusId("unpublish-dataset"),
    });
    return answer.existed;
  }

  /**
   * A dataset arrived: make this client's futures of its keys now, before the
   * scheduler's news of them (which follows the answer) is handled, and hand
   * them to the request waiting (or let them go if none is).
   */
  receive(msg: DatasetMsg): void {
    const requests = this.host.requests;
    if (!msg.found) {
      requests.answer(msg.stimulusId, { op: "dataset", found: false, value: undefined });
      return;
    }
    const fresh = msg.keys.filter((key) => this.host.record(key) === undefined);
    let got: { value: unknown; futures: Future[] };
    try {
      got = decodeDataset(msg.name, msg.data, (key) => this.datasetFuture(key, msg.submission));
    } catch (err) {
      requests.fail(msg.stimulusId, err as Error);
      this.letGo(msg.keys);
      return;
    }
    if (!requests.answer(msg.stimulusId, { op: "dataset", found: true, value: got.value, fresh })) {
      for (const f of got.futures) f.release();
    }
  }

  /**
   * A dataset found did not reach this client (it could not be decoded, or the
   * scheduler could not send it: `answer-unsent`), but the scheduler has it
   * want `keys`: let go of those it holds no future of.
   */
  letGo(keys: readonly string[]): void {
    const unheld = keys.filter(
      (key) => typeof key === "string" && this.host.record(key) === undefined,
    );
    if (unheld.length === 0) return;
    this.host.send({
      op: "client-releases-keys",
      keys: unheld,
      clientId: this.host.id,
      stimulusId: newStimulusId("client-releases-keys"),
    });
  }

  /** A future of `key`, got in a dataset asked for in `submission`. */
  private datasetFuture(key: string, submission: number | undefined): Future {
    const known = this.host.record(key);
    // A key this client had cancelled is wanted anew: the scheduler's news of it follows.
    if (known !== undefined && (known.status === "cancelled" || known.unsent)) known.reset();
    const f = new Future(this.host.futureHost, key);
    if (submission !== undefined) (this.host.record(key) as KeyRecord).submission = submission;
    return f;
  }
}
