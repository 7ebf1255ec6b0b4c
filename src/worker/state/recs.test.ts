import { describe, expect, it } from "vitest";
import { Recs, sameFinish } from "./recs.ts";
import { TaskState } from "./taskState.ts";

const tasks = Array.from({ length: 40 }, (_, i) => new TaskState(`t${i}`));

describe("Recs", () => {
  it("pops the last inserted entry, like dict.popitem()", () => {
    const r = new Recs().set(tasks[0], "fetch").set(tasks[1], "ready").set(tasks[2], "released");
    expect(r.lastTask()).toBe(tasks[2]);
    expect(r.popLast()).toBe("released");
    expect(r.popLast()).toBe("ready");
    expect(r.size).toBe(1);
  });

  it("keeps the position of a key that is set again, and appends one deleted then set", () => {
    const r = new Recs().set(tasks[0], "fetch").set(tasks[1], "ready");
    r.set(tasks[0], "missing");
    expect([...r].map(([ts, f]) => [ts.key, f])).toEqual([
      ["t0", "missing"],
      ["t1", "ready"],
    ]);
    expect(r.delete(tasks[0])).toBe("missing");
    r.set(tasks[0], "fetch");
    expect([...r].map(([ts]) => ts.key)).toEqual(["t1", "t0"]);
  });

  it("behaves the same once large enough to be indexed", () => {
    const r = new Recs();
    for (const ts of tasks) r.set(ts, "released");
    r.set(tasks[3], "forgotten");
    expect(r.get(tasks[3])).toBe("forgotten");
    expect(r.delete(tasks[39])).toBe("released");
    expect(r.lastTask()).toBe(tasks[38]);
    const copy = r.copy();
    expect(copy.size).toBe(39);
    let n = 0;
    while (copy.size > 0) {
      copy.popLast();
      n++;
    }
    expect(n).toBe(39);
    expect(r.size).toBe(39);
  });

  it("update() is dict.update()", () => {
    const a = new Recs().set(tasks[0], "fetch").set(tasks[1], "ready");
    const b = new Recs().set(tasks[2], "memory").set(tasks[0], "missing");
    a.update(b);
    expect([...a].map(([ts, f]) => `${ts.key}:${f}`)).toEqual([
      "t0:missing",
      "t1:ready",
      "t2:memory",
    ]);
  });

  it("compares recommendations with arguments element by element", () => {
    expect(sameFinish(["memory", 1, 2], ["memory", 1, 2])).toBe(true);
    expect(sameFinish(["memory", 1, 2], ["memory", 1, 3])).toBe(false);
    expect(sameFinish("fetch", ["fetch"])).toBe(false);
  });
});
