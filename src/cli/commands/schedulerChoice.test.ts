import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeSchedulerFile } from "../../util/schedulerFile.ts";
import { cliScheduler, cliWorker, runWeft, testContext } from "../testContext.ts";
import { leadingScheduler, schedulerAddress, schedulerChoiceProblem } from "./schedulerChoice.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-choice-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A scheduler file naming `address`, as weft scheduler writes one. */
async function schedulerFileOf(name: string, address: string): Promise<string> {
  const file = join(dir, name);
  await writeSchedulerFile(file, {
    type: "Scheduler",
    id: `Scheduler-${name}`,
    address,
    services: {},
    started: Date.now() / 1000,
    workers: {},
  });
  return file;
}

describe("the scheduler's address or --scheduler-file", () => {
  it("exactly one of them", () => {
    expect(schedulerChoiceProblem("tcp://h:1", undefined)).toBeNull();
    expect(schedulerChoiceProblem(undefined, "f.json")).toBeNull();
    expect(schedulerChoiceProblem(undefined, undefined)).toBe(
      "give the scheduler's address or --scheduler-file, neither was given",
    );
    expect(schedulerChoiceProblem("tcp://h:1", "f.json")).toBe(
      "give the scheduler's address or --scheduler-file, not both",
    );
  });

  it("the first argument is the scheduler's unless --scheduler-file names it", () => {
    expect(leadingScheduler(["tcp://s:1", "w1", "w2"], undefined)).toEqual({
      given: "tcp://s:1",
      others: ["w1", "w2"],
    });
    expect(leadingScheduler(["w1", "w2"], "f.json")).toEqual({
      given: undefined,
      others: ["w1", "w2"],
    });
    expect(leadingScheduler([], undefined)).toEqual({ given: undefined, others: [] });
  });

  it("reads the address from the file; refuses neither, both, and a missing or bad file", async () => {
    const file = await schedulerFileOf("s.json", "tcp://10.0.0.1:8786");
    expect(await schedulerAddress({ given: undefined }, file, 1000)).toBe("tcp://10.0.0.1:8786");
    expect(await schedulerAddress({ given: "tcp://h:1" }, undefined, 1000)).toBe("tcp://h:1");
    await expect(schedulerAddress({ given: undefined }, undefined, 1000)).rejects.toThrow(
      /^give the scheduler's address or --scheduler-file, neither was given$/,
    );
    await expect(schedulerAddress({ given: "tcp://h:1" }, file, 1000)).rejects.toThrow(
      /^give the scheduler's address or --scheduler-file, not both$/,
    );
    // The file's own address among the other arguments is the scheduler given twice,
    // with its scheme or without.
    for (const twice of ["tcp://10.0.0.1:8786", "10.0.0.1:8786"]) {
      await expect(
        schedulerAddress({ given: undefined, others: [twice, "w1"] }, file, 1000),
      ).rejects.toThrow(/not both/);
    }
    expect(
      await schedulerAddress({ given: undefined, others: ["tcp://10.0.0.2:4000"] }, file, 1000),
    ).toBe("tcp://10.0.0.1:8786");
    const missing = join(dir, "missing.json");
    await expect(schedulerAddress({ given: undefined }, missing, 100)).rejects.toThrow(
      `no scheduler file at ${missing} after 100 ms (is the scheduler started with --scheduler-file?)`,
    );
    const garbage = join(dir, "garbage.json");
    writeFileSync(garbage, "not json");
    await expect(schedulerAddress({ given: undefined }, garbage, 100)).rejects.toThrow(
      `the scheduler file ${garbage} is not JSON`,
    );
  });
});

describe("--scheduler-file in the commands that connect to a running scheduler", () => {
  it("status, logs, story, retire and shutdown find the scheduler through the file", async () => {
    const file = join(dir, "cluster.json");
    const sched = await cliScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      testContext(),
    );
    const address = sched.scheduler.address;
    const workerCtx = testContext();
    const { worker, done } = await cliWorker(address, workerCtx, { name: "w-1" });
    try {
      const status = await runWeft(["status", "--scheduler-file", file, "--json"]);
      expect(status.err).toBe("");
      expect(status.code).toBe(0);
      expect(JSON.parse(status.out)).toMatchObject({
        scheduler: address,
        workers: [{ address: worker.address, name: "w-1" }],
      });
      const logs = await runWeft([
        "logs",
        "--scheduler-file",
        file,
        "--no-scheduler",
        "--worker",
        "nobody",
      ]);
      expect(logs.code).toBe(1);
      expect(logs.err).toBe(
        `weft logs: --worker nobody: no connected worker matches it (weft status ${address} lists them)\n`,
      );
      // Every argument a key; none has a story here.
      const story = await runWeft(["story", "x", "y", "--scheduler-file", file]);
      expect(story).toMatchObject({
        code: 1,
        err: `weft story: no record of x, y in ${address}\n`,
      });

      // Neither, both, a file that is not there, the file's scheduler given again.
      const neither = await runWeft(["status"]);
      expect(neither).toMatchObject({
        code: 2,
        err: "weft status: give the scheduler's address or --scheduler-file, neither was given\n",
      });
      const both = await runWeft(["dump", address, "--scheduler-file", file]);
      expect(both).toMatchObject({
        code: 2,
        err: "weft dump: give the scheduler's address or --scheduler-file, not both\n",
      });
      const missing = join(dir, "missing.json");
      const late = await runWeft([
        "shutdown",
        "--scheduler-file",
        missing,
        "--connect-timeout",
        "100ms",
      ]);
      expect(late).toMatchObject({
        code: 2,
        err:
          `weft shutdown: waiting for the scheduler file ${missing} (not there yet); giving up after 0.1 s\n` +
          `weft shutdown: no scheduler file at ${missing} after 100 ms (is the scheduler started with --scheduler-file?)\n`,
      });
      const twice = await runWeft(["retire", address, worker.address, "--scheduler-file", file]);
      expect(twice).toMatchObject({
        code: 2,
        err: "weft retire: give the scheduler's address or --scheduler-file, not both\n",
      });
      const storyTwice = await runWeft(["story", "x", address, "--scheduler-file", file]);
      expect(storyTwice.code).toBe(2);
      expect(storyTwice.err).toMatch(/not both/);
      const noFiles = await runWeft(["upload", "--scheduler-file", file]);
      expect(noFiles).toMatchObject({ code: 2, err: "weft upload: name the files to upload\n" });
      const noScheduler = await runWeft(["restart", "--no-wait"]);
      expect(noScheduler).toMatchObject({
        code: 2,
        err: "weft restart: give the scheduler's address or --scheduler-file, neither was given\n",
      });

      // With the file, every argument is a worker: retired by its name.
      const retire = await runWeft(["retire", "--scheduler-file", file, "w-1"]);
      expect(retire).toMatchObject({ code: 0, out: `retired ${worker.address}\n`, err: "" });
      await done;
      expect(workerCtx.exitCode).toBe(0);
      const shutdown = await runWeft(["shutdown", "--scheduler-file", file]);
      expect(shutdown).toMatchObject({ code: 0, out: "shut down: the scheduler and 0 workers\n" });
      await sched.scheduler.closed;
    } finally {
      sched.stop();
      await sched.done;
      await worker.close();
    }
  }, 60_000);

  it("every such command takes --scheduler-file, and its help says so", async () => {
    for (const command of [
      "status",
      "retire",
      "restart",
      "shutdown",
      "upload",
      "logs",
      "events",
      "profile",
      "dump",
      "story",
    ]) {
      const help = await runWeft([command, "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.out, command).toContain("--scheduler-file <path>");
    }
  });
});
