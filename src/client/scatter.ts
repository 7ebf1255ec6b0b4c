/**
 * Scattering: the client puts values on workers itself (Dask's `scatter` with
 * `direct=True`) and tells the scheduler where they are (`update-data`). The
 * values then stand in the cluster as keys in memory that tasks can take as
 * inputs, without being sent with each task.
 *
 * Values are spread over the running workers (weighted by their threads, in
 * turn across calls), or put on every one of them with `broadcast`. A worker
 * that cannot be reached is left out and its share goes to the others. Each
 * value gets a key of its own (`<type>-<uuid>`, Dask's `hash=False`): Dask's
 * default of one key per distinct value would race with the release of an
 * earlier scatter of the same value, whose `free-keys` may reach the worker
 * after the new copy did.
 */

import { randomUUID } from "node:crypto";
import { serialize } from "node:v8";
import { ClonedValue } from "../comm/clonedValue.ts";
import { isNetworkError, SerializationError } from "../comm/errors.ts";
import type { ScatteredKey } from "../protocol/messagesClient.ts";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { getAddressHost } from "../util/address.ts";
import { showValue } from "../util/showValue.ts";
import { typeName } from "../util/sizeof.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { asWireValue } from "../worker/dataServer.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { parseUpdateDataResponse } from "../worker/updateData.ts";
import { ScatterError } from "./errors.ts";

/** Options of `Client.scatter`. */
export interface ScatterOptions {
  /**
   * Put the values on these workers only: addresses (`tcp://10.0.0.1:4000`)
   * or hosts (`10.0.0.1`: any worker there), one or an array, as `workers`
   * of `submitWith`. Default: any running worker.
   */
  readonly workers?: string | readonly string[];
  /** Put every value on every one of those workers, rather than spreading them. Default false. */
  readonly broadcast?: boolean;
}

/** What the scatterer needs of its client. */
export interface ScatterHost {
  readonly id: string;
  readonly peers: PeerPool;
  /** The workers connected to the scheduler. */
  workers(): Promise<WorkerIdentity[]>;
  /** Let go of what a failed scatter had put on workers. */
  dropStored(stored: readonly ScatteredKey[]): void;
  /** True for an in-process scheduler (`inproc://`): messages are not serialised. */
  readonly inProcess: boolean;
}

/** Why `options` are not valid scatter options, or null. */
export function scatterOptionsProblem(options: unknown): string | null {
  if (typeof options !== "object" || options === null) return "options must be an object";
  const { workers, broadcast } = options as Record<string, unknown>;
  const names = typeof workers === "string" ? [workers] : workers;
  if (
    names !== undefined &&
    (!Array.isArray(names) ||
      names.length === 0 ||
      !names.every((w) => typeof w === "string" && w !== ""))
  ) {
    return `workers must be a worker address or host, or a non-empty array of them, got ${showValue(workers)}`;
  }
  if (broadcast !== undefined && typeof broadcast !== "boolean") {
    return `broadcast must be a boolean, got ${showValue(broadcast)}`;
  }
  return null;
}

/** A scatter's values, keyed, and where each went. */
interface Placement {
  readonly keys: readonly string[];
  readonly values: ReadonlyMap<string, unknown>;
  /** key → workers that stored it. */
  readonly stored: Map<string, string[]>;
  /** key → size and type name, from the first worker that stored it. */
  readonly sizes: Map<string, { nbytes: number; typename: string }>;
}

/** Where `placement`'s values were stored, in key order. */
function whereStored(placement: Placement): ScatteredKey[] {
  const out: ScatteredKey[] = [];
  for (const key of placement.keys) {
    const workers = placement.stored.get(key);
    const size = placement.sizes.get(key);
    if (workers !== undefined && size !== undefined) {
      out.push({ key, workers, nbytes: size.nbytes, typename: size.typename });
    }
  }
  return out;
}

/** Puts values on workers and registers them with the scheduler. */
export class Scatterer {
  /** Where the next spread starts in the list of worker slots, so that scatters take turns. */
  private cursor = 0;

  constructor(private readonly host: ScatterHost) {}

  /** Fresh keys for `values`: `<type name>-<uuid>`. */
  keysFor(values: readonly unknown[]): string[] {
    return values.map((v) => `${typeName(v)}-${randomUUID()}`);
  }

  /**
   * Put the `values` under `keys` on workers: resolves with where each went.
   * Rejects with a {@link ScatterError} when no worker could take them, or one
   * refused a value, and with a TypeError for a value that cannot be sent;
   * what had been put on workers by then goes to the host's `dropStored`.
   */
  async place(
    keys: readonly string[],
    values: readonly unknown[],
    options: ScatterOptions,
  ): Promise<ScatteredKey[]> {
    const placement: Placement = {
      keys,
      values: new Map(keys.map((k, i) => [k, this.forTransfer(values[i], i)])),
      stored: new Map(),
      sizes: new Map(),
    };
    const names = typeof options.workers === "string" ? [options.workers] : options.workers;
    let candidates = await this.candidates(names);
    let todo = [...keys];
    const unreachable: string[] = [];
    try {
      while (todo.length > 0) {
        if (candidates.length === 0) {
          throw new ScatterError(
            `scatter: no worker could take the values: ${unreachable.join("; ")}`,
          );
        }
        const plan =
          options.broadcast === true
            ? new Map(candidates.map((w) => [w.address, todo]))
            : this.spread(todo, candidates);
        const failedWorkers = await this.send(plan, placement, unreachable);
        candidates = candidates.filter((w) => !failedWorkers.has(w.address));
        todo =
          options.broadcast === true
            ? todo.filter((k) => !placement.stored.has(k))
            : [...failedWorkers.values()].flat();
      }
    } catch (err) {
      const stored = whereStored(placement);
      if (stored.length > 0) this.host.dropStored(stored);
      throw err;
    }
    return whereStored(placement);
  }

