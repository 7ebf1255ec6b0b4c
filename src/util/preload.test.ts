import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type PreloadTeardown, startPreloads } from "./preload.ts";

/** The preloads set up, and their teardown. */
async function setUpPreloads(
  ...args: Parameters<typeof startPreloads<object>>
): Promise<PreloadTeardown> {
  const starting = startPreloads(...args);
  await starting.setUp;
  return starting.teardown;
}

const dir = mkdtempSync(join(tmpdir(), "weft-preload-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A preload module at `name` in `dir`, with `body` as its source; its file URL. */
function moduleAt(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return pathToFileURL(path).href;
}

const tearsDown = (name: string) =>
  moduleAt(`${name}.mjs`, `export function weftTeardown(s) { s.log.push("down ${name}"); }\n`);

describe("startPreloads, set up", () => {
  it("tears down last first", async () => {
    const server = { log: [] as string[] };
    const teardown = await setUpPreloads([tearsDown("a"), tearsDown("b")], server, () => {});
    await teardown();
    expect(server.log).toEqual(["down b", "down a"]);
  });

  it("tears down what it set up when a later setup fails, naming the module that failed", async () => {
    const server = { log: [] as string[] };
    const failing = moduleAt(
      "failing.mjs",
      'export function weftSetup() { throw new Error("boom"); }\n',
    );
    await expect(setUpPreloads([tearsDown("c"), failing], server, () => {})).rejects.toThrow(
      `preload ${failing}: boom`,
    );
    expect(server.log).toEqual(["down c"]);
  });

  it("reports a teardown that throws, and goes on with the others", async () => {
    const server = { log: [] as string[] };
    const throwing = moduleAt(
      "throwing.mjs",
      'export function weftTeardown() { throw new Error("stuck"); }\n',
    );
    const errors: [string, string][] = [];
    const teardown = await setUpPreloads([tearsDown("d"), throwing], server, (url, err) =>
      errors.push([url, err.message]),
    );
    await teardown();
    expect(errors).toEqual([[throwing, "stuck"]]);
    expect(server.log).toEqual(["down d"]);
  });

  it("goes on with the others when telling of a teardown's error throws on it (a logger reading a hostile error)", async () => {
    const server = { log: [] as string[] };
    const hostile = moduleAt(
      "hostile.mjs",
      `export function weftTeardown() {
  const e = new Error("hidden");
  Object.defineProperty(e, "stack", { get() { throw new Error("stack getter"); } });
  throw e;
}
`,
    );
    const told: string[] = [];
    // As pino does, reading the stack. Before, the throw ended the teardown: e stayed up.
    const teardown = await setUpPreloads([tearsDown("e"), hostile], server, (_url, err) =>
      told.push(`${err.message}: ${err.stack}`),
    );
    await teardown();
    expect(told).toEqual(["hidden: "]);
    expect(server.log).toEqual(["down e"]);
  });

  it("a start that fails does not wait for good on the teardown of a module set up before: 30 s, then it is named and the start fails", async () => {
    const stuck = moduleAt(
      "stuckTeardown.mjs",
      "export function weftTeardown() { return new Promise(() => {}); }\n",
    );
    const failing = moduleAt(
      "failingLater.mjs",
      'export function weftSetup() { throw new Error("no"); }\n',
    );
    const unfinished: string[] = [];
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let outcome: unknown = null;
      const starting = setUpPreloads(
        [stuck, failing],
        {},
        () => {},
        (url) => unfinished.push(url),
      ).then(
        () => "started",
        (err: Error) => err.message,
      );
      void starting.then((o) => {
        outcome = o;
      });
      // Before, the start waited on the teardown for good.
      for (let s = 0; s < 20_000 && outcome === null; s++) {
        await new Promise((r) => setImmediate(r));
        await vi.advanceTimersByTimeAsync(1000);
      }
      expect(outcome).toBe(`preload ${failing}: no`);
      expect(unfinished).toEqual([stuck]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("startPreloads", () => {
  it("hands the teardown over at once: one whose weftSetup never settles is torn down with those before it, and no later module is set up", async () => {
    const server = { log: [] as string[] };
    const stuck = moduleAt(
      "stuckSetup.mjs",
      `export function weftSetup(s) { s.log.push("up stuck"); return new Promise(() => {}); }
export function weftTeardown(s) { s.log.push("down stuck"); }
`,
    );
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const slow = moduleAt(
      "slowSetup.mjs",
      `export async function weftSetup(s) { s.log.push("up slow"); await s.held; }
export function weftTeardown(s) { s.log.push("down slow"); }
`,
    );
    const later = moduleAt(
      "later.mjs",
      `export function weftSetup(s) { s.log.push("up later"); }
`,
    );
    const starting = startPreloads([tearsDown("f"), stuck, later], server, () => {});
    const setUp = starting.setUp.then(
      () => "set up",
      () => "rejected",
    );
    while (!server.log.includes("up stuck")) await new Promise((r) => setTimeout(r, 5));
    await starting.teardown();
    expect(server.log).toEqual(["up stuck", "down stuck", "down f"]);
    // The setup that ends after the teardown sets up no more modules.
    const second = startPreloads([slow, later], { ...server, held, log: server.log }, () => {});
    const secondSetUp = second.setUp.catch((err: Error) => err.message);
    while (!server.log.includes("up slow")) await new Promise((r) => setTimeout(r, 5));
    await second.teardown();
    release();
    expect(await secondSetUp).toBe("the preload modules were torn down while they were set up");
    expect(server.log).toEqual(["up stuck", "down stuck", "down f", "up slow", "down slow"]);
    expect(
      await Promise.race([setUp, new Promise((r) => setTimeout(() => r("pending"), 50))]),
    ).toBe("pending");
  });
});
