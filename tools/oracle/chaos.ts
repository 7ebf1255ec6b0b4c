/**
 * Random stimulus streams that ignore validity, written as traces for record.py: the
 * oracle's check of what the port does with stimuli the fuzz driver never sends (a
 * completion for a task that is not running, data nobody asked for, a compute request
 * for a task in any state, peers that vanish). The reference decides what each stimulus
 * does, raising or not; the conformance runner then checks that the port does the same,
 * or raises the same error class at the same step.
 *
 *   npx tsx tools/oracle/chaos.ts --out DIR --from 1 --count 100 [--steps 60]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { runScript } from "../../bench/benchCli.ts";
import { nonNegativeInteger } from "../../src/bench/benchOptions.ts";
import { applyConfig, FailingDataStore } from "../../src/protocol/conformance.ts";
import { eventToDict } from "../../src/protocol/daskJson/events.ts";
import { stateSnapshot } from "../../src/protocol/daskJson/snapshot.ts";
import { isEntryPoint } from "../../src/util/entryPoint.ts";
import { TaskError } from "../../src/worker/state/errorMessage.ts";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  type StateMachineEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "../../src/worker/state/events.ts";
import { Rng } from "../../src/worker/state/fuzz/rng.ts";
import type { Instruction } from "../../src/worker/state/instructions.ts";
import { WorkerState } from "../../src/worker/state/workerState.ts";
import type { StoreError } from "./traceFormat.ts";

const ADDRESS = "tcp://127.0.0.1:9000";
/** Peers; the last two share this worker's host, which gathering prefers. */
const ALL_PEERS = [
  "tcp://10.0.0.1:1",
  "tcp://10.0.0.2:1",
  "tcp://10.0.0.3:1",
  "tcp://10.0.0.4:1",
  "tcp://127.0.0.1:9001",
  "tcp://127.0.0.1:9002",
];

/** What the port was asked to do and has not yet been told the end of. */
interface Outstanding {
  executes: Map<string, number>;
  gathers: { worker: string; keys: string[]; totalNbytes: number }[];
}

class ChaosStream {
  readonly rng: Rng;
  readonly keys: string[];
  readonly ws: WorkerState;
  readonly out: Outstanding = { executes: new Map(), gathers: [] };
  /** The port's data store; storing a key listed in its `failures` throws. */
  readonly store = new FailingDataStore();
  private n = 0;
  private runId = 0;
  /** The peers of this stream: three, or all six. */
  readonly peers: string[];
  /** Whether a task's inputs are only keys before it, as in a graph Dask would build. */
  readonly acyclic: boolean;
  /** How often a completion answers nothing the port asked for. */
  readonly oddity: number;

  constructor(seed: number, validate: boolean) {
    this.rng = new Rng(seed);
    const nkeys = this.rng.pick([2, 3, 4, 5, 6, 7, 10, 14]);
    this.acyclic = this.rng.chance(0.5);
    this.keys = Array.from({ length: nkeys }, (_, i) => `k${i}`);
    this.oddity = this.rng.pick([0.005, 0.02, 0.05, 0.15]);
    this.peers = ALL_PEERS.slice(0, this.rng.pick([3, 6]));
    this.ws = new WorkerState({
      data: this.store,
      address: ADDRESS,
      nthreads: this.rng.pick([1, 2, 4]),
      // Fractional amounts too: what is left is float arithmetic in both languages.
      resources: this.rng.chance(0.3) ? { R: this.rng.pick([1, 1.5, 2]) } : {},
      validate,
      transferIncomingCountLimit: this.rng.pick([1, 4]),
    });
  }

  private sid(what: string): string {
    return `${what}-${++this.n}`;
  }

  private someKeys(max = 3): string[] {
    const n = this.rng.range(0, max);
    const ks = new Set<string>();
    for (let i = 0; i < n; i++) ks.add(this.rng.pick(this.keys));
    return [...ks];
  }

  private holders(): string[] {
    const hs = new Set<string>();
    const n = this.rng.chance(this.oddity) ? 0 : this.rng.range(1, 3);
    for (let i = 0; i < n; i++) hs.add(this.rng.pick([...this.peers, ADDRESS]));
    const out = [...hs];
    // A holder named twice: compute-task refuses it when validating, the others take it.
    if (out.length > 0 && this.rng.chance(this.oddity)) out.push(out[0]);
    return out;
  }