  /**
   * `value` as `update_data` carries it. In process, a structured clone: the
   * workers hold a copy, as over TCP, and a value that cannot travel (a
   * function, a symbol) is refused here as it would be on the wire.
   */
  private forTransfer(value: unknown, index: number): unknown {
    if (!this.host.inProcess) return asWireValue(value);
    try {
      return asWireValue(structuredClone(value));
    } catch (err) {
      throw new TypeError(
        `scatter: value ${index} (${typeName(value)}) cannot be sent to a worker: ${(err as Error).message}`,
      );
    }
  }

  /** The running workers that `names` (addresses or hosts) allow, in address order. */
  private async candidates(names: readonly string[] | undefined): Promise<WorkerIdentity[]> {
    const running = (await this.host.workers()).filter((w) => w.status === "running");
    const allowed =
      names === undefined
        ? running
        : running.filter((w) => names.includes(w.address) || names.includes(hostOf(w.address)));
    if (allowed.length === 0) {
      throw new ScatterError(
        names === undefined
          ? "scatter: no running worker to put the values on (start one, or wait with client.waitForWorkers)"
          : `scatter: none of the workers ${names.join(", ")} is running (running: ${running.map((w) => w.address).join(", ") || "none"})`,
      );
    }
    return allowed.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  /** `keys` dealt to the workers in turn, each worker as many times as it has threads. */
  private spread(
    keys: readonly string[],
    workers: readonly WorkerIdentity[],
  ): Map<string, string[]> {
    const slots: string[] = [];
    for (const w of workers)
      for (let i = 0; i < Math.max(1, w.nthreads); i++) slots.push(w.address);
    const plan = new Map<string, string[]>();
    for (const key of keys) {
      const address = slots[this.cursor++ % slots.length];
      const mine = plan.get(address);
      if (mine === undefined) plan.set(address, [key]);
      else mine.push(key);
    }
    return plan;
  }

  /**
   * Send each worker its keys. Returns the workers that could not be reached,
   * with the keys they were to take (noted in `unreachable`); throws for a
   * worker that refused a value, or an error that another worker would meet too.
   */
  private async send(
    plan: ReadonlyMap<string, readonly string[]>,
    placement: Placement,
    unreachable: string[],
  ): Promise<Map<string, string[]>> {
    const failedWorkers = new Map<string, string[]>();
    const errors: Error[] = [];
    const stimulusId = newStimulusId("scatter");
    await Promise.all(
      [...plan].map(async ([address, keys]) => {
        const data = new Map(keys.map((k) => [k, placement.values.get(k)]));
        let response: unknown;
        try {
          const rpc = await this.host.peers.get(address);
          response = await rpc.call("update_data", { data, stimulusId, who: this.host.id });
        } catch (err) {
          if (isNetworkError(err)) {
            failedWorkers.set(address, [...keys]);
            unreachable.push(`${address}: ${(err as Error).message}`);
          } else if (err instanceof SerializationError) {
            errors.push(uncloneable(keys, placement) ?? asScatterError(address, err));
          } else {
            errors.push(asScatterError(address, err));
          }
          return;
        }
        try {
          const answer = parseUpdateDataResponse(response, keys, address);
          for (const [key, size] of Object.entries(answer.stored)) {
            const holders = placement.stored.get(key);
            if (holders === undefined) placement.stored.set(key, [address]);
            else holders.push(address);
            if (!placement.sizes.has(key)) placement.sizes.set(key, size);
          }
          const refused = Object.entries(answer.failed);
          if (refused.length > 0) {
            const [key, why] = refused[0];
            const index = placement.keys.indexOf(key);
            errors.push(
              new ScatterError(`scatter: ${address} could not store value ${index}: ${why}`),
            );
          }
        } catch (err) {
          errors.push(new ScatterError(`scatter: ${message(err)}`, { cause: err }));
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
    return failedWorkers;
  }
}

function asScatterError(address: string, err: unknown): ScatterError {
  return new ScatterError(`scatter: ${address} did not take the values: ${message(err)}`, {
    cause: err,
  });
}

/**
 * The first of `keys` whose value cannot be cloned, as the TypeError an
 * in-process scatter gives (the wire's error does not say which value it was).
 */
function uncloneable(keys: readonly string[], placement: Placement): TypeError | null {
  for (const key of keys) {
    const value = ClonedValue.unwrap(placement.values.get(key));
    try {
      serialize(value);
    } catch (err) {
      const index = placement.keys.indexOf(key);
      return new TypeError(
        `scatter: value ${index} (${typeName(value)}) cannot be sent to a worker: ${message(err)}`,
      );
    }
  }
  return null;
}

function hostOf(address: string): string {
  try {
    return getAddressHost(address);
  } catch {
    return address;
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : showValue(err);
}
