/**
 * Asking every worker of a list the same thing at once (`Client.run`,
 * `Client.loadTaskModules`, the logs, stories and dumps of the workers): the
 * answers in address order, so that the error reported, when there are
 * several, does not depend on which came first. Also which workers are asked:
 * those a `workers` option names, and, for what the scheduler records for the
 * workers to come, those that joined while the others were asked.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { withReplyLimit } from "../comm/replyLimit.ts";
import { RemoteError } from "../comm/rpc.ts";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { workersProblem } from "../scheduler/state/eventValidation.ts";
import { addressHostOrNull, namesWorker } from "../util/address.ts";
import { showValue } from "../util/showValue.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { workersOption } from "./graph.ts";

/**
 * `ask(address)` for each of `addresses`, at once: `{address: answer}` in
 * address order. When `raised(answer)` gives an error for some answer, the
 * first of those (by address) is thrown instead.
 */
export async function askEachWorker<T>(
  addresses: readonly string[],
  ask: (address: string) => Promise<T>,
  raised: (answer: T) => Error | null,
): Promise<Record<string, T>> {
  const sorted = [...addresses].sort();
  const answers = await Promise.all(sorted.map(ask));
  const out: Record<string, T> = {};
  for (let i = 0; i < sorted.length; i++) {
    const error = raised(answers[i]);
    if (error !== null) throw error;
    out[sorted[i]] = answers[i];
  }
  return out;
}

/**
 * The rpc `method(args)` of each of `addresses`, at once, each answer read by
 * `read` (null: not the answer expected): `{address: read answer}` in address
 * order. Rejects, naming `op` and the first worker (by address) that failed,
 * with `cannot read the <what> of <address>: <why>` when it could not be
 * asked, or `<address> answered <method> with <expected>` when its answer was
 * not one. With `call.who` (the client's id) the request carries the largest
 * answer the connection takes ({@link withReplyLimit}): a worker refuses a
 * larger one, failing that call alone, rather than send what would close the
 * connection.
 */
export async function callEachWorker<T>(
  peers: PeerPool,
  addresses: readonly string[],
  call: {
    readonly op: string;
    readonly method: string;
    readonly args: Record<string, unknown>;
    readonly who?: string;
  },
  what: { readonly noun: string; readonly expected: string },
  read: (got: unknown, address: string) => T | null,
): Promise<Record<string, T>> {
  const answers = await askEachWorker(
    addresses,
    async (address): Promise<T | Error> => {
      try {
        const rpc = await peers.get(address);
        const args =
          call.who === undefined ? call.args : withReplyLimit(call.args, call.who, rpc.comm);
        const got = read(await rpc.call(call.method, args), address);
        if (got !== null) return got;
        return new Error(`${call.op}: ${address} answered ${call.method} with ${what.expected}`);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return new Error(`${call.op}: cannot read the ${what.noun} of ${address}: ${why}`, {
          cause: err,
        });
      }
    },
    (answer) => (answer instanceof Error ? answer : null),
  );
  return answers as Record<string, T>;
}

/**
 * The rpc `method(args)` of each of `addresses`, at once, each answer read by
 * `read` (null: not the answer expected): `{address: read answer}` in address
 * order. Rejects with `failed(address, why, cause)` of the first worker, by
 * address, that could not be asked or answered otherwise (`why`: its error's
 * message, or `malformed answer: <the answer as JSON>`). With `left`, a worker
 * that could not be asked (no answer of its own: a `RemoteError` is one) and
 * for which `left(address)` resolves true is left out instead.
 */
export async function callEachWorkerOrFail<T>(
  peers: PeerPool,
  addresses: readonly string[],
  method: string,
  args: Record<string, unknown>,
  read: (got: unknown) => T | null,
  failed: (address: string, why: string, cause?: unknown) => Error,
  left?: (address: string) => Promise<boolean>,
): Promise<Record<string, T>> {
  const answers = await askEachWorker(
    addresses,
    async (address): Promise<{ ok: T } | typeof LEFT | Error> => {
      try {
        const rpc = await peers.get(address);
        const r: unknown = await rpc.call(method, args);
        const got = read(r);
        if (got !== null) return { ok: got };
        return failed(address, `malformed answer: ${String(JSON.stringify(r))}`);
      } catch (err) {
        if (left !== undefined && !(err instanceof RemoteError) && (await left(address))) {
          return LEFT;
        }
        return failed(address, err instanceof Error ? err.message : String(err), err);
      }
    },
    (a) => (a instanceof Error ? a : null),
  );
  const out: Record<string, T> = {};
  for (const [address, a] of Object.entries(answers)) {
    if (a !== LEFT) out[address] = (a as { ok: T }).ok;
  }
  return out;
}