  /** A key the port is running, or now and then any key; null for none. */
  private executedKey(): [string, number] | null {
    const running = [...this.out.executes];
    if (running.length > 0 && this.rng.chance(1 - this.oddity)) return this.rng.pick(running);
    if (!this.rng.chance(this.oddity)) return null;
    return [this.rng.pick(this.keys), this.rng.chance(0.5) ? this.runId : this.rng.range(0, 3)];
  }

  /** {@link executedKey}, no longer outstanding: the execution is about to end. */
  private finishedKey(): [string, number] | null {
    const ran = this.executedKey();
    if (ran !== null) this.out.executes.delete(ran[0]);
    return ran;
  }

  next(): StateMachineEvent {
    for (;;) {
      const ev = this.attempt();
      if (ev !== null) return ev;
    }
  }

  /** One random stimulus, or null when the kind drawn has nothing to act on. */
  private attempt(): StateMachineEvent | null {
    const { rng } = this;
    const kind = rng.weighted({
      compute: 24,
      executeSuccess: 10,
      executeFailure: 4,
      reschedule: 3,
      gatherSuccess: 10,
      gatherBusy: 3,
      gatherNetwork: 3,
      gatherFailure: 2,
      free: 8,
      removeReplicas: 4,
      acquire: 4,
      refresh: 3,
      steal: 4,
      cancel: 3,
      update: 3,
      secede: 3,
      pause: 2,
      unpause: 2,
      retryBusy: 2,
      removeWorker: 2,
      findMissing: 2,
    });
    switch (kind) {
      case null:
        throw new Error("chaos: no action has a weight");
      case "compute": {
        const key = rng.pick(this.keys);
        const deps = this.someKeys(2).filter((k) =>
          this.acyclic ? this.keys.indexOf(k) < this.keys.indexOf(key) : k !== key,
        );
        return ComputeTaskEvent.dummy(key, {
          runId: ++this.runId,
          whoHas: new Map(deps.map((d) => [d, this.holders()])),
          nbytes: new Map(deps.map((d) => [d, rng.pick([1, 100, 1_000_000])])),
          // Tuples of other lengths too, as Dask's are compared element by element.
          priority: Array.from({ length: rng.pick([1, 2, 2, 3, 4]) }, () => rng.range(-2, 3)),
          resourceRestrictions:
            rng.chance(0.2) && (this.ws.totalResources.size > 0 || rng.chance(this.oddity))
              ? { R: rng.pick([1, 0.5, 0.7]) }
              : {},
          actor: rng.chance(0.05),
          stimulusId: this.sid("compute"),
        });
      }
      case "executeSuccess": {
        const ran = this.finishedKey();
        if (ran === null) return null;
        const [key, runId] = ran;
        return new ExecuteSuccessEvent({
          key,
          runId,
          value: `${key}!`,
          start: 1,
          stop: 2,
          nbytes: rng.pick([1, 50, 2_000]),
          type: "str",
          stimulusId: this.sid("execute-success"),
        });
      }
      case "executeFailure": {
        const ran = this.finishedKey();
        if (ran === null) return null;
        const [key, runId] = ran;
        return new ExecuteFailureEvent({
          key,
          runId,
          start: 1,
          stop: 2,
          exception: new Error("boom"),
          traceback: null,
          exceptionText: "Exception('boom')",
          tracebackText: "",
          stimulusId: this.sid("execute-failure"),
        });
      }
      case "reschedule": {
        const ran = this.finishedKey();
        if (ran === null) return null;
        return new RescheduleEvent({ key: ran[0], stimulusId: this.sid("reschedule") });
      }
      case "gatherSuccess":
      case "gatherBusy":
      case "gatherNetwork":
      case "gatherFailure": {
        const asked = this.out.gathers.length > 0 && !rng.chance(this.oddity);
        if (!asked && !rng.chance(this.oddity)) return null;
        const g = asked
          ? this.out.gathers.splice(rng.int(this.out.gathers.length), 1)[0]
          : {
              worker: rng.pick(this.peers),
              keys: this.someKeys(),
              totalNbytes: rng.pick([1, 100]),
            };
        const f = { worker: g.worker, totalNbytes: g.totalNbytes };
        if (kind === "gatherBusy")
          return new GatherDepBusyEvent({ ...f, stimulusId: this.sid("gather-busy") });
        if (kind === "gatherNetwork")
          return new GatherDepNetworkFailureEvent({ ...f, stimulusId: this.sid("gather-network") });
        if (kind === "gatherFailure")
          return new GatherDepFailureEvent({
            ...f,
            exception: new Error("boom"),
            traceback: null,
            exceptionText: "Exception('bad data')",
            tracebackText: "",
            stimulusId: this.sid("gather-failure"),
          });
        const data = new Map<string, unknown>();
        for (const k of g.keys) if (rng.chance(0.8)) data.set(k, `${k} from ${g.worker}`);
        if (rng.chance(this.oddity)) data.set(rng.pick(this.keys), "unasked");
        return new GatherDepSuccessEvent({ ...f, data, stimulusId: this.sid("gather-success") });
      }
      case "free":
        return new FreeKeysEvent({ keys: this.someKeys(), stimulusId: this.sid("free") });
      case "removeReplicas":
        return new RemoveReplicasEvent({ keys: this.someKeys(), stimulusId: this.sid("remove") });
      case "acquire": {
        const ks = this.someKeys();
        return new AcquireReplicasEvent({
          whoHas: new Map(ks.map((k) => [k, this.holders()])),
          nbytes: new Map(ks.map((k) => [k, rng.pick([1, 100])])),
          stimulusId: this.sid("acquire"),
        });
      }
      case "refresh": {
        const ks = this.someKeys();
        return new RefreshWhoHasEvent({
          whoHas: new Map(ks.map((k) => [k, this.holders()])),
          stimulusId: this.sid("refresh"),
        });
      }
      case "steal":
        return new StealRequestEvent({ key: rng.pick(this.keys), stimulusId: this.sid("steal") });
      case "cancel":
        return new CancelComputeEvent({ key: rng.pick(this.keys), stimulusId: this.sid("cancel") });
      case "update": {
        const data = new Map<string, unknown>(this.someKeys().map((k) => [k, rng.int(100)]));
        return new UpdateDataEvent({ data, stimulusId: this.sid("update") });
      }
      case "secede": {
        const ran = this.executedKey();
        if (ran === null) return null;
        const [key] = ran;
        return new SecedeEvent({ key, computeDuration: 1, stimulusId: this.sid("secede") });
      }
      case "pause":
        return new PauseEvent({ stimulusId: this.sid("pause") });
      case "unpause":
        return new UnpauseEvent({ stimulusId: this.sid("unpause") });
      case "retryBusy":
        return new RetryBusyWorkerEvent({
          worker: rng.pick(this.peers),
          stimulusId: this.sid("retry"),
        });
      case "removeWorker":
        return new RemoveWorkerEvent({
          worker: rng.pick(this.peers),
          stimulusId: this.sid("remove-worker"),
        });
      case "findMissing":
        return new FindMissingEvent({ stimulusId: this.sid("find-missing") });
    }
  }

