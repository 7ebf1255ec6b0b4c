import { describe, expect, it } from "vitest";
import {
  applyConfig,
  FailingDataStore,
  workerStateFromConfig,
} from "../../src/protocol/conformance.ts";
import { EVENT_CLASSES, eventFromDict } from "../../src/protocol/daskJson/events.ts";
import { stateSnapshot } from "../../src/protocol/daskJson/snapshot.ts";
import { TaskError } from "../../src/worker/state/errorMessage.ts";
import { InvalidTaskState, InvalidTransition } from "../../src/worker/state/errors.ts";
import { chaosTrace } from "./chaos.ts";

interface Trace {
  port_error: string | null;
  port_state: unknown;
  config: Record<string, unknown>;
  events: Record<string, unknown>[];
  data_store_errors: Record<string, { key: string; exception_text: string }[]>;
  config_before: Record<string, Record<string, unknown>>;
}

describe("chaosTrace", () => {
  it("is deterministic and its events replay to the same outcome", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const trace = chaosTrace(seed, 80) as unknown as Trace;
      expect(chaosTrace(seed, 80)).toEqual(trace);
      const store = new FailingDataStore();
      const ws = workerStateFromConfig(trace.config, `chaos ${seed}`, store);
      let error: string | null = null;
      trace.events.forEach((d, i) => {
        expect(error, `event ${i} follows an error`).toBeNull();
        const tampered = trace.config_before[String(i)];
        if (tampered !== undefined) applyConfig(ws, tampered, `step ${i}`);
        store.failures.clear();
        for (const e of trace.data_store_errors[String(i)] ?? [])
          store.failures.set(e.key, new TaskError(e.exception_text, ""));
        const ev = eventFromDict(d);
        try {
          ws.handleStimulus(ev);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
          const e = err as Error;
          error = `${e.name}: ${String(e).split("\n")[0]}`;
          // Errors of the seed's own classes carry the story; the others say which
          // event failed (workerState.ts, withContext).
          if (!(e instanceof InvalidTransition || e instanceof InvalidTaskState)) {
            expect(e.message).toContain(`while handling ${ev.cls}(stimulus_id=`);
          }
        }
      });
      expect(error).toBe(trace.port_error);
      if (error === null) expect(stateSnapshot(ws)).toEqual(trace.port_state);
    }
  });

  it("sends every kind of stimulus, store failure and tampering; errors and long streams come out", () => {
    const classes = new Set<string>();
    const errors = new Set<string>();
    let longest = 0;
    let storeFailures = 0;
    const tampered = new Set<string>();
    for (let seed = 1; seed <= 200; seed++) {
      const trace = chaosTrace(seed, 80) as unknown as Trace;
      storeFailures += Object.keys(trace.data_store_errors).length;
      for (const c of Object.values(trace.config_before))
        for (const k of Object.keys(c)) tampered.add(k);
      for (const e of trace.events) classes.add(String(e.cls));
      if (trace.port_error !== null) errors.add(trace.port_error.split(":")[0]);
      longest = Math.max(longest, trace.events.length);
    }
    expect([...classes].sort()).toEqual([...EVENT_CLASSES].sort());
    expect(errors).toEqual(
      new Set([
        "AssertionError",
        "KeyError",
        "InvalidTransition",
        "InvalidTaskState",
        "RuntimeError",
        "TransitionCounterMaxExceeded",
      ]),
    );
    expect(longest).toBe(80);
    expect(storeFailures).toBeGreaterThan(0);
    expect(tampered.size).toBe(10);
  });
});
