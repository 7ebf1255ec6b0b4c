import { existsSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMMANDS } from "./commands/index.ts";
import { testContext } from "./testContext.ts";

/**
 * The command modules and action modules `weft` may import, and the modules that
 * run what the commands do (each the heart of a large graph of imports), relative
 * to this file.
 */
const MODULES = [
  ...COMMANDS.flatMap(({ name }) => [`./commands/${name}.ts`, `./commands/${name}Action.ts`]),
  "../worker/worker.ts",
  "../scheduler/scheduler.ts",
  "../client/client.ts",
  "../sim/simulation.ts",
  "../replay/replayFile.ts",
  "../bench/clusterBench.ts",
  "../bench/stateBench.ts",
  "../comm/comm.ts",
].filter((path) => existsSync(new URL(path, import.meta.url)));

/**
 * Runs `weft ...args` from a fresh import of weft.ts: its exit code, and which of
 * {@link MODULES} it imported, in order.
 */
async function imported(args: readonly string[]): Promise<{ code: number; modules: string[] }> {
  vi.resetModules();
  const modules: string[] = [];
  for (const path of MODULES) {
    vi.doMock(path, async (importOriginal) => {
      modules.push(path.replace(/^\.\/commands\//, "").replace(/\.ts$/, ""));
      return importOriginal();
    });
  }
  const { main } = await import("./weft.ts");
  const code = await main(["node", "weft", ...args], testContext());
  return { code, modules };
}

afterEach(() => {
  for (const path of MODULES) vi.doUnmock(path);
  vi.resetModules();
});

describe("weft's help", () => {
  it("lists the commands, or suggests one, without importing any command's module", async () => {
    for (const [args, code] of [
      [["--help"], 0],
      [[], 2],
      [["help"], 0],
      [["help", "help"], 0],
      [["bogus"], 2],
      [["help", "bogus"], 2],
    ] as const) {
      expect(await imported(args), args.join(" ")).toEqual({ code, modules: [] });
    }
  });

  it("gives a command's options without importing what runs it", async () => {
    for (const { name } of COMMANDS) {
      for (const args of [
        [name, "--help"],
        ["help", name],
      ]) {
        expect(await imported(args), args.join(" ")).toEqual({ code: 0, modules: [name] });
      }
    }
  });
});
