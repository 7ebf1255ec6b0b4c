/**
 * A nanny stopped just as its worker exits on a fault of its own (its scheduler gone at the
 * same moment, as at the end of a batch job): the nanny's exit is its stopped one, 0.
 */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { Client } from "../../client/client.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { weftModuleUrl } from "../testBuiltCommand.ts";
import { testContext } from "../testContext.ts";
import { runNanny } from "./nanny.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-nanny-stop-race-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** For the task module of the worker processes the nanny starts. */
const registry = weftModuleUrl("worker/taskRegistry.ts");

it("stopped while its worker exits on a fault, the nanny ends with exit 0, starting no other", async () => {
  const faulting = join(dir, "faulting");
  const go = join(dir, "go");
  const tasks = join(dir, "fault.mjs");
  // The task says it is about to fail, then holds its event loop until the test has
  // stopped the nanny, then exits 1: the worker's fault, and the nanny's stop, at once.
  writeFileSync(
    tasks,
    `import { existsSync, writeFileSync } from "node:fs";\nimport { defineTask } from ${JSON.stringify(registry)};\n` +
      `defineTask("race.fault", () => {\n` +
      `  writeFileSync(${JSON.stringify(faulting)}, "");\n` +
      `  const until = Date.now() + 60_000;\n` +
      `  while (!existsSync(${JSON.stringify(go)}) && Date.now() < until) {}\n` +
      "  process.exit(1);\n" +
      "});\n",
  );
  const scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
  const ctx = testContext();
  let stop!: () => void;
  const stopped = new Promise<void>((r) => {
    stop = r;
  });
  const nanny = runNanny(
    {
      args: [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks],
      maxRestarts: 1,
      stop: stopped,
    },
    ctx,
  );
  const client = await Client.connect(scheduler.address, { printTaskOutput: false });
  try {
    await client.waitForWorkers(1, { timeoutMs: 60_000 });
    void client.runWith({ onError: "return" }, "race.fault");
    for (let t = 0; t < 600 && !existsSync(faulting); t++) await sleep(100);
    expect(existsSync(faulting)).toBe(true);
    stop();
    // The nanny takes the stop (its SIGTERM sent) before the worker's exit 1 comes.
    await sleep(50);
    writeFileSync(go, "");
    await nanny;
    // Before, the nanny passed on its worker's exit 1 when the stop came first.
    expect(ctx.exitCode).toBe(0);
    expect(ctx.stderr.text).not.toContain("starting another");
  } finally {
    writeFileSync(go, "");
    await client.close();
    await scheduler.close();
  }
}, 120_000);
