/**
 * The commands that connect as a client with `--scheduler-file` read the file again while
 * the scheduler it names refuses connections, as `weft worker` does (schedulerFile.test.ts).
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as dial, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { testContext as context, refusingAddress } from "../testContext.ts";
import { main } from "../weft.ts";
import { runScheduler } from "./schedulerAction.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-client-scheduler-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A scheduler file left by a scheduler gone: it names an address that refuses connections. */
async function staleFile(name: string): Promise<{ file: string; stale: string }> {
  const file = join(dir, name);
  const stale = await refusingAddress();
  writeFileSync(file, JSON.stringify({ type: "Scheduler", address: stale }));
  return { file, stale };
}

it("weft status and weft run find the scheduler started again after they were, through the file it rewrote", async () => {
  const { file, stale } = await staleFile("stale.json");
  const graph = join(dir, "g.json");
  writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));
  const statusCtx = context();
  const runCtx = context();
  // The timeout is long: reading the file once, they would wait it out and fail.
  const started = Date.now();
  const status = main(
    ["node", "weft", "status", "--scheduler-file", file, "--json", "--connect-timeout", "30000"],
    statusCtx,
  );
  const run = main(
    ["node", "weft", "run", graph, "--scheduler-file", file, "--connect-timeout", "30000"],
    runCtx,
  );
  // Each says it waits for the address that refuses, before the new scheduler writes its own.
  await vi.waitFor(
    () => {
      expect(statusCtx.stderr.text).toContain(`waiting for the scheduler at ${stale} (refused)`);
      expect(runCtx.stderr.text).toContain(`waiting for the scheduler at ${stale} (refused)`);
    },
    { timeout: 10_000, interval: 20 },
  );
  let stop = (): void => {};
  const scheduler = runScheduler(
    { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
    context(),
    (s) => {
      stop = () => void s.close();
      return s.closed;
    },
  );
  expect(await status).toBe(0);
  expect(await run).toBe(0);
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(JSON.parse(statusCtx.stdout.text)).toMatchObject({ workers: [] });
  expect(JSON.parse(runCtx.stdout.text)).toEqual({ a: 1 });
  stop();
  await scheduler;
}, 40_000);

it("none comes: the command says which address the file named, and for how long it was tried", async () => {
  const { file, stale } = await staleFile("gone.json");
  const ctx = context();
  expect(
    await main(
      [
        "node",
        "weft",
        "retire",
        "--n",
        "1",
        "--scheduler-file",
        file,
        "--connect-timeout",
        "300ms",
      ],
      ctx,
    ),
  ).toBe(2);
  expect(ctx.stderr.text).toBe(
    `weft retire: waiting for the scheduler at ${stale} (refused); giving up after 0.3 s\n` +
      `weft retire: the scheduler at ${stale} (named by ${file}) still refuses connections after 300 ms: is it running, and its file up to date?\n`,
  );
}, 30_000);

/**
 * A TCP relay to `target` (tcp://host:port) that counts the connections made to it:
 * a scheduler file naming the relay shows how many a command opens to its scheduler.
 */
async function countingRelay(
  target: string,
): Promise<{ address: string; connections: () => number; close: () => void }> {
  const { hostname, port } = new URL(target.replace(/^tcp:/, "http:"));
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    const upstream = dial(Number(port), hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
    socket.on("close", () => upstream.destroy());
    upstream.on("close", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: at } = server.address() as { port: number };
  return {
    address: `tcp://127.0.0.1:${at}`,
    connections: () => connections,
    close: () => server.close(),
  };
}

it("the command opens one connection to the scheduler the file names: its client's", async () => {
  let stop = (): void => {};
  let address = "";
  const scheduler = runScheduler(
    { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
    context(),
    (s) => {
      address = s.address;
      stop = () => void s.close();
      return s.closed;
    },
  );
  await vi.waitFor(() => expect(address).not.toBe(""));
  const relay = await countingRelay(address);
  const file = join(dir, "relayed.json");
  writeFileSync(file, JSON.stringify({ type: "Scheduler", address: relay.address }));
  const graph = join(dir, "one.json");
  writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));
  try {
    const ctx = context();
    expect(await main(["node", "weft", "status", "--scheduler-file", file, "--json"], ctx)).toBe(0);
    // A probe of the address before the client's own connection made it two.
    expect(relay.connections()).toBe(1);
    expect(await main(["node", "weft", "run", graph, "--scheduler-file", file], context())).toBe(0);
    expect(relay.connections()).toBe(2);
  } finally {
    relay.close();
    stop();
    await scheduler;
  }
}, 30_000);
