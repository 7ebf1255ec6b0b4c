import { describe, expect, it } from "vitest";
import { CloseBudget } from "./closeBudget.ts";
import { runGcScript } from "./testGcScript.ts";

describe("CloseBudget", () => {
  it("waits on work until it settles, a rejection counting as settled", async () => {
    const budget = new CloseBudget(5);
    expect(await budget.settles(new Promise((r) => setTimeout(r, 10)))).toBe(true);
    expect(await budget.settles(Promise.reject(new Error("x")))).toBe(true);
    budget.clear();
  });

  it("past its deadline (0, negative, NaN: now), what never settles is given up, what settles within the turn is not", async () => {
    for (const seconds of [0, -1, Number.NaN]) {
      const budget = new CloseBudget(seconds);
      expect(await budget.settles(new Promise(() => {}))).toBe(false);
      expect(await budget.settles(undefined)).toBe(true);
      expect(await budget.settles((async () => {})())).toBe(true);
    }
  });

  it("Infinity (or beyond a timer's reach) has no deadline and no timer", async () => {
    const budget = new CloseBudget(Number.POSITIVE_INFINITY);
    expect(await budget.settles(new Promise((r) => setTimeout(r, 20)))).toBe(true);
    budget.clear();
  });

  it("keeps a process alive until its deadline: a close waiting only on a teardown that never settles goes on rather than the process exiting half closed", () => {
    const url = new URL("./closeBudget.ts", import.meta.url).href;
    const script = `
      const { CloseBudget } = await import(${JSON.stringify(url)});
      const settled = await new CloseBudget(0.1).settles(new Promise(() => {}));
      console.log(JSON.stringify({ settled, closeWentOn: true }));
    `;
    expect(runGcScript(script, [], 30_000)).toEqual({ settled: false, closeWentOn: true });
  });
});