/** The answer of a worker {@link callEachWorkerOrFail} leaves out: it left the cluster. */
const LEFT = Symbol("left the cluster");

/**
 * The addresses of the connected workers (as `workers()` lists them) that
 * `options.workers` names (addresses, hosts for every worker there, or
 * names), or of every worker without it; a
 * TypeError naming `op` for a malformed list.
 */
export async function workersNamed(
  op: string,
  options: { readonly workers?: string | readonly string[] | null },
  workers: () => Promise<readonly WorkerIdentity[]>,
): Promise<string[]> {
  const names = workersOption(options);
  const problem = names === undefined ? null : workersProblem(names);
  if (problem !== null) throw new TypeError(`${op}: workers ${problem}`);
  const chosen = names === undefined ? null : new Set(names);
  return (await workers())
    .filter(
      (w) =>
        chosen === null ||
        namesWorker(chosen, w.address, addressHostOrNull(w.address), w.name ?? null),
    )
    .map((w) => w.address);
}

/**
 * The entries of `options.workers` (addresses, hosts or names) that name none
 * of `workers`: a typo, or a worker gone, which a call must report rather
 * than skip, leaving an answer that looks like every worker's.
 */
export function unmatchedSelectors(
  options: { readonly workers?: string | readonly string[] | null },
  workers: readonly WorkerIdentity[],
): string[] {
  const names = workersOption(options);
  if (names === undefined) return [];
  return names.filter((name) => {
    const one = new Set([name]);
    return !workers.some((w) =>
      namesWorker(one, w.address, addressHostOrNull(w.address), w.name ?? null),
    );
  });
}

/** How many times {@link onEveryWorker} asks the workers that joined meanwhile, and tries the record. */
const JOINED_ROUNDS = 10;

/**
 * The workers a call asked so far: their answers by address, and their
 * registrations (each worker's `id` as `workers()` listed it before it was
 * asked), which tell a worker restarted at an address asked from the one asked.
 */
interface AskedSoFar<T> {
  readonly answers: Record<string, T>;
  readonly ids: Set<string>;
}

/** What the scheduler is asked to record for: the workers asked, by address and by registration. */
export interface AskedWorkers {
  readonly addresses: readonly string[];
  /** Empty from a scheduler that lists no `id`s: it records by address alone. */
  readonly ids: readonly string[];
}

/** `ask` the workers `listed`, adding their answers and registrations to `asked`. */
async function askListed<T>(
  listed: readonly Pick<WorkerIdentity, "address" | "id">[],
  ask: (addresses: readonly string[]) => Promise<Record<string, T>>,
  asked: AskedSoFar<T>,
): Promise<void> {
  Object.assign(asked.answers, await ask(listed.map((w) => w.address)));
  for (const w of listed) if (w.id !== undefined) asked.ids.add(w.id);
}

/**
 * The workers connected (as `workers()` lists them) not asked yet: by their
 * registration, where the scheduler lists one, else by address.
 */
async function notAsked<T>(
  workers: () => Promise<readonly WorkerIdentity[]>,
  asked: AskedSoFar<T>,
): Promise<WorkerIdentity[]> {
  return (await workers()).filter((w) =>
    w.id !== undefined ? !asked.ids.has(w.id) : !Object.hasOwn(asked.answers, w.address),
  );
}

/**
 * `ask` the workers connected (as `workers()` lists them), and those that
 * registered while they were asked (until none did, or {@link JOINED_ROUNDS}
 * times).
 */
async function askJoined<T>(
  workers: () => Promise<readonly WorkerIdentity[]>,
  ask: (addresses: readonly string[]) => Promise<Record<string, T>>,
  asked: AskedSoFar<T>,
): Promise<void> {
  await askListed(await workers(), ask, asked);
  for (let round = 0; round < JOINED_ROUNDS; round++) {
    const late = await notAsked(workers, asked);
    if (late.length === 0) break;
    await askListed(late, ask, asked);
  }
}

/**
 * The fields of a record request naming `asked` (`asked`, and `askedIds` when
 * the scheduler lists registrations); none for `record(null)`, which records
 * unchecked.
 */
export function askedFields(asked: AskedWorkers | null): {
  asked?: readonly string[];
  askedIds?: readonly string[];
} {
  if (asked === null) return {};
  return asked.ids.length > 0
    ? { asked: asked.addresses, askedIds: asked.ids }
    : { asked: asked.addresses };
}

