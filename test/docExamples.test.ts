/**
 * Every TypeScript example of the docs (each ```ts block of README.md and docs/*.md)
 * type-checks against the public API, so that the docs cannot drift from it unseen;
 * the few marked to run, run and print what their comments say.
 *
 * The blocks are checked by one TypeScript program, each block a virtual ES module
 * (top-level `await` allowed) next to its markdown file, with the project's
 * tsconfig.json (less `noUnusedLocals`: an example names results to show them), and
 * `weft`, `weft/worker/state`, … resolved to package.json's "exports": to their
 * declarations in dist/ when the build is current, else to the sources they are
 * built from (no build needed). A failure names the markdown file and line, and
 * the diagnostic.
 *
 * Examples are fragments more often than programs, so an HTML comment right before
 * a block (blank lines between are fine) says how to take it:
 *
 * - `<!-- doc-example: given CODE -->`: CODE, hidden from readers, comes before the
 *   block, to declare what its prose supplies: `declare const client:
 *   import("weft").Client;`, `declare const bigTable: Float64Array;`, …
 * - `<!-- doc-example: skip (reason) -->`: not checked, for a block that cannot be a
 *   program by nature. Skips are counted (SKIPS below), so that each is a choice.
 * - `<!-- doc-example: run -->`: the block is a whole program that runs in a few
 *   seconds (on an embedded cluster): checked, and also run (tsx, `weft` mapped to
 *   the sources; or, when the build is current, compiled to JavaScript and run by
 *   plain Node.js, `weft` mapped to the build); each `console.log(…); // X` line of
 *   it must print X (compared without whitespace). Only a few run (the quick
 *   starts, the weft/sim example): each run costs seconds.
 *
 * A line `// NAME.ts` (comment text may follow) makes what follows, up to the next
 * such line or the block's end, the module NAME.ts of its markdown file, which the
 * file's other blocks import as `./NAME.ts` (`import { inc } from "./mytasks.ts"`); a
 * name is given once per markdown file. It also parts what are two programs in one
 * block (README's `// tasks.ts` and `// main.ts`): a `given` comes before each part,
 * and the last part is the program that runs.
 */

import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { buildIsCurrent } from "../src/cli/testBuiltCommand.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/** How many blocks are skipped, with `<!-- doc-example: skip (reason) -->`: change it on purpose. */
const SKIPS = 0;

/** The markdown files whose examples are checked (docs/benchmarks*.md hold none in TypeScript). */
function markdownFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** How an example is taken, from the HTML comment before it. */
type Directive =
  | { kind: "check"; given: string }
  | { kind: "skip"; reason: string }
  | { kind: "run" };

/** A ```ts block of a markdown file. */
interface DocBlock {
  /** The markdown file, relative to the repository. */
  file: string;
  /** The 1-based line of the block's opening fence. */
  line: number;
  /** The lines between the fences. */
  lines: string[];
  directive: Directive;
}

/** A virtual module made of (a part of) a block. */
interface DocModule {
  block: DocBlock;
  /** NAME.ts of its `// NAME.ts` line; null for a block without one. */
  name: string | null;
  /** Its absolute path: `<markdown file>.examples/<NAME.ts or line-N.ts>`. */
  path: string;
  /** The `given` code before the block's lines. */
  givenLines: number;
  /** The 1-based markdown line of the module's first line of the block. */
  firstLine: number;
  text: string;
}

const DIRECTIVE = /^<!--\s*doc-example:\s*([\s\S]*?)\s*-->$/;

function parseDirective(text: string, where: string): Directive {
  if (text === "run") return { kind: "run" };
  const skip = /^skip \((.+)\)$/s.exec(text);
  if (skip) return { kind: "skip", reason: skip[1] };
  const given = /^given\s([\s\S]+)$/.exec(text);
  if (given) return { kind: "check", given: given[1].trim() };
  throw new Error(
    `${where}: unknown doc-example directive "${text}" (given CODE, skip (reason), run)`,
  );
}

/** The HTML comment ending right above line `index` (blank lines between), if any. */
function commentAbove(lines: string[], index: number): { text: string; start: number } | null {
  let end = index - 1;
  while (end >= 0 && lines[end].trim() === "") end--;
  if (end < 0 || !lines[end].trimEnd().endsWith("-->")) return null;
  let start = end;
  while (start >= 0 && !lines[start].trimStart().startsWith("<!--")) start--;
  if (start < 0) return null;
  return {
    text: lines
      .slice(start, end + 1)
      .join("\n")
      .trim(),
    start,
  };
}

