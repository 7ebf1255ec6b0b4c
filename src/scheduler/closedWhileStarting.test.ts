import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Scheduler } from "./scheduler.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-closed-starting-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const silent = () => pino({ level: "silent" });
const CLOSED = /^the scheduler was closed while starting$/;

/** How long `p` takes to settle, in ms, and whether it rejected with `message`. */
async function timed(p: Promise<unknown>, message: RegExp): Promise<number> {
  const started = performance.now();
  await expect(p).rejects.toThrow(message);
  return performance.now() - started;
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

// Short: without the fix these hang until the timeout.
describe("a scheduler closed while a start step never ends", { timeout: 10_000 }, () => {
  it("a plugin whose start never resolves: listen() rejects at once, the plugin is closed, close() keeps to its timeout", async () => {
    const log: string[] = [];
    const s = new Scheduler({
      logger: silent(),
      listen: "tcp://127.0.0.1:0",
      plugins: [
        {
          name: "stuck",
          start: () => {
            log.push("start");
            return new Promise(() => {});
          },
          close: () => log.push("close"),
        },
      ],
    });
    const listening = s.listen();
    await until(() => log.length > 0);
    const closing = s.close(0.3);
    expect(await timed(listening, CLOSED)).toBeLessThan(200);
    const closeStarted = performance.now();
    await closing;
    expect(performance.now() - closeStarted).toBeLessThan(2_000);
    expect(s.status).toBe("closed");
    expect(() => s.address).toThrow(/not listening/);
    expect(log).toEqual(["start", "close"]);
  });

  it("a plugin whose start ends after the close's deadline is closed once, and nothing after it starts", async () => {
    const log: string[] = [];
    let finish: () => void = () => {};
    const s = new Scheduler({
      logger: silent(),
      plugins: [
        {
          name: "late",
          start: () => {
            log.push("start late");
            return new Promise<void>((r) => (finish = r));
          },
          close: () => log.push("close late"),
        },
        { name: "next", start: () => log.push("start next"), close: () => log.push("close next") },
      ],
    });
    const listening = s.listen();
    await until(() => log.length > 0);
    const closing = s.close(0.05);
    await expect(listening).rejects.toThrow(CLOSED);
    await closing;
    finish();
    await new Promise((r) => setTimeout(r, 20));
    expect(log).toEqual(["start late", "close late"]);
    expect(s.plugins.names).toEqual([]);
  });

  it("a preload whose weftSetup never resolves: listen() rejects at once, every preload imported is torn down", async () => {
    const first = join(dir, "first.mjs");
    writeFileSync(
      first,
      `export const log = [];
export function weftSetup() { log.push("up first"); }
export function weftTeardown() { log.push("down first"); }
`,
    );
    const stuck = join(dir, "stuck.mjs");
    writeFileSync(
      stuck,
      `import { log } from ${JSON.stringify(pathToFileURL(first).href)};
export function weftSetup() { log.push("up stuck"); return new Promise(() => {}); }
export function weftTeardown() { log.push("down stuck"); }
`,
    );
    const never = join(dir, "never.mjs");
    writeFileSync(
      never,
      "export function weftSetup() { throw new Error('set up after the close'); }\n",
    );
    const s = new Scheduler({
      logger: silent(),
      listen: "tcp://127.0.0.1:0",
      preload: [first, stuck, never],
    });
    const listening = s.listen();
    const { log } = (await import(pathToFileURL(first).href)) as { log: string[] };
    await until(() => log.includes("up stuck"));
    const closing = s.close();
    expect(await timed(listening, CLOSED)).toBeLessThan(200);
    await closing;
    expect(s.status).toBe("closed");
    expect(() => s.address).toThrow(/not listening/);
    expect(log).toEqual(["up first", "up stuck", "down stuck", "down first"]);
  });

  it("Scheduler.start(): a preload that closes the scheduler and never resolves makes it reject", async () => {
    const closer = join(dir, "closer.mjs");
    writeFileSync(
      closer,
      "export function weftSetup(s) { void s.close(); return new Promise(() => {}); }\n",
    );
    await expect(Scheduler.start({ logger: silent(), preload: [closer] })).rejects.toThrow(CLOSED);
  });
});
