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
import { setTimeout as sleep } from "node:timers/promises";
import { serialize } from "node:v8";
import { ConnectError, isNetworkError, SerializationError } from "../comm/errors.ts";
import { RemoteError } from "../comm/rpc.ts";
import type { ScatteredKey } from "../protocol/messagesClient.ts";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { checkValue, DATA_KINDS, type ValueCheck } from "../protocol/values.ts";
import { workersProblem } from "../scheduler/state/eventValidation.ts";
import { addressHostOrNull, namesWorker } from "../util/address.ts";
import { showValue } from "../util/showValue.ts";
import { typeName } from "../util/sizeof.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { asWireValue } from "../worker/dataServer.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { parseUpdateDataResponse } from "../worker/updateData.ts";
import { type CheckedClone, checkedWireClone } from "../worker/wireClone.ts";
import { ScatterError } from "./errors.ts";
import { workersOption } from "./graph.ts";
import { GETTER_THREW, unreadable } from "./readField.ts";

/** How often a scatter asks the scheduler for workers while it has none, and while a worker takes its values. */
const WAIT_MS = 200;

/** Options of `Client.scatter`. */
export interface ScatterOptions {
  /**
   * Put the values on these workers only: addresses (`tcp://10.0.0.1:4000`)
   * or hosts (`10.0.0.1`: any worker there), one or an array, as `workers`
   * of `submitWith`. Default: any running worker.
   */
  readonly workers?: string | readonly string[] | null;
  /** Put every value on every one of those workers, rather than spreading them. Default false. */
  readonly broadcast?: boolean;
  /**
   * How long to wait for a worker to take the values while none (of those
   * allowed) is running or can be reached, in milliseconds. Default: the
   * client's `timeoutMs` (30 s).
   */
  readonly timeoutMs?: number;
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
  /** The default of {@link ScatterOptions.timeoutMs}. */
  readonly timeoutMs: number;
}

/**
 * The values of the plain object `values` scattered by name, read once each:
 * a getter that throws is refused naming its name (`scatter: values.a cannot
 * be read (a getter threw): Error: boom`), as a value's own fields are, not
 * with its error alone.
 */
export function namedValues(values: Record<string, unknown>, names: readonly string[]): unknown[] {
  const out = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) {
    try {
      out[i] = values[names[i]];
    } catch (err) {
      throw unreadable(`scatter: values.${names[i]}`, GETTER_THREW, err);
    }
  }
  return out;
}

/**
 * The values of the array `values` to scatter, read once each, by index: a
 * getter that throws is refused naming its index (`scatter: values[0] cannot be
 * read (a getter threw): Error: boom`), not with its error alone, and a hole
 * is `undefined`, as the structured clone reads one (the scatter's own walks
 * skipped it, and failed with "Cannot read properties of undefined").
 */
export function arrayValues(values: readonly unknown[]): unknown[] {
  const out = new Array<unknown>(values.length);
  for (let i = 0; i < values.length; i++) {
    try {
      out[i] = values[i];
    } catch (err) {
      throw unreadable(`scatter: values[${i}]`, GETTER_THREW, err);
    }
  }
  return out;
}

/** Why `options` are not valid scatter options, or null. */
export function scatterOptionsProblem(options: unknown): string | null {
  if (typeof options !== "object" || options === null) return "options must be an object";
  const o = options as ScatterOptions;
  const names = workersOption(o); // undefined for null too, Dask's None: every worker
  if (names !== undefined) {
    const problem = workersProblem(names);
    if (problem !== null) return `workers ${problem}`;
  }
  const { broadcast, timeoutMs } = o as { broadcast?: unknown; timeoutMs?: unknown };
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)
  ) {
    return `timeoutMs must be a number > 0 and at most ${MAX_TIMER_MS}, got ${showValue(timeoutMs)}`;
  }
  if (broadcast !== undefined && typeof broadcast !== "boolean") {
    return `broadcast must be a boolean, got ${showValue(broadcast)}`;
  }
  return null;
}

/** A scatter in progress, by value: its current key, wire form, holders and size. */
interface Placement {
  readonly values: readonly unknown[];
  /** Each value's position in the caller's list, for messages. */
  readonly positions: readonly number[];
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
  /** Set by {@link abort}: scatters stop at their next step with this error. */
  private aborted: Error | null = null;

  constructor(private readonly host: ScatterHost) {}

