import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { type ClientOptions, connectTimeoutMs, newClientId } from "./clientOptions.ts";

describe("connectTimeoutMs", () => {
  it("gives the timeout, 30 s unless told", () => {
    expect(connectTimeoutMs({})).toBe(30_000);
    expect(connectTimeoutMs({ timeoutMs: 5 })).toBe(5);
    expect(connectTimeoutMs({ timeoutMs: MAX_TIMER_MS })).toBe(MAX_TIMER_MS);
  });

  it("refuses a timeout of 0", () => {
    expect(() => connectTimeoutMs({ timeoutMs: 0 })).toThrow(
      new RangeError(
        `Client option timeoutMs must be a number > 0 and at most ${MAX_TIMER_MS} (about 24.8 days), got 0`,
      ),
    );
  });

  it("refuses frame and message limits that are not numbers, naming the option and the value", () => {
    for (const option of ["maxFrameBytes", "maxMessageBytes"] as const) {
      expect(() => connectTimeoutMs({ [option]: Symbol("big") as unknown as number })).toThrow(
        new RangeError(`Client option ${option} must be an integer, got Symbol(big)`),
      );
    }
  });

  it("refuses an empty name", () => {
    expect(() => connectTimeoutMs({ name: "" })).toThrow(
      new TypeError('Client option name must be a non-empty string, got ""'),
    );
  });

  it("refuses a logger without child, which the client makes its own from", () => {
    const logger = pino({ level: "silent" });
    expect(connectTimeoutMs({ logger })).toBe(30_000);
    const { info, warn, error } = logger;
    expect(() =>
      connectTimeoutMs({ logger: { info, warn, error } as unknown as ClientOptions["logger"] }),
    ).toThrow(/^Client option logger must be a pino logger, got /);
  });

  it("takes a batching interval from 0 to the largest timer, and refuses others", () => {
    expect(connectTimeoutMs({ batchedSendIntervalMs: 0 })).toBe(30_000);
    expect(connectTimeoutMs({ batchedSendIntervalMs: MAX_TIMER_MS })).toBe(30_000);
    for (const bad of [-1, MAX_TIMER_MS + 1]) {
      expect(() => connectTimeoutMs({ batchedSendIntervalMs: bad })).toThrow(
        new RangeError(
          `Client option batchedSendIntervalMs must be a number of milliseconds ≥ 0, got ${bad}`,
        ),
      );
    }
  });
});

describe("newClientId", () => {
  it("is the name (client by default) and 8 hex digits, new each time", () => {
    expect(newClientId(undefined)).toMatch(/^client-[0-9a-f]{8}$/);
    const a = newClientId("etl");
    expect(a).toMatch(/^etl-[0-9a-f]{8}$/);
    expect(newClientId("etl")).not.toBe(a);
  });

  it("refuses a name making the ids the scheduler keeps for its datasets", () => {
    expect(() => newClientId("published")).toThrow(
      new RangeError(
        'Client option name "published" makes ids the scheduler keeps for its stand-in clients (published-…)',
      ),
    );
  });
});
