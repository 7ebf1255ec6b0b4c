/**
 * A worker's logs, story, dump or profile larger than the asking client's
 * `maxMessageBytes`: they grow with the worker's history, so the client's
 * requests carry its limit, and the worker answers with an error naming the
 * sizes and the limit instead of sending what would make the client's reader
 * close the connection. The next request on that connection is answered.
 */

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { CLIENT_TEST_TASKS } from "./testCluster.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const KIB = 1024;
const LIMIT = 256 * KIB;

/** A scheduler, a worker whose log keeps info records, and a client taking at most {@link LIMIT}. */
async function cluster(): Promise<{ worker: Worker; client: Client }> {
  const s = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
  toClose.push(s);
  const worker = await Worker.create({
    scheduler: s.address,
    listen: "tcp://127.0.0.1:0",
    executor: "inline",
    nthreads: 1,
    taskModules: [CLIENT_TEST_TASKS],
    // Recorded as its level lets through: info, written nowhere.
    logger: pino({ level: "info" }, { write() {} }),
  });
  toClose.push(worker);
  const client = await Client.connect(s.address, { logger: silent, maxMessageBytes: LIMIT });
  toClose.push(client);
  return { worker, client };
}

/** Records adding up to more than {@link LIMIT} (each cut to 10,000 characters when kept). */
function logPastLimit(worker: Worker): void {
  for (let i = 0; i < 40; i++) worker.logger.info(`a large record ${i}: ${"x".repeat(9_000)}`);
}

function tooLarge(worker: Worker, client: Client): RegExp {
  return new RegExp(
    `${worker.address.replace(/[.]/g, "\\.")}.*MessageTooLargeError: cannot send a message of .*larger than the maxMessageBytes of ${client.id} \\(256\\.00 kiB\\)`,
  );
}

describe("a worker's answer about itself over the asking client's maxMessageBytes", () => {
  it("getWorkerLogs rejects naming the sizes and the limit; fewer records fit and arrive", async () => {
    const { worker, client } = await cluster();
    logPastLimit(worker);
    worker.logger.info("a small record");
    const err = await client.getWorkerLogs().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^getWorkerLogs: cannot read the logs of /);
    expect((err as Error).message).toMatch(tooLarge(worker, client));
    // The worker says, in its own log, which answer it did not send.
    const last = await client.getWorkerLogs({ n: 2 });
    expect(last[worker.address].map((r) => r.msg)).toEqual([
      "a small record",
      "rpc: cannot send the answer",
    ]);
  });

  it("dumpClusterState writes the worker's error in place of its dump, as for a worker that cannot be asked", async () => {
    const { worker, client } = await cluster();
    expect(await client.submit("inc", 1)).toBe(2);
    logPastLimit(worker);
    const dir = await mkdtemp(join(tmpdir(), "weft-dump-limit-"));
    dirs.push(dir);
    const path = await client.dumpClusterState(join(dir, "dump"), { format: "yaml" });
    const dump = parse(await readFile(path, "utf8")) as { workers: Record<string, unknown> };
    const entry = dump.workers[worker.address];
    expect(typeof entry).toBe("string");
    expect(entry as string).toMatch(tooLarge(worker, client));
    // The connection goes on.
    expect(await client.submit("inc", 2)).toBe(3);
    expect((await client.getWorkerLogs({ n: 1 }))[worker.address]).toHaveLength(1);
  });

  it("get_story and profile_stop are sent with the requester's limit", async () => {
    const { worker, client } = await cluster();
    const key = `k-${"x".repeat(2 * KIB)}`;
    expect(await client.submitWith({ key }, "inc", 1)).toBe(2);
    const rpc = await client.peers.get(worker.address);
    const limited = { who: "asker", maxMessageBytes: KIB };
    const story = await rpc.call("get_story", { keys: [key], ...limited }).catch((e) => e);
    expect((story as Error).message).toMatch(
      /MessageTooLargeError: cannot send a message of .*larger than the maxMessageBytes of asker \(1\.00 kiB\)/,
    );
    expect(await rpc.call("get_story", { keys: [key] })).not.toHaveLength(0);
    await rpc.call("profile_start", { id: "p1", intervalUs: 1000, maxMs: 60_000 });
    const profile = await rpc.call("profile_stop", { id: "p1", ...limited }).catch((e) => e);
    expect((profile as Error).message).toMatch(/larger than the maxMessageBytes of asker/);
    const bad = await rpc.call("get_logs", { maxMessageBytes: 0 }).catch((e) => e);
    expect((bad as Error).message).toMatch(/get_logs: maxMessageBytes must be a positive integer/);
  });
});