/**
 * `ask` the workers connected (as `workers()` lists them), and those that
 * registered while they were asked (until none did, or {@link JOINED_ROUNDS}
 * times), then have the scheduler `record(asked)` it for the workers to come:
 * it records only if it has no worker but those `asked` (by registration
 * where it names them: a worker restarted at an address asked is not), else
 * records nothing and answers with the others, which are asked in turn before
 * it is tried again. So a worker that registered as it recorded, and cannot
 * take what was asked, keeps it from being recorded, as the others do; one
 * registering after takes it as it registers. After {@link JOINED_ROUNDS}
 * tries, with workers still joining, `record(null)` records whatever workers
 * the scheduler has, and those joined meanwhile are asked after, told neither
 * way. Resolves with the answers by address (a restarted worker's, the last).
 */
export async function onEveryWorker<T>(
  workers: () => Promise<readonly WorkerIdentity[]>,
  ask: (addresses: readonly string[]) => Promise<Record<string, T>>,
  record: (asked: AskedWorkers | null) => Promise<readonly string[]>,
): Promise<Record<string, T>> {
  const asked: AskedSoFar<T> = { answers: {}, ids: new Set() };
  await askJoined(workers, ask, asked);
  for (let round = 0; round < JOINED_ROUNDS; round++) {
    const unasked = await record({ addresses: Object.keys(asked.answers), ids: [...asked.ids] });
    // Recorded: a worker registering from now on takes it as it registers.
    if (unasked.length === 0) return sortedByKey(asked.answers);
    // Those listed not asked (a worker restarted at an address asked among them), and
    // those named that the list missed.
    const late: Pick<WorkerIdentity, "address" | "id">[] = await notAsked(workers, asked);
    for (const address of unasked) {
      if (!Object.hasOwn(asked.answers, address) && !late.some((w) => w.address === address)) {
        late.push({ address });
      }
    }
    if (late.length === 0) break; // named, yet asked already: record unchecked rather than loop
    await askListed(late, ask, asked);
  }
  await record(null);
  const late = await notAsked(workers, asked);
  if (late.length > 0) await askListed(late, ask, asked);
  return sortedByKey(asked.answers);
}

/**
 * The workers the scheduler named in its answer to a record of `op` naming
 * those asked (`{unasked}`: it recorded nothing); none once it recorded (any
 * other answer that is an array: the list of what it keeps).
 */
export function unaskedIn(op: string, answer: unknown): readonly string[] {
  if (Array.isArray(answer)) return [];
  const unasked = (answer as { unasked?: unknown } | null)?.unasked;
  if (Array.isArray(unasked) && unasked.length > 0 && unasked.every((a) => typeof a === "string")) {
    return unasked as string[];
  }
  throw new Error(`${op}: the scheduler's answer is not one: ${showValue(answer)}`);
}

/** `record` with its keys in order. */
export function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(record).sort()) out[k] = record[k];
  return out;
}

/** How often {@link cuttingLeavers} asks the scheduler which workers it has, in ms. */
export const LEAVERS_POLL_MS = 200;

/**
 * `work` (calls to workers), while every {@link LEAVERS_POLL_MS} the scheduler
 * is asked which workers it has and the connections to the others are cut:
 * a worker that froze (its process stopped, its connections open, nothing
 * answering) and was removed for going silent would hold a call to it for
 * good. Its call then fails as a network failure, saying so. Nothing is asked
 * of work that ends sooner.
 */
export async function cuttingLeavers<T>(
  work: Promise<T>,
  peers: Pick<PeerPool, "addresses" | "remove">,
  workers: () => Promise<readonly WorkerIdentity[]>,
): Promise<T> {
  const done = new AbortController();
  void (async () => {
    for (;;) {
      try {
        await sleep(LEAVERS_POLL_MS, undefined, { signal: done.signal });
      } catch {
        return; // the work is over
      }
      let listed: Set<string>;
      try {
        listed = new Set((await workers()).map((w) => w.address));
      } catch {
        return; // the client closed: its connections close with it
      }
      if (done.signal.aborted) return;
      for (const address of peers.addresses()) {
        if (!listed.has(address)) {
          peers.remove(
            address,
            `${address} left the cluster (the scheduler removed it) while asked`,
          );
        }
      }
    }
  })();
  try {
    return await work;
  } finally {
    // Not waited for: a look under way ends on its own, and looks at nothing then.
    done.abort();
  }
}
