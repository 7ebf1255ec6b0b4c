import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../util/timers.ts";
import { millisecondsOption } from "./millisecondsOption.ts";

const FORMS =
  "must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h";

const ms = (text: string): number => millisecondsOption("--death-timeout", text, MAX_TIMER_MS);

describe("millisecondsOption (the <duration> options of milliseconds)", () => {
  it("reads a bare number as milliseconds, as these options always did", () => {
    expect(ms("60")).toBe(60);
    expect(ms("30000")).toBe(30_000);
    expect(ms("1e3")).toBe(1000);
    expect(ms(String(MAX_TIMER_MS))).toBe(MAX_TIMER_MS);
  });

  it("reads a number with a unit as Dask's durations (60s, 5m, 1.5h, 250ms)", () => {
    // They were refused: `must be a positive integer, got 60s`.
    expect(ms("60s")).toBe(60_000);
    expect(ms("5m")).toBe(300_000);
    expect(ms("1.5h")).toBe(5_400_000);
    expect(ms("250ms")).toBe(250);
    expect(ms("1 hour")).toBe(3_600_000);
    expect(ms("30 seconds")).toBe(30_000);
    expect(ms("2d")).toBe(2 * 86_400_000);
    expect(ms("1e3ms")).toBe(1000);
    expect(ms("5000us")).toBe(5);
    // 1.1 s is 1100.0000000000002 ms in floating point.
    expect(ms("1.1s")).toBe(1100);
    expect(ms("0.001s")).toBe(1);
    expect(ms(".5s")).toBe(500);
    // With a plus sign, as a bare number (+60) always was: it was refused.
    expect(ms("+60s")).toBe(60_000);
    expect(ms("+60")).toBe(60);
  });

  it("refuses what it refused, and durations that are no positive whole number of ms", () => {
    for (const bad of [
      "0",
      "-1",
      "1.5",
      "",
      "x",
      "inf",
      "0x10",
      " 5 ",
      "1_000",
      "1e400",
      "0s",
      "0ms",
      "-5s",
      "1.5ms",
      "100us",
      ".s",
      ".5",
      "s",
      "5 m s",
    ]) {
      expect(() => ms(bad), JSON.stringify(bad)).toThrow(`--death-timeout ${FORMS}, got ${bad}`);
    }
  });

  it("says which units it knows when a unit is not one of them", () => {
    expect(() => ms("5mins")).toThrow(
      `--death-timeout ${FORMS}, got 5mins: not a duration: "5mins": invalid time unit "mins" (valid: s, ms,`,
    );
  });

  it("refuses more than `atMost`, a duration as a bare number, saying why when told", () => {
    expect(() => ms(String(MAX_TIMER_MS + 1))).toThrow(
      `--death-timeout must be at most ${MAX_TIMER_MS} ms, got ${MAX_TIMER_MS + 1}`,
    );
    expect(() => millisecondsOption("--timeout", "25d", MAX_TIMER_MS, "about 24.8 days")).toThrow(
      `--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got 25d`,
    );
    // Past 2^53 a number is not exact: 99999999999999999999 reads as 1e20.
    expect(() =>
      millisecondsOption("--worker-ttl", "99999999999999999999", Number.MAX_SAFE_INTEGER),
    ).toThrow(
      `--worker-ttl must be at most ${Number.MAX_SAFE_INTEGER} ms, got 99999999999999999999`,
    );
  });
});
