import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { containLogger } from "./containedLogger.ts";
import { LogRecords, logCountProblem, MAX_FIELD_CHARS, MAX_MESSAGE_CHARS } from "./logRecords.ts";

/** A pino logger writing into `lines`. */
function logger(level: string, lines: string[]) {
  return pino({ name: "weft.test", level }, { write: (s: string) => lines.push(s) });
}

describe("LogRecords", () => {
  it("records what the wrapped logger and its children write, at the levels it lets through", () => {
    const lines: string[] = [];
    const records = new LogRecords(100);
    const log = records.wrap(logger("info", lines));
    log.debug("not enabled");
    log.info("started %d threads", 4);
    log.warn({ key: "x" }, "slow");
    const child = log.child({ name: "weft.peer" });
    child.error({ err: new RangeError("too far") }, "fetch failed");
    child.error(new TypeError("bad"));
    const got = records.recent();
    expect(got.map(({ time: _, ...r }) => r)).toEqual([
      { level: "info", msg: "started 4 threads", name: "weft.test" },
      { level: "warn", msg: "slow", name: "weft.test", fields: { key: "x" } },
      { level: "error", msg: "fetch failed", name: "weft.peer", err: "RangeError: too far" },
      { level: "error", msg: "bad", name: "weft.peer", err: "TypeError: bad" },
    ]);
    expect(got.every((r) => Math.abs(r.time - Date.now()) < 10_000)).toBe(true);
    // The logger still writes to its destination, and works as a logger.
    expect(lines).toHaveLength(4);
    expect(log.isLevelEnabled("debug")).toBe(false);
    log.level = "debug";
    log.debug("now enabled");
    expect(records.recent(1)[0].msg).toBe("now enabled");
  });

  it("keeps the context logged with a record, its plain values only", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    log.warn({ worker: "tcp://w:1", reason: "the name is taken" }, "refused a worker");
    log.error(
      { err: new Error("x"), key: "inc-1", n: 3, ok: false, none: null, big: 5n, obj: { a: 1 } },
      "could not run task",
    );
    log.info({ long: "y".repeat(MAX_FIELD_CHARS + 10) }, "long");
    log.info({ obj: { a: 1 } }, "nothing plain");
    const got = records.recent().map(({ time: _, ...r }) => r);
    expect(got[0].fields).toEqual({ worker: "tcp://w:1", reason: "the name is taken" });
    expect(got[1]).toEqual({
      level: "error",
      msg: "could not run task",
      name: "weft.test",
      err: "Error: x",
      fields: { key: "inc-1", n: 3, ok: false, none: null, big: "5" },
    });
    expect(got[2].fields?.long).toBe(`${"y".repeat(MAX_FIELD_CHARS - 1)}…`);
    expect(got[3]).not.toHaveProperty("fields");
  });

  it("cuts a long message and error, as it cuts fields", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    const long = "z".repeat(MAX_MESSAGE_CHARS + 5);
    log.info(long);
    log.error({ err: new Error(long) }, "%s", long);
    const [plain, failed] = records.recent();
    const cut = `${"z".repeat(MAX_MESSAGE_CHARS - 1)}…`;
    expect(plain.msg).toBe(cut);
    expect(failed.msg).toBe(cut);
    expect(failed.err).toBe(`Error: ${"z".repeat(MAX_MESSAGE_CHARS - 8)}…`);
  });

  it("does not split a surrogate pair where it cuts", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    // The emoji's two UTF-16 units straddle the cut at MAX_MESSAGE_CHARS - 1.
    log.info(`${"z".repeat(MAX_MESSAGE_CHARS - 2)}😀tail`);
    expect(records.recent()[0].msg).toBe(`${"z".repeat(MAX_MESSAGE_CHARS - 2)}…`);
  });

  it("keeps the last records only, and nothing with length 0", () => {
    const records = new LogRecords(3);
    const log = records.wrap(logger("info", []));
    for (let i = 0; i < 5; i++) log.info(`line ${i}`);
    expect(records.recent().map((r) => r.msg)).toEqual(["line 2", "line 3", "line 4"]);
    expect(records.recent(2).map((r) => r.msg)).toEqual(["line 3", "line 4"]);
    expect(records.recent(0)).toEqual([]);
    expect(records.recent(5).map((r) => r.msg)).toEqual(["line 2", "line 3", "line 4"]);
    const none = new LogRecords(0);
    const plain = logger("info", []);
    expect(none.wrap(plain)).toBe(plain);
  });

  it("says what is wrong with a count", () => {
    expect(logCountProblem(undefined)).toBeNull();
    expect(logCountProblem(5)).toBeNull();
    expect(logCountProblem(0)).toBeNull();
    expect(logCountProblem(2 ** 53)).toBe("n must be an integer ≥ 0");
    expect(logCountProblem(-1)).toBe("n must be an integer ≥ 0");
    expect(logCountProblem("5")).toBe("n must be an integer ≥ 0");
  });

  it("records fatal too; a child without a name of its own keeps its parent's", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    log.fatal("down");
    log.child({ key: "x" }).info("from a child");
    expect(records.recent().map(({ level, msg, name }) => ({ level, msg, name }))).toEqual([
      { level: "fatal", msg: "down", name: "weft.test" },
      { level: "info", msg: "from a child", name: "weft.test" },
    ]);
  });

  it("keeps no fields from an Error logged alone, nor an err that is not an Error", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    log.error(Object.assign(new Error("bad"), { code: "E1" }));
    log.warn({ err: "only text" }, "m");
    const [alone, textErr] = records.recent();
    expect(alone).not.toHaveProperty("fields");
    expect(alone.err).toBe("Error: bad");
    expect(textErr).not.toHaveProperty("fields");
    expect(textErr).not.toHaveProperty("err");
  });

  it("hands out the same method each time, and records no name when the logger has none to tell", () => {
    const records = new LogRecords(10);
    const log = records.wrap(logger("info", []));
    expect(log.info).toBe(log.info);
    const nameless = logger("info", []);
    nameless.bindings = () => {
      throw new Error("no bindings");
    };
    records.wrap(nameless).info("anonymous");
    expect(records.recent(1)[0]).not.toHaveProperty("name");
  });

  it("records an error whose fields cannot be read, without throwing into the caller", () => {
    const records = new LogRecords(10);
    // A contained logger, as a scheduler's or a worker's is: pino's own reading of the error
    // fails there, and is reported (here: kept) instead of thrown.
    const reports: string[] = [];
    const log = records.wrap(containLogger(logger("info", []), (r) => void reports.push(r)));
    const hostile = new Proxy(new Error("hidden"), {
      get() {
        throw new Error("no reading me");
      },
    });
    expect(() => log.error({ err: hostile, key: "x" }, "task failed")).not.toThrow();
    expect(records.recent()).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "task failed",
        // Neither its name nor its message could be read.
        err: "Error: ",
        fields: { key: "x" },
      }),
    ]);
    // Context whose keys cannot be listed: the record says so.
    const unlisted = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("no listing me");
        },
      },
    );
    expect(() => log.warn(unlisted, "odd context")).not.toThrow();
    expect(records.recent(1)).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "a record that could not be read: Error: no listing me",
      }),
    ]);
    expect(reports).toHaveLength(1);
  });

  it("writes at a level enabled after its method was first handed out", () => {
    const lines: string[] = [];
    const log = new LogRecords(10).wrap(logger("info", lines));
    log.debug("not enabled");
    log.level = "debug";
    log.debug("now enabled");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["now enabled"]);
  });
});
