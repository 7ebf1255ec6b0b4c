/**
 * The pure cores (`src/worker/state`, `src/scheduler/state`) do no I/O, read
 * no wall clock and call no `Math.random`: time and randomness are injected.
 * Checked over every module they import, transitively, so that a helper
 * moved into `src/util` cannot bring any of it in unseen.
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const CORES = ["src/worker/state", "src/scheduler/state"];

/** The modules the cores' tests and test helpers use are not the cores'. */
function isTestModule(file: string): boolean {
  const name = file.slice(file.lastIndexOf("/") + 1);
  return name.endsWith(".test.ts") || name.startsWith("test");
}

/** Packages a core may import: `node:util` for `inspect`, which formats values. */
const ALLOWED_PACKAGES = new Set(["node:util"]);

/** What reads the clock, draws randomness or reaches outside the process's state. */
const IMPURE: readonly [RegExp, string][] = [
  [/\bDate\.now\s*\(/, "Date.now()"],
  [/\bnew Date\s*\(\s*\)/, "new Date()"],
  [/\bperformance\s*\./, "performance"],
  [/\bMath\.random\b/, "Math.random"],
  [/\bprocess\s*\./, "process"],
  [/\bhrtime\b/, "hrtime"],
  [/\b(?:setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, "a timer"],
  [/\bconsole\s*\./, "console"],
  [/\b(?:fetch|require)\s*\(/, "fetch/require"],
];

/** `any` as a type: annotated, asserted, or a type argument. */
const ANY = /(?::\s*any\b|\bas\s+any\b|<any\b)/;

/** `src` with its comments blanked (line count kept), so that prose may name these things. */
function withoutComments(src: string): string {
  return src
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

interface Module {
  readonly file: string;
  readonly code: string;
}

/** Every module the cores import, transitively (their own files among them), and the packages. */
function coreModules(): { modules: Module[]; packages: Map<string, string> } {
  const todo: string[] = [];
  for (const dir of CORES) {
    for (const name of readdirSync(resolve(ROOT, dir))) {
      const file = resolve(ROOT, dir, name);
      if (name.endsWith(".ts") && !isTestModule(file)) todo.push(file);
    }
  }
  const seen = new Set<string>();
  const modules: Module[] = [];
  const packages = new Map<string, string>();
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const code = withoutComments(readFileSync(file, "utf8"));
    modules.push({ file: relative(ROOT, file), code });
    for (const m of code.matchAll(
      /\b(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"/g,
    )) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".")) todo.push(resolve(dirname(file), spec));
      else packages.set(spec, relative(ROOT, file));
    }
  }
  return { modules, packages };
}

describe("the pure cores", () => {
  const { modules, packages } = coreModules();

  it("import no package but node:util, through any module", () => {
    expect(modules.length).toBeGreaterThan(50);
    const imported = [...packages].filter(([p]) => !ALLOWED_PACKAGES.has(p));
    expect(imported, "package ← importing module").toEqual([]);
  });

  it("read no clock, draw no randomness and do no I/O, in any module they import", () => {
    const found: string[] = [];
    for (const { file, code } of modules) {
      code.split("\n").forEach((line, i) => {
        for (const [pattern, what] of IMPURE) {
          if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
        }
      });
    }
    expect(found).toEqual([]);
  });

  it("have no `any` in their own code (types carry the design)", () => {
    const found: string[] = [];
    for (const { file, code } of modules) {
      if (!CORES.some((dir) => file.startsWith(`${dir}/`))) continue;
      code.split("\n").forEach((line, i) => {
        if (ANY.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
    for (const line of [
      "let x: any;",
      "f(y as any)",
      "const z = <any>w;",
      "g<any>()",
      "a: any[]",
    ]) {
      expect(ANY.test(line), line).toBe(true);
    }
    expect(ANY.test('const s = "any key"; // any')).toBe(false);
  });

  it("would see each of those things", () => {
    const lines = [
      "const t = Date.now();",
      "const d = new Date();",
      "performance.now()",
      "Math.random()",
      "process.env.X",
      "process.hrtime.bigint()",
      "setTimeout(f, 1)",
      "console.log(x)",
      "fetch(url)",
    ];
    for (const line of lines) {
      expect(
        IMPURE.some(([p]) => p.test(withoutComments(line))),
        line,
      ).toBe(true);
    }
    expect(IMPURE.some(([p]) => p.test(withoutComments("// Date.now() is injected")))).toBe(false);
    expect(IMPURE.some(([p]) => p.test(withoutComments("/** Math.random */ x")))).toBe(false);
  });
});
