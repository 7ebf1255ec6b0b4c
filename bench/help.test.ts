/**
 * Every `npm run bench:*` script takes `--help` (README.md, docs/benchmarks.md), and
 * docs/benchmarks.md's table of commands lists exactly the scripts package.json has.
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CommanderError } from "commander";
import { describe, expect, it, vi } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** package.json's `bench:*` scripts: name → the script file it runs. */
function benchScripts(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
    scripts: Record<string, string>;
  };
  const out = new Map<string, string>();
  for (const [name, command] of Object.entries(pkg.scripts)) {
    if (!name.startsWith("bench:")) continue;
    const file = /(bench\/\S+\.ts)$/.exec(command)?.[1];
    if (file === undefined) throw new Error(`${name} runs no bench/*.ts: ${command}`);
    out.set(name, file);
  }
  return out;
}

/** What `main(["--help"])` of `file` prints, and its exit code. */
async function help(file: string): Promise<{ code: number; out: string }> {
  const { main } = (await import(`${root}${file}`)) as {
    main: (argv: readonly string[]) => Promise<number>;
  };
  let out = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
    out += String(s);
    return true;
  });
  try {
    return { code: await main(["--help"]), out };
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return { code: err.exitCode, out };
  } finally {
    spy.mockRestore();
  }
}

describe("the bench:* scripts", () => {
  it("are those docs/benchmarks.md's table lists", () => {
    const doc = readFileSync(`${root}docs/benchmarks.md`, "utf8");
    const listed = [...doc.matchAll(/^\| `npm run (bench:[\w-]+)/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...benchScripts().keys()].sort());
  });

  it.each([...benchScripts()])("%s takes --help: its usage, exit 0", async (name, file) => {
    const { code, out } = await help(file);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^Usage: ${name} \\[options\\]\\n`));
    expect(out).toMatch(/-h, --help/);
  });
});
