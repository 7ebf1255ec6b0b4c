import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REFUSED_REPORT_MS, reportRefusedConnections } from "./refusedConnections.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("reportRefusedConnections", () => {
  it("tells the first refusal at once, then how many since, at most once per period", () => {
    vi.useFakeTimers();
    const server = new EventEmitter();
    const told: number[] = [];
    const stop = reportRefusedConnections(server, (n) => told.push(n));
    for (let i = 0; i < 5; i++) server.emit("drop");
    expect(told).toEqual([1]);
    vi.advanceTimersByTime(REFUSED_REPORT_MS - 1);
    expect(told).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(told).toEqual([1, 4]);
    // A quiet period, then a new refusal: told at once again.
    vi.advanceTimersByTime(REFUSED_REPORT_MS);
    expect(told).toEqual([1, 4]);
    server.emit("drop");
    expect(told).toEqual([1, 4, 1]);
    server.emit("drop");
    stop();
    // What was not yet told is told on stopping; nothing after.
    expect(told).toEqual([1, 4, 1, 1]);
    server.emit("drop");
    vi.advanceTimersByTime(3 * REFUSED_REPORT_MS);
    expect(told).toEqual([1, 4, 1, 1]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
