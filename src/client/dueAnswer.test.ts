import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { holdAliveUntilAnswered } from "./dueAnswer.ts";

const run = promisify(execFile);

/**
 * A program whose only pending work is coordination waits with a timeout, on an
 * in-process cluster: the scheduler's timers do not keep the process alive.
 */
const PROGRAM = `
import { LocalCluster } from ${JSON.stringify(new URL("./index.ts", import.meta.url).href)};
const cluster = await LocalCluster.start({ workers: 1, executor: "inline" });
const client = await cluster.client();
console.log("event", await client.event("e").wait({ timeoutMs: 30 }));
const held = client.lock("l");
await held.acquire();
console.log("lock", await client.lock("l").acquire({ timeoutMs: 30 }));
const q = client.queue("q", { maxsize: 1 });
await q.put(1);
console.log("queue", await q.put(2, { timeoutMs: 30 }).catch((e) => e.name));
await cluster.close();
console.log("done");
`;

describe("a coordination wait with a timeout, in one process", () => {
  it("keeps the program alive until the scheduler answers it, instead of exiting with the await unsettled", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-due-"));
    try {
      const file = join(dir, "program.mts");
      writeFileSync(file, PROGRAM);
      const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
        cwd: new URL("../..", import.meta.url).pathname,
        timeout: 60_000,
      });
      expect(stdout.trim().split("\n")).toEqual([
        "event false",
        "lock false",
        "queue CoordinationTimeoutError",
        "done",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** How many timers hold the event loop now. */
function timers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
}

/** A promise settled from outside. */
function settleable<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("holdAliveUntilAnswered", () => {
  it("holds the event loop while an answer due within a timeout is awaited, and lets go once it comes", async () => {
    const before = timers();
    const answer = settleable<string>();
    const held = holdAliveUntilAnswered(answer.promise, 30);
    expect(timers()).toBe(before + 1);
    answer.resolve("yes");
    await expect(held).resolves.toBe("yes");
    expect(timers()).toBe(before);
  });

  it("lets go once the answer fails too, passing the failure on", async () => {
    const before = timers();
    const answer = settleable<string>();
    const held = holdAliveUntilAnswered(answer.promise, 30);
    const failed = new Error("refused");
    answer.reject(failed);
    await expect(held).rejects.toBe(failed);
    expect(timers()).toBe(before);
  });

  it.each([
    ["no timeout", undefined],
    ["a timeout of 0", 0],
    ["a negative timeout", -1],
    ["a timeout that is not a number", "30"],
  ])("leaves a wait with %s as it is", (_, timeoutMs) => {
    const before = timers();
    const answer = settleable<string>();
    expect(holdAliveUntilAnswered(answer.promise, timeoutMs)).toBe(answer.promise);
    expect(timers()).toBe(before);
  });
});
