import { expect } from "vitest";
import { testContext } from "../testContext.ts";
import { runScheduler } from "./schedulerAction.ts";

/** What `weft scheduler` given `more` said on stderr as it refused to start (exit 2). */
export async function schedulerRefusal(
  more: Partial<Parameters<typeof runScheduler>[0]>,
): Promise<string> {
  const ctx = testContext();
  await runScheduler(
    { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...more },
    ctx,
    () => Promise.resolve(),
  );
  expect(ctx.exitCode, ctx.stderr.text).toBe(2);
  return ctx.stderr.text;
}
