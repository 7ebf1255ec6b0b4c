/** `weft sim --runs` stopped by a signal (the other `weft sim` tests: src/sim/simCommand.test.ts). */

import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { testContext } from "../testContext.ts";
import { main } from "../weft.ts";

/**
 * Enough seeds to take seconds, few enough that without the signal handling (the
 * seeds run in one go, the signal finds no listener) the tests end, and fail.
 */
const RUNS = 3000;

async function interrupted(
  signal: "SIGINT" | "SIGTERM",
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const ctx = testContext();
  const running = main(["node", "weft", "sim", "--runs", String(RUNS), "--verbose", ...args], ctx);
  // A few seeds run: the loop turned the event loop over in between, or this never wakes.
  while ((ctx.stdout.text.match(/^seed /gm) ?? []).length < 3) await sleep(10);
  const started = Date.now();
  process.emit(signal, signal);
  const code = await running;
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(process.listenerCount(signal)).toBe(0);
  return { code, out: ctx.stdout.text, err: ctx.stderr.text };
}

it("weft sim --runs stopped by SIGINT prints the summary of the seeds run so far, exit 130", async () => {
  const r = await interrupted("SIGINT", ["--from", "5", "--tasks", "4", "--faults", "none"]);
  expect(r.code).toBe(130);
  const runs = (r.out.match(/^seed /gm) ?? []).length;
  expect(r.err).toBe(
    `weft sim: interrupted (SIGINT) after ${runs} of ${RUNS} seeds from 5; the summary counts those (rerun the rest with --from ${5 + runs} --runs ${RUNS - runs})\n`,
  );
  expect(r.out).toMatch(new RegExp(`^runs +${runs}$`, "m"));
  expect(r.out.trimEnd().split("\n").at(-1)).toBe(`${runs} passed, 0 failed`);
});

it("weft sim --runs stopped by SIGTERM reports the first failure found (not shrunk), exit 143", async () => {
  const r = await interrupted("SIGTERM", ["--variant", "wrong-value", "--tasks", "6"]);
  expect(r.code).toBe(143);
  expect(r.err).toMatch(
    new RegExp(`^weft sim: interrupted \\(SIGTERM\\) after \\d+ of ${RUNS} seeds from 1;`),
  );
  expect(r.out).toMatch(/^first failure:\nseed 1: /m);
  expect(r.out).not.toContain("shrinking");
  const runs = (r.out.match(/^seed \d+: /gm) ?? []).length - 1; // the first failure repeats one
  const failed = (r.out.match(/^seed \d+: FAILED/gm) ?? []).length - 1;
  expect(failed).toBeGreaterThan(0);
  expect(r.out.trimEnd().split("\n").at(-1)).toBe(`${runs - failed} passed, ${failed} failed`);
});