/** The ```ts blocks of `file`, each with its directive. */
function blocksOf(file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  const directiveLines = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    if (!/^```/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that does not end`);
    if (/^```ts\s*$/.test(lines[i])) {
      const where = `${file}:${i + 1}`;
      const comment = commentAbove(lines, i);
      const m = comment && DIRECTIVE.exec(comment.text);
      if (comment && m) directiveLines.add(comment.start);
      const directive: Directive = m ? parseDirective(m[1], where) : { kind: "check", given: "" };
      blocks.push({ file, line: i + 1, lines: lines.slice(i + 1, end), directive });
    }
    i = end;
  }
  // A directive that precedes no ts block (a typo, a block moved) would be ignored silently.
  lines.forEach((l, i) => {
    if (/^\s*<!--\s*doc-example/.test(l) && !directiveLines.has(i)) {
      throw new Error(`${file}:${i + 1}: a doc-example comment not right before a ts block`);
    }
  });
  // An indented or otherwise unusual fence would escape the check.
  const fences = lines.filter((l) => /^\s*```ts/.test(l)).length;
  if (fences !== blocks.length) {
    throw new Error(`${file}: ${fences} "\`\`\`ts" fences, ${blocks.length} blocks read`);
  }
  return blocks;
}

const MODULE_NAME = /^\/\/ ([\w.-]+\.ts)\b/;

/** The modules a block is made of: split at its `// NAME.ts` lines. */
function modulesOf(block: DocBlock): DocModule[] {
  const given = block.directive.kind === "check" ? block.directive.given : "";
  const givenLines = given === "" ? 0 : given.split("\n").length;
  const dir = join(root, `${block.file}.examples`);
  const modules: DocModule[] = [];
  let start = 0;
  let name: string | null = null;
  const flush = (end: number) => {
    if (end === start) return;
    const body = block.lines.slice(start, end).join("\n");
    modules.push({
      block,
      name,
      path: join(dir, name ?? `line-${block.line}.ts`),
      givenLines,
      firstLine: block.line + 1 + start,
      text: givenLines === 0 ? body : `${given}\n${body}`,
    });
  };
  block.lines.forEach((l, i) => {
    const m = MODULE_NAME.exec(l);
    if (!m) return;
    flush(i);
    start = i;
    name = m[1];
  });
  flush(block.lines.length);
  return modules;
}

/**
 * Whether the examples are checked and run against the build: when it is current
 * (built after every source changed), it is the same code and the same types, the
 * package's own (its "exports"), and cheaper: the declarations type-check in half
 * the time of the sources they come from, and a run without tsx costs a cluster
 * example half its CPU (tsx's hooks in the program and in each pool thread, and
 * weft's modules transformed in each). Else the sources, through tsx.
 */
const onBuild = buildIsCurrent();

/** package.json's entry points, `weft/...` to the source each is built from. */
function entryPointPaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [specifier, target] of Object.entries(packageExports())) {
    const m = /^\.\/dist\/(.*)\.d\.ts$/.exec(target.types);
    if (!m) throw new Error(`${specifier}: types ${target.types} is not under dist/`);
    paths[specifier] = [join(root, "src", `${m[1]}.ts`)];
  }
  return paths;
}

/** package.json's entry points, `weft/...` to the built declarations a user's types come from. */
function builtTypePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [specifier, target] of Object.entries(packageExports())) {
    paths[specifier] = [join(root, target.types)];
  }
  return paths;
}

/** package.json's entry points, `weft/...` to the built module a user's import gets. */
function builtEntryPointPaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [specifier, target] of Object.entries(packageExports())) {
    paths[specifier] = [join(root, target.default)];
  }
  return paths;
}

/** package.json's "exports" of types and code, by the specifier a program imports. */
function packageExports(): Record<string, { types: string; default: string }> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string | { types: string; default: string }>;
  };
  const exports: Record<string, { types: string; default: string }> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target !== "string") exports[`weft${subpath.slice(1)}`] = target;
  }
  return exports;
}

/** The project's compiler options, with `weft` resolved to the build's declarations or the sources. */
function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return {
    ...options,
    noEmit: true,
    // An example names a result to show what it is, and then leaves it.
    noUnusedLocals: false,
    paths: onBuild ? builtTypePaths() : entryPointPaths(),
  };
}

/** One program of every module: virtual files served from memory, the rest from disk. */
function checkProgram(modules: DocModule[]): ts.Program {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  const virtual = new Map(modules.map((m) => [m.path, m.text]));
  const virtualDirs = new Set(modules.map((m) => dirname(m.path)));
  const { fileExists, directoryExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => virtual.has(path) || fileExists.call(host, path);
  host.directoryExists = (path) =>
    virtualDirs.has(path) || (directoryExists?.call(host, path) ?? ts.sys.directoryExists(path));
  host.readFile = (path) => virtual.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, languageVersion, onError, shouldCreate) => {
    const text = virtual.get(path);
    if (text === undefined)
      return getSourceFile.call(host, path, languageVersion, onError, shouldCreate);
    return ts.createSourceFile(path, text, languageVersion, true);
  };
  return ts.createProgram({ rootNames: [...virtual.keys()], options, host });
}