  /**
   * Stop every scatter in progress, and refuse new ones, with `error`. A
   * scatter finishes the `update_data` calls it has made, then lets go of
   * what it had stored (the host's `dropStored`) and rejects.
   */
  abort(error: Error): void {
    this.aborted ??= error;
  }

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
   * Errors name a value by its position in `values`, or, given `positions`,
   * by `positions[i]` (its place in the caller's list, when `values` is a
   * part of it). It waits for a running worker until `deadline` (a `Date.now()`
   * time), by default `options.timeoutMs` from now; errors say it waited
   * `options.timeoutMs`, the caller's whole wait when it gives a deadline.
   */
  async place(
    values: readonly unknown[],
    options: ScatterOptions,
    positions: readonly number[] = values.map((_, i) => i),
    deadline?: number,
  ): Promise<ScatteredKey[]> {
    const p: Placement = {
      values,
      positions,
      wire: values.map((v, i) => this.forTransfer(v, positions[i])),
      keys: values.map(freshKey),
      holders: values.map(() => []),
      sizes: values.map(() => null),
    };
    const names = workersOption(options);
    const timeoutMs = options.timeoutMs ?? this.host.timeoutMs;
    const end = deadline ?? Date.now() + timeoutMs;
    /** Workers that did not answer: not asked again by this scatter. */
    const gone = new Set<string>();
    let todo = values.map((_, i) => i);
    const unreachable: string[] = [];
    const abandoned: ScatteredKey[] = [];
    try {
      let candidates = await this.candidates(names, gone, end, timeoutMs, unreachable);
      while (todo.length > 0) {
        if (this.aborted !== null) throw this.aborted;
        if (candidates.length === 0) {
          // Every worker tried failed. New ones may keep joining and failing (each
          // frozen, or killed, as it comes): with one more to try each time, only the
          // deadline ends the retries.
          if (Date.now() >= end) {
            throw new ScatterError(
              `scatter: no worker could take the values within ${timeoutMs} ms: ${unreachable.join("; ")}`,
            );
          }
          candidates = await this.candidates(names, gone, end, timeoutMs, unreachable);
        }
        const plan =
          options.broadcast === true
            ? new Map(candidates.map((w) => [w.address, todo]))
            : this.spread(todo, candidates);
        const { failed, error } = await this.send(plan, p, unreachable);
        for (const address of failed.keys()) gone.add(address);
        candidates = candidates.filter((w) => !gone.has(w.address));
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
      if (this.aborted !== null) throw this.aborted;
    } catch (err) {
      const stored = [...abandoned, ...whereStored(p)];
      if (stored.length > 0) this.host.dropStored(stored);
      throw err;
    }
    if (abandoned.length > 0) this.host.dropStored(abandoned);
    return whereStored(p);
  }

  /**
   * `value` as `update_data` carries it, once checked to be data (see
   * `protocol/values.ts`): what is not (a function, a class instance, a
   * `SharedArrayBuffer`) is refused with a TypeError naming it, as over TCP as
   * in process. In process, a copy as the wire makes it (`wireClone`): the
   * workers hold a copy, as over TCP, of the same kinds (a `Buffer` stays one)
   * and owning its memory (a view of shared memory is copied).
   */
  private forTransfer(value: unknown, index: number): unknown {
    const refused = (why: string, cause?: unknown) =>
      new TypeError(
        `scatter: value ${index} (${typeName(value)}) cannot be sent to a worker: ${why}`,
        cause === undefined ? undefined : { cause },
      );
    // A getter that threw is said where it sits (`value 0.a cannot be read (a
    // getter threw): Error: boom`), its error kept as the cause, on every transport.
    const notData = (problem: string, unreadable: ValueCheck["unreadable"]) =>
      unreadable !== null
        ? refused(problem, unreadable.cause)
        : refused(`${problem}; scattered values must be data (${DATA_KINDS})`);
    if (!this.host.inProcess) {
      const check = checkValue(value, `value ${index}`);
      if (check.problem !== null) throw notData(check.problem, check.unreadable);
      return asWireValue(value);
    }
    let cloned: CheckedClone;
    try {
      cloned = checkedWireClone(value, `value ${index}`);
    } catch (err) {
      // A getter that threw as the value was copied (it had not when checked):
      // its error kept as the cause.
      throw refused(message(err), err);
    }
    if (cloned.problem !== null) throw notData(cloned.problem, cloned.unreadable);
    return asWireValue(cloned.copy);
  }

  /**
   * The running workers `names` (addresses or hosts) allow, in address order,
   * but for those in `gone`. While there are none, the scheduler is asked
   * again every {@link WAIT_MS} until `deadline` (`timeoutMs` after the start);
   * then a {@link ScatterError} says why (`unreachable`: the workers that did
   * not answer).
   */
  private async candidates(
    names: readonly string[] | undefined,
    gone: ReadonlySet<string>,
    deadline: number,
    timeoutMs: number,
    unreachable: readonly string[],
  ): Promise<WorkerIdentity[]> {
    const named = names === undefined ? null : new Set(names);
    for (;;) {
      if (this.aborted !== null) throw this.aborted;
      const running = (await this.host.workers()).filter((w) => w.status === "running");
      const allowed = running.filter(
        (w) =>
          !gone.has(w.address) &&
          (named === null ||
            namesWorker(named, w.address, addressHostOrNull(w.address), w.name ?? null)),
      );
      if (allowed.length > 0) {
        return allowed.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        const waited = `within ${timeoutMs} ms`;
        throw new ScatterError(
          unreachable.length > 0
            ? `scatter: no worker could take the values ${waited}: ${unreachable.join("; ")}`
            : names === undefined
              ? `scatter: no running worker to put the values on ${waited} (start one, or wait with client.waitForWorkers)`
              : `scatter: none of the workers ${names.join(", ")} is running ${waited} (running: ${running.map((w) => w.address).join(", ") || "none"})`,
        );
      }
      await sleep(Math.min(WAIT_MS, left));
    }
  }

  /**
   * While `pending` workers are taking values, ask the scheduler every
   * {@link WAIT_MS} which workers it has, and close the connection to one it
   * no longer has: a worker frozen with its connection open would never
   * answer. The call then fails as a network failure (the worker may have
   * stored the values: they go again under new keys). Resolves once `pending`
   * is empty, as soon as `sent` (which never rejects) settles, not at the end
   * of a wait: every scatter took at least WAIT_MS.
   */
  private async closeLeavers(pending: Set<string>, sent: Promise<unknown>): Promise<void> {
    const stop = new AbortController();
    void sent.then(() => stop.abort());
    while (pending.size > 0) {
      try {
        await sleep(WAIT_MS, undefined, { signal: stop.signal });
      } catch {
        return; // every send settled
      }
      if (pending.size === 0) return;
      await this.dropLeavers(pending);
    }
  }

  /** Close the connection to each `pending` worker the scheduler no longer has. */
  private async dropLeavers(pending: Set<string>): Promise<void> {
    let listed: Set<string>;
    try {
      listed = new Set((await this.host.workers()).map((w) => w.address));
    } catch {
      return; // the client closed: its connections close with it
    }
    for (const address of pending) {
      if (!listed.has(address)) {
        this.host.peers.remove(
          address,
          `${address} left the cluster while taking scattered values`,
        );
      }
    }
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
    const round: Round = {
      p,
      stimulusId: newStimulusId("scatter"),
      failed: new Map(),
      errors: [],
      unreachable,
    };
    const pending = new Set(plan.keys());
    const sends = [...plan].map(([address, indices]) =>
      this.sendTo(address, indices, round).finally(() => pending.delete(address)),
    );
    const watching = this.closeLeavers(pending, Promise.allSettled(sends));
    await Promise.all(sends);
    await watching;
    return { failed: round.failed, error: round.errors[0] ?? null };
  }

  /** Send `address` the values `indices` of the round, and note how it went. */
  private async sendTo(address: string, indices: readonly number[], r: Round): Promise<void> {
    const { p } = r;
    const data = new Map(indices.map((i) => [p.keys[i], p.wire[i]]));
    let response: unknown;
    let connected = false;
    try {
      const rpc = await this.host.peers.get(address);
      connected = true;
      response = await rpc.call("update_data", {
        data,
        stimulusId: r.stimulusId,
        who: this.host.id,
      });
    } catch (err) {
      if (isNetworkError(err)) {
        const mayHaveStored = connected && !(err instanceof ConnectError);
        r.failed.set(address, { indices, mayHaveStored });
        r.unreachable.push(`${address}: ${(err as Error).message}`);
      } else if (err instanceof RemoteError && err.remoteName === "WorkerClosingError") {
        // Closing (retired, its lifetime over): it stored nothing; another takes them.
        r.failed.set(address, { indices, mayHaveStored: false });
        r.unreachable.push(`${address}: ${err.message}`);
      } else if (err instanceof SerializationError) {
        r.errors.push(uncloneable(indices, p) ?? asScatterError(address, err));
      } else {
        r.errors.push(asScatterError(address, err));
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
          r.errors.push(
            new ScatterError(`scatter: ${address} could not store value ${p.positions[i]}: ${why}`),
          );
          return;
        }
      }
    } catch (err) {
      r.errors.push(new ScatterError(`scatter: ${message(err)}`, { cause: err }));
    }
  }
}

/** One round of `update_data` calls of a scatter, and how they went. */
interface Round {
  readonly p: Placement;
  readonly stimulusId: string;
  /** The workers that did not answer. */
  readonly failed: Map<string, Unanswered>;
  /** What ends the scatter (the first is thrown). */
  readonly errors: Error[];
  /** Why each worker that did not answer did not, for the error if no worker does. */
  readonly unreachable: string[];
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
        `scatter: value ${p.positions[i]} (${typeName(value)}) cannot be sent to a worker: ${message(err)}`,
      );
    }
  }
  return null;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : showValue(err);
}