  /**
   * Attributes to set before the next stimulus, as Dask's tests set them on the state
   * machine between stimuli (FORMAT.md `config_before`); null for none.
   */
  tamper(): Record<string, unknown> | null {
    const { rng, ws } = this;
    if (!rng.chance(0.04)) return null;
    switch (rng.int(10)) {
      case 0:
        return { transfer_incoming_count_limit: rng.pick([0, 1, 4, 50]) };
      case 1:
        return { transfer_incoming_bytes_limit: rng.pick([null, 1, 100_000]) };
      case 2:
        return { transfer_message_bytes_limit: rng.pick([null, 1, 1_000]) };
      case 3:
        return { transfer_incoming_bytes_throttle_threshold: rng.pick([0, 1, 10_000_000]) };
      case 4:
        return { validate: rng.chance(0.5) };
      case 5:
        return { nthreads: rng.range(1, 3) };
      case 6:
        return { generation: rng.range(-3, 3) };
      case 7:
        return { running: rng.chance(0.5) };
      case 8:
        // What a test does to hold back or free tasks with resource restrictions.
        return {
          available_resources: Object.fromEntries(
            [...ws.totalResources.keys()].map((r) => [r, rng.pick([0, 0.5, 1])]),
          ),
        };
      default:
        return {
          transition_counter_max: rng.chance(0.3) ? false : ws.transitionCounter + rng.range(1, 8),
        };
    }
  }

