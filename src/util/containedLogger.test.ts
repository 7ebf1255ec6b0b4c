import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { containLogger } from "./containedLogger.ts";

/** A pino logger at `level` whose destination fails every write, as a full disk would. */
function diskFull(level = "info"): pino.Logger {
  return pino(
    { level },
    {
      write() {
        throw new Error("disk full");
      },
    },
  );
}

/** The reports made, and a reporter adding to them. */
function reports(): { texts: string[]; report: (text: string) => void } {
  const texts: string[] = [];
  return { texts, report: (text) => void texts.push(text) };
}

describe("containLogger", () => {
  it("keeps a destination's failure from the caller, and says so once, as Python's '--- Logging error ---'", () => {
    const { texts, report } = reports();
    const logger = containLogger(diskFull(), report);
    expect(() => logger.info({ key: "x" }, "task done")).not.toThrow();
    expect(() => logger.error(new Error("a bug"), "failed")).not.toThrow();
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(
      /^--- Logging error ---\nlogger\.info\(\) threw: Error: disk full\n {4}at /,
    );
    expect(texts[0]).toContain("further failures of this logger are not reported");
  });

  it("contains its children, which share the one report", () => {
    const { texts, report } = reports();
    const logger = containLogger(diskFull(), report);
    const child = logger.child({ name: "weft.worker" });
    const grandchild = child.child({ peer: "tcp://a:1" });
    expect(() => grandchild.warn("a peer went away")).not.toThrow();
    expect(() => child.info("worker started")).not.toThrow();
    expect(() => logger.info("scheduler started")).not.toThrow();
    expect(texts).toHaveLength(1);
  });

  it("contains a hand-made logger whose methods throw, a child that cannot be made included", () => {
    const { texts, report } = reports();
    const broken = () => {
      throw new TypeError("no logging here");
    };
    const handMade = {
      info: broken,
      warn: broken,
      error: broken,
      debug: broken,
      child: broken,
      isLevelEnabled: broken,
    } as unknown as pino.Logger;
    const logger = containLogger(handMade, report);
    expect(logger.info("a line")).toBeUndefined();
    expect(logger.isLevelEnabled("info")).toBeUndefined();
    // Its lines go where the parent's go.
    expect(logger.child({ name: "weft.worker" })).toBe(logger);
    expect(texts).toEqual([
      expect.stringMatching(
        /^--- Logging error ---\nlogger\.info\(\) threw: TypeError: no logging here\n/,
      ),
    ]);
  });

  it("contains a frozen logger's methods and a getter that throws", () => {
    const { texts, report } = reports();
    const frozen = Object.freeze({
      info() {
        throw new Error("frozen and broken");
      },
      get warn(): never {
        throw new Error("no warn");
      },
    }) as unknown as pino.Logger;
    const logger = containLogger(frozen, report);
    expect(() => logger.info("x")).not.toThrow();
    expect(() => logger.warn("y")).not.toThrow();
    expect(texts).toHaveLength(1);
  });

  it("reports once for a logger given twice, and passes a contained one through", () => {
    const { texts, report } = reports();
    const broken = diskFull();
    const a = containLogger(broken, report);
    expect(containLogger(broken, report)).toBe(a);
    expect(containLogger(a, report)).toBe(a);
    expect(containLogger(a.child({ name: "c" }), report)).not.toBe(a);
    a.info("one");
    containLogger(a.child({ name: "c" })).info("two");
    expect(texts).toHaveLength(1);
  });

  it("writes a line whose error cannot be read with what of it can, without a report: the value failed, not the logger", () => {
    const lines: Record<string, { message?: string; stack?: string }>[] = [];
    const raw = pino(
      { serializers: { err: pino.stdSerializers.errWithCause } },
      { write: (s: string) => void lines.push(JSON.parse(s)) },
    );
    const { texts, report } = reports();
    const logger = containLogger(raw, report);
    const hidden = new Error("hidden");
    Object.defineProperty(hidden, "stack", {
      get() {
        throw new Error("stack getter");
      },
    });
    logger.error({ err: hidden, plugin: "p" }, "plugin failed");
    logger.error(hidden);
    expect(lines.map((l) => [l.msg, l.plugin, l.err?.message])).toEqual([
      ["plugin failed", "p", "hidden"],
      ["hidden", undefined, "hidden"],
    ]);
    expect(texts).toEqual([]);
    // A logger that fails all the same is reported, with its own failure.
    const broken = containLogger(diskFull(), report);
    broken.error({ err: hidden }, "plugin failed");
    expect(texts).toEqual([expect.stringContaining("logger.error() threw: Error: disk full")]);
  });

  it("stands in for the methods weft calls that a hand-made logger lacks, without a report", () => {
    const lines: string[] = [];
    const { texts, report } = reports();
    const minimal = { warn: (msg: string) => void lines.push(msg) } as unknown as pino.Logger;
    const logger = containLogger(minimal, report);
    expect(logger.debug("unheard")).toBeUndefined();
    expect(logger.child({ name: "c" })).toBe(logger);
    expect(logger.isLevelEnabled("debug")).toBe(true);
    logger.child({ name: "c" }).warn("heard");
    expect(lines).toEqual(["heard"]);
    expect((logger as unknown as Record<string, unknown>).level).toBeUndefined();
    expect(texts).toEqual([]);
  });

  it("reports an async method's rejection rather than leave it unhandled", async () => {
    const { texts, report } = reports();
    const asyncLogger = {
      info: async () => {
        throw new Error("remote log sink down");
      },
    } as unknown as pino.Logger;
    const logger = containLogger(asyncLogger, report);
    logger.info("sent away");
    await new Promise((r) => setTimeout(r, 10));
    expect(texts).toEqual([
      expect.stringMatching(
        /^--- Logging error ---\nlogger\.info\(\) threw: Error: remote log sink down\n/,
      ),
    ]);
  });

  it("goes on when even the report fails", () => {
    const logger = containLogger(diskFull(), () => {
      throw new Error("stderr closed");
    });
    expect(() => logger.info("x")).not.toThrow();
  });

  it("leaves a working logger as it is: its lines, its level, a level changed later", () => {
    const lines: Record<string, unknown>[] = [];
    const raw = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const { texts, report } = reports();
    const logger = containLogger(raw, report);
    logger.debug("hidden");
    logger.child({ name: "weft.scheduler" }).info({ key: "x" }, "shown");
    expect(logger.isLevelEnabled("debug")).toBe(false);
    logger.level = "debug";
    expect(raw.level).toBe("debug");
    logger.debug("now shown");
    expect(lines.map((l) => [l.msg, l.name, l.key])).toEqual([
      ["shown", "weft.scheduler", "x"],
      ["now shown", undefined, undefined],
    ]);
    expect(logger.bindings()).toEqual({});
    expect(texts).toEqual([]);
  });

  it("stands for the logger to what inspects or changes it: a spy, its keys, a frozen one's", () => {
    const raw = pino({ level: "info" }, { write() {} });
    const logger = containLogger(raw, () => {});
    const spy = vi.spyOn(logger, "warn");
    logger.warn("watched");
    expect(spy).toHaveBeenCalledWith("watched");
    spy.mockRestore();
    expect(Object.keys(logger)).toEqual(Object.keys(raw));
    expect("info" in logger).toBe(true);
    expect(Object.getPrototypeOf(logger)).toBe(Object.getPrototypeOf(raw));
    const frozen = containLogger(Object.freeze({ info() {} }), () => {});
    expect(Object.keys(frozen)).toEqual(["info"]);
    expect(Object.getOwnPropertyDescriptor(frozen, "info")?.configurable).toBe(true);
  });
});
