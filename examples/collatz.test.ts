import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { COLLATZ_USAGE, cli, main } from "./collatz.ts";
import { bestIn, better, collatzSteps } from "./collatzTasks.ts";
import { outputSink, runCli } from "./outputSink.ts";

describe("the Collatz search example", () => {
  it("counts steps and picks the longest, then the smaller", () => {
    expect(collatzSteps(1)).toBe(0);
    expect(collatzSteps(6)).toBe(8);
    expect(collatzSteps(27)).toBe(111);
    expect(bestIn(1, 10)).toEqual({ n: 9, steps: 19 });
    expect(better({ n: 5, steps: 3 }, { n: 4, steps: 3 })).toEqual({ n: 4, steps: 3 });
  });

  it("refuses a sequence that passes 2**53, where a number's arithmetic is no longer exact", () => {
    // The largest N searched exactly: every n below it stays under 2**53 (210964383's
    // sequence peaks at 6.4e15); 319804831's passes it (1.4e18), and floating point
    // counted 486 steps where there are 592.
    expect(collatzSteps(210_964_383)).toBe(475);
    expect(() => collatzSteps(319_804_831)).toThrow(
      new RangeError(
        "the Collatz sequence of 319804831 passes 2**53: its steps cannot be counted exactly",
      ),
    );
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

  it("refuses an N it cannot search, exit 2", async () => {
    const out = outputSink();
    expect(await main(1, {}, out.stream)).toBe(2);
    expect(await main(300_000_001, {}, out.stream)).toBe(2);
    expect(out.text()).toBe(
      "collatz: N must be an integer from 2 to 300,000,000, got 1\n" +
        "collatz: N must be an integer from 2 to 300,000,000, got 300000001\n",
    );
  });

  it("has a --help, and refuses what it does not take in one line, exit 2", async () => {
    const run = (...argv: string[]) => runCli(cli, ...argv);
    expect(await run("--help")).toEqual({ code: 0, out: `${COLLATZ_USAGE}\n`, err: "" });
    expect(COLLATZ_USAGE).toMatch(/^usage: npx tsx examples\/collatz.ts \[N\]\n/);
    expect(await run("lots")).toEqual({
      code: 2,
      out: "",
      err: 'collatz: N must be an integer from 2 to 300,000,000, got "lots" (see --help)\n',
    });
    expect(await run("-5")).toMatchObject({
      code: 2,
      err: /N must be an integer from 2 to 300,000,000, got "-5"/,
    });
    // Beyond, a sequence passes 2**53: refused at once, not after minutes of searching.
    expect(await run("400000000")).toMatchObject({
      code: 2,
      err: 'collatz: N must be an integer from 2 to 300,000,000, got "400000000" (see --help)\n',
    });
    expect(await run("--verbose")).toMatchObject({
      code: 2,
      err: "collatz: unknown option --verbose (see --help)\n",
    });
    expect(await run("10", "20")).toMatchObject({
      code: 2,
      err: "collatz: takes at most 1 argument, got 2 (see --help)\n",
    });
  });
});