/** A diagnostic of a module, at its markdown line. */
function describeDiagnostic(module: DocModule, d: ts.Diagnostic): string {
  const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  const code = `TS${d.code}`;
  if (d.file === undefined || d.start === undefined) return `${code}: ${text}`;
  const { line } = d.file.getLineAndCharacterOfPosition(d.start);
  if (line < module.givenLines) {
    return `${module.block.file}:${module.block.line} (the given code, line ${line + 1}): ${code}: ${text}`;
  }
  const at = module.firstLine + line - module.givenLines;
  return `${module.block.file}:${at} (block at line ${module.block.line}): ${code}: ${text}`;
}

/** `modules`, once it is sure that no two have one path (a name given twice in a file). */
function distinct(modules: DocModule[]): DocModule[] {
  const seen = new Map<string, DocModule>();
  for (const m of modules) {
    const other = seen.get(m.path);
    if (other) {
      throw new Error(
        `${m.block.file}:${m.firstLine}: ${m.name} is named at line ${other.firstLine} too`,
      );
    }
    seen.set(m.path, m);
  }
  return modules;
}

const blocks = markdownFiles().flatMap(blocksOf);
const checked = blocks.filter((b) => b.directive.kind !== "skip");
const modules = distinct(checked.flatMap(modulesOf));

describe("the docs' TypeScript examples", () => {
  let program: ts.Program;
  beforeAll(() => {
    program = checkProgram(modules);
  });

  it("are all read, and skipped only where the test says", () => {
    expect(blocks.length).toBeGreaterThan(30);
    const skips = blocks.flatMap((b) =>
      b.directive.kind === "skip" ? [`${b.file}:${b.line}: ${b.directive.reason}`] : [],
    );
    expect(skips, "skipped blocks").toHaveLength(SKIPS);
  });

  it.each(checked.map((b) => [`${b.file}:${b.line}`, b] as const))("%s type-checks", (_, block) => {
    const diagnostics = modules
      .filter((m) => m.block === block)
      .flatMap((m) => {
        const file = program.getSourceFile(m.path);
        if (file === undefined) throw new Error(`${m.path} is not in the program`);
        return [
          ...program.getSyntacticDiagnostics(file),
          ...program.getSemanticDiagnostics(file),
        ].map((d) => describeDiagnostic(m, d));
      });
    expect(diagnostics).toEqual([]);
  });
});

const run = promisify(execFile);

/** The outputs a block's comments promise: `console.log(…); // X` gives X. */
function promisedOutput(block: DocBlock): string[] {
  return block.lines.flatMap((l) => {
    const m = /^\s*console\.log\(.*\);\s*\/\/ (.+)$/.exec(l);
    return m ? [m[1]] : [];
  });
}

/** `text` with every import of `weft` pointing at `paths` (the sources or the build). */
function pointedAt(text: string, paths: Record<string, string[]>): string {
  return text.replace(/from "(weft(?:\/[\w/]+)?)"/g, (_, specifier: string) => {
    const target = paths[specifier];
    if (target === undefined) throw new Error(`no entry point ${specifier}`);
    return `from ${JSON.stringify(pathToFileURL(target[0]).href)}`;
  });
}

/**
 * A module of an example, as plain Node.js runs it: compiled to JavaScript, and its
 * imports of the example's other modules (`"./tasks.ts"`, in an import or a task
 * module's URL) made imports of their compiled `.js` files.
 */
function compiled(text: string, names: ReadonlySet<string>): string {
  const { outputText } = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  return outputText.replace(/(["'])\.\/([\w.-]+)\.ts\1/g, (whole, quote: string, name: string) =>
    names.has(`${name}.ts`) ? `${quote}./${name}.js${quote}` : whole,
  );
}

describe("the docs' runnable examples", () => {
  const runnable = blocks.filter((b) => b.directive.kind === "run");

  it("are some", () => {
    expect(runnable.length).toBeGreaterThan(0);
  });

  it.concurrent.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))(
    "%s runs and prints what its comments say",
    async (_, block) => {
      const paths = onBuild ? builtEntryPointPaths() : entryPointPaths();
      const dir = mkdtempSync(join(tmpdir(), "weft-doc-example-"));
      try {
        // ES modules, as in a package of `"type": "module"`.
        writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
        // The block's modules, and the named modules of its file it may import.
        const own = modulesOf(block);
        const named = modules.filter((m) => m.block.file === block.file && m.name !== null);
        const written = [...named, ...own];
        const names = new Set(written.map((m) => basename(m.path)));
        const fileOf = (m: DocModule) =>
          join(dir, onBuild ? basename(m.path).replace(/\.ts$/, ".js") : basename(m.path));
        for (const m of written) {
          const text = pointedAt(m.text, paths);
          writeFileSync(fileOf(m), onBuild ? compiled(text, names) : text);
        }
        // The block's last module is the program (README: tasks.ts, then main.ts).
        const file = fileOf(own[own.length - 1]);
        const args = onBuild ? [file] : ["--import", "tsx", file];
        const { stdout } = await run(process.execPath, args, {
          cwd: root,
          timeout: 45_000,
        });
        const squeeze = (s: string) => s.replace(/\s+/g, "");
        const printed = stdout.trimEnd().split("\n").map(squeeze);
        expect(printed).toEqual(promisedOutput(block).map(squeeze));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
