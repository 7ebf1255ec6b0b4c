import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { containLogger } from "./containedLogger.ts";
import { loggerOption } from "./loggerOption.ts";

const fallback = () => pino({ level: "silent" });

describe("loggerOption", () => {
  it("contains the logger given, or the fallback without one", () => {
    const given = pino({ level: "silent" });
    expect(loggerOption("Scheduler", given, fallback)).toBe(containLogger(given));
    const made = pino({ level: "silent" });
    expect(loggerOption("Scheduler", undefined, () => made)).toBe(containLogger(made));
  });

  it("refuses what is no logger, naming whose option, rather than run on without a log", () => {
    const handMade = { child() {}, info() {}, warn() {} };
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no reading me");
        },
      },
    );
    for (const [i, bad] of [5, null, "stderr", handMade, hostile].entries()) {
      expect(() => loggerOption("Worker", bad, fallback), `case ${i}`).toThrow(
        /^Worker option logger must be a pino logger, got /,
      );
    }
    expect(() => loggerOption("Scheduler", 5, fallback)).toThrow(
      new TypeError("Scheduler option logger must be a pino logger, got 5"),
    );
    // Enough of one: debug and trace are taken as silent.
    expect(() => loggerOption("Worker", { ...handMade, error() {} }, fallback)).not.toThrow();
  });
});