  /** Remember what the port asked for, so that completions often answer real requests. */
  note(instructions: Instruction[]): void {
    for (const inst of instructions) {
      if (inst.cls === "Execute") this.out.executes.set(inst.key, this.runIdOf(inst.key));
      else if (inst.cls === "GatherDep")
        this.out.gathers.push({
          worker: inst.worker,
          keys: [...inst.toGather],
          totalNbytes: inst.totalNbytes,
        });
    }
  }

  private runIdOf(key: string): number {
    return this.ws.tasks.get(key)?.runId ?? -1;
  }
}

/** One chaos stream as a trace, cut at the first stimulus the port raises on. */
export function chaosTrace(seed: number, steps: number): Record<string, unknown> {
  const validate = new Rng(seed ^ 0x2545f491).chance(0.7);
  const s = new ChaosStream(seed, validate);
  const events: Record<string, unknown>[] = [];
  const storeErrors: Record<string, StoreError[]> = {};
  const configBefore: Record<string, Record<string, unknown>> = {};
  // Attributes a recording sets after construction (FORMAT.md `config`), now and then.
  const extras: Record<string, unknown> = {};
  if (s.rng.chance(0.1)) extras.running = false;
  if (s.rng.chance(0.1)) extras.generation = s.rng.range(-5, 0);
  applyConfig(s.ws, extras, "config");
  // Taken before the stream: tampering changes these attributes as it goes.
  const config = {
    nthreads: s.ws.nthreads,
    address: ADDRESS,
    resources: Object.fromEntries(s.ws.totalResources),
    transfer_incoming_count_limit: s.ws.transferIncomingCountLimit,
    transfer_incoming_bytes_limit: null,
    transfer_message_bytes_limit: null,
    transfer_incoming_bytes_throttle_threshold: s.ws.transferIncomingBytesThrottleThreshold,
    validate,
    transition_counter_max: false,
    ...extras,
  };
  let error: string | null = null;
  for (let i = 0; i < steps && error === null; i++) {
    const tampered = s.tamper();
    if (tampered !== null) {
      configBefore[String(i)] = tampered;
      applyConfig(s.ws, tampered, `config_before of step ${i}`);
    }
    const ev = s.next();
    events.push(eventToDict(ev));
    s.store.failures.clear();
    if (s.rng.chance(0.04)) {
      // Dask's store may spill to disk and fail; the seed turns that into a task error.
      const key = s.rng.pick(s.keys);
      const err = { key, exception_text: `OSError('disk full: ${key}')`, traceback_text: "" };
      s.store.failures.set(key, new TaskError(err.exception_text, err.traceback_text));
      storeErrors[String(i)] = [err];
    }
    try {
      s.note(s.ws.handleStimulus(ev));
    } catch (err) {
      error = `${err instanceof Error ? err.name : typeof err}: ${String(err).split("\n")[0]}`;
    }
  }
  return {
    name: `oracle-chaos-seed-${seed}`,
    port_error: error,
    // What the port held after the last stimulus, for checking that the trace replays it.
    port_state: error === null ? stateSnapshot(s.ws) : null,
    config,
    events,
    data_store_errors: storeErrors,
    config_before: configBefore,
  };
}

function main(argv: readonly string[]): void {
  new Command()
    .name("oracle-chaos")
    .description("write random stimulus streams that ignore validity, as traces for record.py")
    .requiredOption("--out <dir>", "output directory")
    .option("--from <n>", "first seed", "1")
    .option("--count <n>", "number of seeds", "100")
    .option("--steps <n>", "stimuli per stream (cut at the port's first error)", "60")
    .action((o: { out: string; from: string; count: string; steps: string }) => {
      mkdirSync(o.out, { recursive: true });
      const from = nonNegativeInteger(o.from, "--from");
      const count = nonNegativeInteger(o.count, "--count");
      const steps = nonNegativeInteger(o.steps, "--steps");
      for (let seed = from; seed < from + count; seed++) {
        writeFileSync(
          join(o.out, `chaos-${seed}.trace.json`),
          JSON.stringify(chaosTrace(seed, steps)),
        );
      }
    })
    .parse(argv as string[]);
}

if (isEntryPoint(import.meta.url)) {
  process.exitCode = await runScript("oracle-chaos", async (argv) => {
    main(["node", "chaos.ts", ...argv]);
    return 0;
  });
}
