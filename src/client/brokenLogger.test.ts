import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { add, boom, inc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** A pino logger at `level` whose destination fails every write, as a full disk would. */
const diskFull = (level = "debug") =>
  pino(
    { level },
    {
      write() {
        throw new Error("disk full");
      },
    },
  );

/** A hand-made logger, as the type allows, every method of which throws. */
function throwingLogger(): pino.Logger {
  const fail = () => {
    throw new Error("this logger is broken");
  };
  return Object.fromEntries(
    ["trace", "debug", "info", "warn", "error", "fatal", "child", "isLevelEnabled", "bindings"].map(
      (m) => [m, fail],
    ),
  ) as unknown as pino.Logger;
}

describe("a cluster whose logger throws", () => {
  it("computes a graph all the same, as Python's logging never lets a handler's failure reach the caller", async () => {
    const { cluster, client } = await testCluster({ logger: diskFull() });
    const x = client.submit(inc, 1);
    const y = client.submit(inc, x);
    expect(await client.submit(add, x, y)).toBe(5);
    // A task's failure is logged by the worker (at warn) on the way.
    await expect(client.submit(boom, "no")).rejects.toThrow("no");
    await cluster.close();
    expect(cluster.workers.every((w) => w.status === "closed")).toBe(true);
  });

  it("of a scheduler, a worker and a client each given a hand-made logger that throws, computes and closes", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      validate: true,
      logger: throwingLogger(),
    });
    const worker = await Worker.create({
      scheduler: scheduler.address,
      listen: "tcp://127.0.0.1:0",
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      validate: true,
      logger: throwingLogger(),
    });
    const client = await Client.connect(scheduler.address, { logger: throwingLogger() });
    try {
      expect(await client.submit(add, client.submit(inc, 1), 10)).toBe(12);
      await client.close();
      await worker.close();
      expect(worker.status).toBe("closed");
    } finally {
      await client.close();
      await worker.close();
      await scheduler.close();
    }
    expect(scheduler.status).toBe("closed");
  });

  it("says so on stderr once, however many lines fail", async () => {
    const script =
      `import { pino } from "pino";\n` +
      `import { LocalCluster } from ${JSON.stringify(fileURLToPath(new URL("./localCluster.ts", import.meta.url)))};\n` +
      `import { add, inc } from ${JSON.stringify(fileURLToPath(new URL("./testTasks.ts", import.meta.url)))};\n` +
      `const logger = pino({ level: "debug" }, { write() { throw new Error("disk full"); } });\n` +
      `const cluster = await LocalCluster.start({ workers: 2, executor: "inline", logger,\n` +
      `  taskModules: [${JSON.stringify(CLIENT_TEST_TASKS)}] });\n` +
      `const client = await cluster.client();\n` +
      `const x = client.submit(inc, 1);\n` +
      `console.log(await client.submit(add, x, client.submit(inc, x)));\n` +
      `await cluster.close();\n`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect({ code, stdout }).toEqual({ code: 0, stdout: "5\n" });
    expect(stderr.split("--- Logging error ---")).toHaveLength(2);
    expect(stderr).toMatch(/^--- Logging error ---\nlogger\.\w+\(\) threw: Error: disk full\n/);
  }, 30_000);
});
