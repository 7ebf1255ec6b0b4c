import { describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { resolveSchedulerOptions } from "./schedulerOptions.ts";

const { logger } = memoryLogger();

describe("resolveSchedulerOptions", () => {
  it("fills in the documented defaults", () => {
    const o = resolveSchedulerOptions({ logger });
    expect(o).toMatchObject({
      listen: "tcp://127.0.0.1:0",
      workerTtlMs: 30_000,
      idleTimeoutMs: null,
      handshakeTimeoutMs: 10_000,
      batchedSendIntervalMs: 2,
      taskStreamLength: 100_000,
      workStealing: true,
      workStealingIntervalMs: 100,
      activeMemoryManager: true,
      activeMemoryManagerIntervalMs: 2000,
      logLength: 10_000,
      eventsLogLength: 100_000,
    });
  });

  it("refuses options that are not an object", () => {
    expect(() => resolveSchedulerOptions(null as never)).toThrow(
      new TypeError("Scheduler options must be an object, got null"),
    );
    expect(() => resolveSchedulerOptions("tcp://x:1" as never)).toThrow(
      new TypeError('Scheduler options must be an object, got "tcp://x:1"'),
    );
  });

  it("shows a listen address JSON cannot show (a BigInt) in its refusal", () => {
    expect(() => resolveSchedulerOptions({ logger, listen: 5n as never })).toThrow(
      new TypeError('Scheduler option listen must be an address, got "5n"'),
    );
  });

  it("refuses a preload that is not an array, naming the option", () => {
    // It failed as "(o.preload ?? []).map is not a function".
    expect(() => resolveSchedulerOptions({ logger, preload: "./setup.ts" as never })).toThrow(
      new TypeError(
        'Scheduler option preload must be an array of file URLs or paths, got "./setup.ts"',
      ),
    );
  });

  it("refuses a workerTtlMs of 0, which would remove every worker at once", () => {
    expect(() => resolveSchedulerOptions({ logger, workerTtlMs: 0 })).toThrow(
      "Scheduler option workerTtlMs must be > 0 (Infinity: never)",
    );
    expect(resolveSchedulerOptions({ logger, workerTtlMs: Infinity }).workerTtlMs).toBe(Infinity);
  });

  it("refuses an idleTimeoutMs of 0 (null is never)", () => {
    expect(() => resolveSchedulerOptions({ logger, idleTimeoutMs: 0 })).toThrow(
      /^Scheduler option idleTimeoutMs must be a number of ms > 0/,
    );
  });

  it("refuses timer delays a Node.js timer cannot wait, which fire after 1 ms", () => {
    for (const bad of [0, -1, 2 ** 31, 1e300, Number.NaN]) {
      expect(() => resolveSchedulerOptions({ logger, handshakeTimeoutMs: bad })).toThrow(
        /^Scheduler option handshakeTimeoutMs must be a number of ms > 0 and at most 2147483647 \(Infinity: no limit\), got /,
      );
    }
    expect(
      resolveSchedulerOptions({ logger, handshakeTimeoutMs: Infinity }).handshakeTimeoutMs,
    ).toBe(Infinity);
    for (const bad of [2 ** 31, Infinity]) {
      expect(() => resolveSchedulerOptions({ logger, batchedSendIntervalMs: bad })).toThrow(
        /^Scheduler option batchedSendIntervalMs must be a number of ms >= 0 and at most 2147483647, got /,
      );
    }
    expect(
      resolveSchedulerOptions({ logger, batchedSendIntervalMs: 0 }).batchedSendIntervalMs,
    ).toBe(0);
  });

  it("refuses a logger that is none", () => {
    expect(() => resolveSchedulerOptions({ logger: 5 as never })).toThrow(
      new TypeError("Scheduler option logger must be a pino logger, got 5"),
    );
  });

  it("refuses a count that is not an integer", () => {
    expect(() => resolveSchedulerOptions({ logger, logLength: 1.5 })).toThrow(
      "Scheduler option logLength must be an integer >= 0, got 1.5",
    );
  });

  it("refuses state options the machine does not have, or that the server sets", () => {
    expect(() =>
      resolveSchedulerOptions({ logger, state: { workerSaturaton: 2 } as never }),
    ).toThrow(
      new TypeError(
        'Scheduler option state: unknown option "workerSaturaton" (did you mean workerSaturation?)',
      ),
    );
    expect(() => resolveSchedulerOptions({ logger, state: { clock: () => 1 } as never })).toThrow(
      /^Scheduler option state: unknown option "clock" \(the options are workerSaturation, .*; the server sets clock, and validate is a Scheduler option\)$/,
    );
    expect(() => resolveSchedulerOptions({ logger, state: 5 as never })).toThrow(
      new TypeError("Scheduler option state must be an object, got 5"),
    );
    expect(resolveSchedulerOptions({ logger, state: { workerSaturation: 2 } }).state).toEqual({
      workerSaturation: 2,
    });
  });
});
