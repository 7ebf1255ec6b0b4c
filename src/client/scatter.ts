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
import { ConnectError, isNetworkError, SerializationError } from "../comm/errors.ts";
import type { ScatteredKey } from "../protocol/messagesClient.ts";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { workersProblem } from "../scheduler/state/eventValidation.ts";
import { getAddressHost } from "../util/address.ts";
import { showValue } from "../util/showValue.ts";
import { typeName } from "../util/sizeof.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { asWireValue } from "../worker/dataServer.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { parseUpdateDataResponse } from "../worker/updateData.ts";
import { ScatterError } from "./errors.ts";
import { workersOption } from "./graph.ts";

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
  const o = options as ScatterOptions;
  if (o.workers !== undefined) {
    const problem = workersProblem(workersOption(o));
    if (problem !== null) return `workers ${problem}`;
  }
  const { broadcast } = o as { broadcast?: unknown };
  if (broadcast !== undefined && typeof broadcast !== "boolean") {
    return `broadcast must be a boolean, got ${showValue(broadcast)}`;
  }
  return null;
}

/** A scatter in progress, by value: its current key, wire form, holders and size. */
interface Placement {
  readonly values: readonly unknown[];
  readonly wire: readonly unknown[];
  readonly keys: string[];
  /** The workers that stored each value under its current key. */
  readonly holders: string[][];
  /** Each value's size and type name, from the first worker that stored it. */
  readonly sizes: ({ readonly nbytes: number; readonly typename: string } | null)[];
}

/** A fresh key for `value`: `<type name>-<uuid>`. */
function freshKey(value: unknown): string {
  return `${typeName(value)}-${randomUUID()}`;
}

/** The values of `p` stored somewhere, under their current keys. */
function whereStored(p: Placement): ScatteredKey[] {
  const out: ScatteredKey[] = [];
  for (let i = 0; i < p.keys.length; i++) {
    const size = p.sizes[i];
    if (p.holders[i].length > 0 && size !== null) {
      out.push({ key: p.keys[i], workers: p.holders[i], ...size });
    }
  }
  return out;
}

/** A worker that did not answer `update_data`: the values it was sent, and whether it may have stored them. */
interface Unanswered {
  readonly indices: readonly number[];
  /** The request may have reached it (the connection failed after connecting). */
  readonly mayHaveStored: boolean;
}

/** Puts values on workers, for the client to register with the scheduler. */
export class Scatterer {
  /** Where the next spread starts in the list of worker slots, so that scatters take turns. */
  private cursor = 0;

  constructor(private readonly host: ScatterHost) {}

