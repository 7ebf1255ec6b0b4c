import { writeFileSync } from "node:fs";
import type { AddressInfo, Socket } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { muteServer } from "../comm/testMuteServer.ts";
import { testTls } from "../comm/testTls.ts";
import type { NannyLink } from "./nannyLink.ts";
import { stuckStartLog } from "./stuckStartTasks.ts";
import { startingWorkers } from "./testStartingWorkers.ts";
import type { Worker } from "./worker.ts";

const CLOSED = /^the worker was closed while starting$/;
const { dir, worker, scheduler, cleanup } = startingWorkers("weft-worker-closed-starting-");

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

/** Close `w` once `ready`, and how long its start then took to reject with CLOSED (ms). */
async function closeWhileStarting(
  w: Worker,
  starting: Promise<unknown>,
  ready: () => boolean,
  timeout: number,
): Promise<{ rejectedMs: number; closedMs: number }> {
  await until(ready);
  const t0 = performance.now();
  const closing = w.close(timeout);
  await expect(starting).rejects.toThrow(CLOSED);
  const rejectedMs = performance.now() - t0;
  await closing;
  return { rejectedMs, closedMs: performance.now() - t0 };
}

// Short: without the fix these hang until the timeout.
describe("a worker closed while a start step never ends", { timeout: 10_000 }, () => {
  it("a task module whose import never ends (inline): start() rejects at once", async () => {
    const mod = join(dir, "stuckImport.mjs");
    writeFileSync(
      mod,
      `globalThis[Symbol.for("weft.test.stuckImport")] = true;
await new Promise(() => {});
`,
    );
    const s = await scheduler();
    const w = worker(s.address, { taskModules: [pathToFileURL(mod).href] });
    const starting = w.start();
    const imported = () =>
      (globalThis as Record<symbol, unknown>)[Symbol.for("weft.test.stuckImport")] === true;
    const { rejectedMs, closedMs } = await closeWhileStarting(w, starting, imported, 30);
    expect(rejectedMs).toBeLessThan(500);
    expect(closedMs).toBeLessThan(5_000);
    expect(w.status).toBe("failed");
    expect(s.state.workers.size).toBe(0);
  });

  it("a preload whose weftSetup never resolves: start() rejects at once, the preloads are torn down", async () => {
    const mod = join(dir, "stuck.mjs");
    writeFileSync(
      mod,
      `export const log = [];
export function weftSetup() { log.push("up"); return new Promise(() => {}); }
export function weftTeardown() { log.push("down"); }
`,
    );
    const s = await scheduler();
    const w = worker(s.address, { preload: [mod] });
    expect(w.startStep).toBeNull();
    const starting = w.start();
    const { log } = (await import(pathToFileURL(mod).href)) as { log: string[] };
    await until(() => log.length > 0);
    expect(w.startStep).toBe(`running its preload modules' weftSetup (${pathToFileURL(mod).href})`);
    const { rejectedMs, closedMs } = await closeWhileStarting(
      w,
      starting,
      () => log.length > 0,
      30,
    );
    expect(w.startStep).toBeNull();
    expect(rejectedMs).toBeLessThan(500);
    expect(closedMs).toBeLessThan(5_000);
    expect(log).toEqual(["up", "down"]);
    expect(w.status).toBe("failed");
    expect(s.state.workers.size).toBe(0);
  });

  it("a worker plugin of the register reply whose setup never resolves: start() rejects at once, the plugin is torn down, no later one is set up", async () => {
    const s = await scheduler();
    s.workerPlugins.push(
      { name: "stuck", fn: "stuckSetupPlugin", args: ["stuck"] },
      { name: "after", fn: "quickPlugin", args: ["after"] },
    );
    stuckStartLog().length = 0;
    const w = worker(s.address);
    const starting = w.start();
    const { rejectedMs, closedMs } = await closeWhileStarting(
      w,
      starting,
      () => stuckStartLog().includes("stuck setup"),
      0.2,
    );
    expect(rejectedMs).toBeLessThan(500);
    expect(closedMs).toBeLessThan(5_000);
    expect(stuckStartLog()).toEqual(["stuck setup", "stuck teardown"]);
    expect(w.status).toBe("failed");
    expect(w.pluginNames).toEqual([]);
  });

  it("a nanny that never answers for a nanny plugin of the register reply: start() rejects at once", async () => {
    const s = await scheduler();
    s.nannyPlugins.push({ name: "env", fn: "nannyEnv", args: [] });
    let asked = 0;
    const silentNanny: NannyLink = {
      addPlugin: () => {
        asked++;
        return new Promise(() => {});
      },
      removePlugin: () => Promise.resolve(false),
    };
    const w = worker(s.address, { nanny: true, nannyLink: silentNanny });
    const starting = w.start();
    const { rejectedMs } = await closeWhileStarting(w, starting, () => asked > 0, 30);
    expect(rejectedMs).toBeLessThan(500);
    expect(w.status).toBe("failed");
  });

  it("a scheduler that accepts the connection and never answers register-worker: start() rejects at once", async () => {
    const held: Socket[] = [];
    const silent = createServer({ allowHalfOpen: true }, (socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanup(() => {
      for (const socket of held) socket.destroy();
      silent.close();
    });
    const address = `tcp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const w = worker(address, { listen: "tcp://127.0.0.1:0" });
    const starting = w.start();
    const { rejectedMs, closedMs } = await closeWhileStarting(
      w,
      starting,
      () => held.length > 0,
      30,
    );
    expect(rejectedMs).toBeLessThan(500);
    expect(closedMs).toBeLessThan(5_000);
    expect(w.status).toBe("failed");
  });

  it("a scheduler whose TLS handshake never completes: the close ends the connect try, which held the process until its timeout", async () => {
    const mute = await muteServer();
    cleanup(() => mute.close());
    // connectTimeoutMs 60 s (startingWorkers'): before, the try went on that long.
    const w = worker(`tls://${mute.hostPort}`, { listen: "tls://127.0.0.1:0", tls: testTls() });
    const starting = w.start();
    const { closedMs } = await closeWhileStarting(w, starting, () => mute.accepted > 0, 30);
    expect(closedMs).toBeLessThan(5_000);
    const ended = mute.endedAtLeast(1).then(() => "ended");
    expect(await Promise.race([ended, sleep(2_000, "still connecting")])).toBe("ended");
    expect(w.status).toBe("failed");
  });
});
