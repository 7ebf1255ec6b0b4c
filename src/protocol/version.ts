/**
 * The version of the wire protocol, which the handshakes (`register-worker`,
 * `register-client`) and the scheduler's reply carry: a scheduler, a worker
 * or a client of another weft version is refused at once, with a message
 * naming both versions, instead of failing obscurely later (a field one side
 * sends and the other does not read, an op one side does not know).
 *
 * Workers exchange data with each other, and clients fetch results from
 * workers, without a handshake of their own: each passed the scheduler's
 * check, so they all speak its version.
 */

import { readFileSync } from "node:fs";
import type { WireVersion } from "./messagesSession.ts";

/**
 * Bump it with any change to the shape or the meaning of a message that goes
 * over the wire (the handshakes, the batched streams both ways, the requests
 * to the scheduler and their replies, the workers' `get_data`): a field or an
 * op added, removed, renamed or retyped, a value read differently. Peers
 * compare it for equality: there is no range of compatible versions.
 *
 * 2: the scheduler's register replies carry its `maxMessageBytes` and its
 * nanny plugins; the ops of nanny plugins, of work stealing's rounds and of
 * the Active Memory Manager (`amm`) were added; `get_data`, `run`,
 * `actor_execute` and `actor_attribute` requests carry the requester's
 * `maxMessageBytes` (and `who` asks), which the serving worker does not exceed.
 *
 * 3: the `processing` and `nbytes` requests (`Client.processing`,
 * `Client.nbytes`): a scheduler of 2 does not know them and would not answer
 * them, leaving the client waiting.
 *
 * Not bumped for an addition that a peer of the same version without it is
 * unaffected by, both ways: bumping would only refuse peers that work
 * together. So, within 2 (and so in 3): `register-client` and `register-worker` carry the
 * sender's own `maxMessageBytes` (optional: a scheduler without the change
 * ignores it, the state machine ignoring it in a registration, and sends as
 * before; a scheduler with it applies nothing to a peer that does not send
 * it); and the scheduler sends `answer-unsent` for an answer by stimulus id it
 * cannot send (a client without the change ignores it as an unknown op, and
 * waits, as it did when that answer was dropped). Within 3: the scheduler sends
 * `message-refused` for a client's message it rejects as malformed (a client
 * without the change ignores it as an unknown op, and waits, as before); and a client's
 * `dump_state`, `get_story`, `get_logs` and `profile_stop` carry its
 * `maxMessageBytes` (a worker without the change ignores the fields and
 * answers as before); and `upload-file`, `load-task-modules`,
 * `register-worker-plugin` and `register-nanny-plugin` carry the workers the
 * client asked (`asked`), which a scheduler with the change may answer with
 * `{unasked}` instead of recording (a scheduler without it ignores the field
 * and records, as before; a client without it sends none, and is answered as
 * before); and a worker's `get_data` answer names in `lost` the keys asked
 * whose spilled value it found gone from disk (a requester without the change
 * ignores the field and takes them as not held, as before; a worker without it
 * sends none, and its requesters give such keys up as before); and the
 * `workers` answer gives each worker's registration (`id`), which those
 * records may name (`askedIds`) so that a worker restarted at an address asked
 * counts as unasked (a client without the change ignores the `id`s and names
 * none; a scheduler without it lists none, ignores `askedIds`, and is asked by
 * address, as before); and a `get_data` carries `peer` (true from a worker fetching
 * a task's input, false from a client), which the serving worker tells a peer from
 * a client by (a worker without the change ignores it and goes by whether `who`
 * looks like an address, as before; a request without it is taken so by a worker
 * with the change).
 *
 * 4: leases expire unrefreshed: the scheduler's `register-client-reply` carries
 * its `leaseTimeoutMs`, and clients send `lease-refresh` requests for the leases
 * they hold. A client of 3 never refreshes, so a scheduler of 4 would take its
 * locks away after 30 s while it still held them. The scheduler's `dump-state`
 * answer comes in parts (`{scheduler, tasks, transitionLog}`, read and encoded
 * over several turns of its event loop), which the client joins: a client of 3
 * would find the answer malformed. Within 4: the `counters` answer carries
 * `tasksDoneErred` (a client without the change ignores it; one with it shows no
 * erred count from a scheduler without it, as before).
 *
 * 5: a client's `profile_start` names the client (`client`), and the worker tells
 * the scheduler of each profile a client started there and of its end
 * (`profile-started`, `profile-ended`); the scheduler sends `profile-discard` for
 * those of a client it removed. A scheduler of 4 would take the workers' new
 * messages for malformed ones of its state machine, logging an error for each.
 *
 * 6: an `Error` in a message (a task's argument, a value the scheduler keeps)
 * is written as weft's extension (`ERROR_EXTENSION_TYPE`: its stack, its cause
 * only if it has one), not msgpackr's: a peer of 5 cannot read it.
 */
export const WIRE_PROTOCOL_VERSION = 6;

let weftVersionValue: string | undefined;

/**
 * weft's own version, from its package.json (two directories up from both
 * `src/protocol/` and `dist/protocol/`), or "unknown" where that is not
 * weft's (weft bundled into another program): it only makes the message of
 * a refusal clearer.
 */
export function weftVersion(): string {
  if (weftVersionValue === undefined) {
    weftVersionValue = "unknown";
    try {
      const pkg = JSON.parse(
        readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
      ) as { name?: unknown; version?: unknown };
      if (pkg.name === "weft" && typeof pkg.version === "string") weftVersionValue = pkg.version;
    } catch {
      // not there: "unknown"
    }
  }
  return weftVersionValue;
}

/** This process's versions, as its handshake or its reply carries them. */
export function wireVersion(): WireVersion {
  return { protocolVersion: WIRE_PROTOCOL_VERSION, weftVersion: weftVersion() };
}

/** What to do about a mismatch, whichever side finds it. */
const ADVICE = "run the same weft version on the scheduler, workers and clients";

/** A peer's claimed version for a message, short whatever it sent. */
function describe(protocolVersion: unknown, peerWeftVersion: unknown): string {
  const protocol =
    typeof protocolVersion === "number"
      ? String(protocolVersion)
      : typeof protocolVersion === "string"
        ? JSON.stringify(protocolVersion.slice(0, 20))
        : `of type ${typeof protocolVersion}`;
  const weft =
    typeof peerWeftVersion === "string" ? `weft ${peerWeftVersion.slice(0, 40)}` : "weft unknown";
  return `wire protocol ${protocol} (${weft})`;
}

/**
 * Why the peer whose handshake or reply is `fields` cannot talk to this
 * process, or null if it speaks {@link WIRE_PROTOCOL_VERSION}. `peer` names
 * the peer ("the client"), `self` this process ("this scheduler").
 */
export function protocolMismatch(
  peer: string,
  self: string,
  fields: { readonly protocolVersion?: unknown; readonly weftVersion?: unknown },
): string | null {
  const theirs = fields.protocolVersion;
  if (theirs === WIRE_PROTOCOL_VERSION) return null;
  const ours = describe(WIRE_PROTOCOL_VERSION, weftVersion());
  if (theirs === undefined || theirs === null) {
    // Every weft since the check was added sends it.
    return `${peer} speaks no wire protocol version, so it runs a weft older than ${self}, which speaks ${ours}: ${ADVICE}`;
  }
  return `${peer} speaks ${describe(theirs, fields.weftVersion)} and ${self} ${ours}: ${ADVICE}`;
}
