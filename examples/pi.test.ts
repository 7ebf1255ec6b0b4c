import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { runWithReaderGone } from "../src/util/testReaderGone.ts";
import { outputSink, runCli } from "./outputSink.ts";
import { cli, main, PI_USAGE } from "./pi.ts";
import { hitsOfChunk, PiTally } from "./piTasks.ts";

describe("the π actor example", () => {
  it("counts darts the same way every time, and a chunk once", () => {
    expect(hitsOfChunk(3, 10_000)).toBe(hitsOfChunk(3, 10_000));
    expect(Math.abs((4 * hitsOfChunk(0, 100_000)) / 100_000 - Math.PI)).toBeLessThan(0.05);
    const t = new PiTally();
    expect(t.report(0, 10, 8)).toBe(true);
    expect(t.report(0, 10, 8)).toBe(false);
    expect(t.estimate()).toBe(3.2);
  });

  it("tallies the tasks' reports in one actor, read as they come", async () => {
    const out = outputSink();
    const code = await main(
      12,
      20_000,
      { executor: "inline", validate: true, logger: pino({ level: "silent" }) },
      out.stream,
    );
    const text = out.text();
    expect(text).toMatch(/^the tally lives on inproc:\/\/\S+\n/);
    expect(text).toMatch(/^ {2}240,000 of 240,000 darts$/m);
    expect(text).toMatch(/^π ≈ 3\.1\d{5} from 240,000 darts/m);
    expect(text).toMatch(/checked against a direct loop: equal\n$/);
    expect(code).toBe(0);
  });

  it("refuses counts it cannot use, exit 2", async () => {
    const out = outputSink();
    expect(await main(0, 10, {}, out.stream)).toBe(2);
    expect(out.text()).toBe("pi: CHUNKS must be an integer from 1 to 1,000,000, got 0\n");
    // A trillion futures were submitted at once: the client ran out of heap.
    const big = outputSink();
    expect(await main(1e12, 10, {}, big.stream)).toBe(2);
    expect(big.text()).toBe(
      "pi: CHUNKS must be an integer from 1 to 1,000,000, got 1000000000000\n",
    );
  });

  it("has a --help, and refuses what it does not take in one line, exit 2", async () => {
    const run = (...argv: string[]) => runCli(cli, ...argv);
    expect(await run("--help")).toEqual({ code: 0, out: `${PI_USAGE}\n`, err: "" });
    expect(PI_USAGE).toMatch(/^usage: npx tsx examples\/pi.ts \[CHUNKS \[SAMPLES\]\]\n/);
    expect(await run("64", "-h")).toMatchObject({ code: 0, out: `${PI_USAGE}\n` });
    // Read with Number, "abc" was NaN: "got NaN", after starting nothing but said so.
    expect(await run("abc")).toEqual({
      code: 2,
      out: "",
      err: 'pi: CHUNKS must be an integer from 1 to 1,000,000, got "abc" (see --help)\n',
    });
    expect(await run("4", "")).toMatchObject({ code: 2, err: /SAMPLES must be .*, got ""/ });
    // Read with Number, 0x10 was 16 chunks and " 4 " 4.
    for (const bad of ["0x10", "0b11", "0o7", " 4 ", "1_000"]) {
      expect(await run(bad), bad).toMatchObject({
        code: 2,
        err: `pi: CHUNKS must be an integer from 1 to 1,000,000, got ${JSON.stringify(bad)} (see --help)\n`,
      });
    }
    expect(await run("--chunks", "4")).toMatchObject({
      code: 2,
      err: "pi: unknown option --chunks (see --help)\n",
    });
    expect(await run("1", "2", "3")).toMatchObject({
      code: 2,
      err: "pi: takes at most 2 arguments, got 3 (see --help)\n",
    });
  });

  it("ends quietly when the reader of its output has gone (npx tsx examples/pi.ts | head -1)", async () => {
    const script = fileURLToPath(new URL("./pi.ts", import.meta.url));
    // Closed before its first line: that write fails with EPIPE.
    const { code, other: err } = await runWithReaderGone([script, "4", "1000"], "stdout");
    expect(err).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });
});
