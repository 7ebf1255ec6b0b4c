import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { main } from "./collatz.ts";
import { bestIn, better, collatzSteps } from "./collatzTasks.ts";
import { outputSink } from "./outputSink.ts";

describe("the Collatz search example", () => {
  it("counts steps and picks the longest, then the smaller", () => {
    expect(collatzSteps(1)).toBe(0);
    expect(collatzSteps(6)).toBe(8);
    expect(collatzSteps(27)).toBe(111);
    expect(bestIn(1, 10)).toEqual({ n: 9, steps: 19 });
    expect(better({ n: 5, steps: 3 }, { n: 4, steps: 3 })).toEqual({ n: 4, steps: 3 });
  });

  it("finds the answer with tasks that submit tasks, and says where they ran", async () => {
    const out = outputSink();
    const code = await main(
      20_000,
      { executor: "inline", validate: true, logger: pino({ level: "silent" }) },
      out.stream,
    );
    expect(out.text()).toMatch(/^below 20,000: 17647 takes 278 steps to reach 1\n/);
    expect(out.text()).toMatch(/checked against a direct loop: equal/);
    expect(out.text().match(/^ {2}inproc:\/\/.*: \d+ tasks$/gm)?.length).toBe(2);
    expect(code).toBe(0);
  });

  it("refuses an N it cannot search", async () => {
    const out = outputSink();
    expect(await main(1, {}, out.stream)).toBe(1);
    expect(out.text()).toBe("collatz: N must be an integer ≥ 2, got 1\n");
  });
});