  /**
   * Put `values` on workers, each under a fresh key: resolves with the keys
   * and where each value went, in the order of `values`. A worker that cannot
   * be reached is left out and its share goes to the others; if the request
   * may have reached it (the connection broke after it was sent), the value is
   * sent again under a new key and the old key is let go where it may be (the
   * host's `dropStored`), so that no copy is left on a worker nobody knows of.
   * Rejects with a {@link ScatterError} when no worker could take the values,
   * or one refused a value, and with a TypeError for a value that cannot be
   * sent; what had been put on workers by then goes to `dropStored` too.
   */
  async place(values: readonly unknown[], options: ScatterOptions): Promise<ScatteredKey[]> {
    const p: Placement = {
      values,
      wire: values.map((v, i) => this.forTransfer(v, i)),
      keys: values.map(freshKey),
      holders: values.map(() => []),
      sizes: values.map(() => null),
    };
    let candidates = await this.candidates(workersOption(options));
    let todo = values.map((_, i) => i);
    const unreachable: string[] = [];
    const abandoned: ScatteredKey[] = [];
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
        const { failed, error } = await this.send(plan, p, unreachable);
        candidates = candidates.filter((w) => !failed.has(w.address));
        const missed = new Set<number>();
        for (const { indices } of failed.values()) for (const i of indices) missed.add(i);
        const again: number[] = [];
        for (const i of missed) {
          const maybe = [...failed].filter(([, u]) => u.mayHaveStored && u.indices.includes(i));
          if (maybe.length === 0) {
            // Surely not stored there; done if another worker took it (broadcast).
            if (p.holders[i].length === 0) again.push(i);
            continue;
          }
          // The value may be on those workers under this key: let the key go, and
          // send the value again under another.
          const size = p.sizes[i];
          abandoned.push({
            key: p.keys[i],
            workers: [...p.holders[i], ...maybe.map(([address]) => address)],
            nbytes: size?.nbytes ?? 0,
            typename: size?.typename ?? typeName(p.values[i]),
          });
          p.keys[i] = freshKey(p.values[i]);
          p.holders[i] = [];
          p.sizes[i] = null;
          again.push(i);
        }
        if (error !== null) throw error;
        todo = again;
      }
    } catch (err) {
      const stored = [...abandoned, ...whereStored(p)];
      if (stored.length > 0) this.host.dropStored(stored);
      throw err;
    }
    if (abandoned.length > 0) this.host.dropStored(abandoned);
    return whereStored(p);
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

  /** The values `indices` dealt to the workers in turn, each as many times as it has threads. */
  private spread(
    indices: readonly number[],
    workers: readonly WorkerIdentity[],
  ): Map<string, number[]> {
    const slots: string[] = [];
    for (const w of workers) {
      for (let i = 0; i < Math.max(1, w.nthreads); i++) slots.push(w.address);
    }
    const plan = new Map<string, number[]>();
    for (const index of indices) {
      const address = slots[this.cursor++ % slots.length];
      const mine = plan.get(address);
      if (mine === undefined) plan.set(address, [index]);
      else mine.push(index);
    }
    return plan;
  }

  /**
   * Send each worker its values. Returns the workers that did not answer, with
   * what they were sent (noted in `unreachable`), and the error that ends the
   * scatter, if any: a worker refused a value, or an error another worker would
   * meet too.
   */
  private async send(
    plan: ReadonlyMap<string, readonly number[]>,
    p: Placement,
    unreachable: string[],
  ): Promise<{ failed: Map<string, Unanswered>; error: Error | null }> {
    const failed = new Map<string, Unanswered>();
    const errors: Error[] = [];
    const stimulusId = newStimulusId("scatter");
    await Promise.all(
      [...plan].map(async ([address, indices]) => {
        const data = new Map(indices.map((i) => [p.keys[i], p.wire[i]]));
        let response: unknown;
        let connected = false;
        try {
          const rpc = await this.host.peers.get(address);
          connected = true;
          response = await rpc.call("update_data", { data, stimulusId, who: this.host.id });
        } catch (err) {
          if (isNetworkError(err)) {
            const mayHaveStored = connected && !(err instanceof ConnectError);
            failed.set(address, { indices, mayHaveStored });
            unreachable.push(`${address}: ${(err as Error).message}`);
          } else if (err instanceof SerializationError) {
            errors.push(uncloneable(indices, p) ?? asScatterError(address, err));
          } else {
            errors.push(asScatterError(address, err));
          }
          return;
        }
        try {
          const keys = indices.map((i) => p.keys[i]);
          const answer = parseUpdateDataResponse(response, keys, address);
          for (const i of indices) {
            const size = answer.stored[p.keys[i]];
            if (size === undefined) continue;
            p.holders[i].push(address);
            p.sizes[i] ??= size;
          }
          for (const i of indices) {
            const why = answer.failed[p.keys[i]];
            if (why !== undefined) {
              errors.push(
                new ScatterError(`scatter: ${address} could not store value ${i}: ${why}`),
              );
              break;
            }
          }
        } catch (err) {
          errors.push(new ScatterError(`scatter: ${message(err)}`, { cause: err }));
        }
      }),
    );
    return { failed, error: errors[0] ?? null };
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
function uncloneable(indices: readonly number[], p: Placement): TypeError | null {
  for (const i of indices) {
    const value = p.values[i];
    try {
      serialize(value);
    } catch (err) {
      return new TypeError(
        `scatter: value ${i} (${typeName(value)}) cannot be sent to a worker: ${message(err)}`,
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
