import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SHARED_CLUSTER_FILES, SHARED_FORK_FILES } from "./sharedForkFiles.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The client's test-task modules: the only task functions a shared cluster file may load. */
const CLIENT_TEST_TASKS = /^src\/client\/[A-Za-z]*Tasks\.ts$/;

/**
 * What a shared cluster file may not do, as `SHARED_CLUSTER_FILES` says: each
 * leaves something behind in the process that the files after it would meet.
 */
const OUTLIVING =
  /vi\.(mock|doMock|useFakeTimers|stubEnv|stubGlobal|spyOn|hoisted)\b|process\.env(\.[A-Za-z_]+|\[[^\]]+\])\s*=[^=]|delete process\.env|process\.(chdir|on|once|exitCode|getActiveResourcesInfo|memoryUsage)\b|defineTask|setDialer|setFlagsFromString\((?!"--expose-gc")/;

/** A relative module a source names: imported, or given as a URL (a task module). */
const RELATIVE_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|new URL\(\s*)"(\.{1,2}\/[^"]+)"/g;

const sources = new Map<string, string>();
/** The text of the module at `path` (absolute), read once. */
function source(path: string): string {
  let text = sources.get(path);
  if (text === undefined) {
    text = readFileSync(path, "utf8");
    sources.set(path, text);
  }
  return text;
}

/** The sources' modules `file` names, directly or through the modules it names (paths from the root). */
function namedModules(file: string): string[] {
  const seen = new Set<string>();
  const todo = [resolve(ROOT, file)];
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    todo.push(...namedDirectly(path));
  }
  return [...seen].map((path) => relative(ROOT, path));
}

const directlyNamed = new Map<string, string[]>();
/** The sources' modules the module at `path` names itself (absolute paths). */
function namedDirectly(path: string): string[] {
  let named = directlyNamed.get(path);
  if (named === undefined) {
    named = [...source(path).matchAll(RELATIVE_SPECIFIER)]
      .map((m) => resolve(dirname(path), m[1]))
      .filter((p) => p.startsWith(`${resolve(ROOT, "src")}/`) && /\.(ts|mts|mjs|js)$/.test(p))
      .filter((p) => existsSync(p));
    directlyNamed.set(path, named);
  }
  return named;
}

/** The names of the task functions `file` defines (not those in its comments). */
function definedTaskNames(file: string): string[] {
  const code = source(resolve(ROOT, file)).replace(/^\s*(\*|\/\/).*$/gm, "");
  return [...code.matchAll(/defineTask\(\s*"([^"]+)"/g)].map((m) => m[1]);
}

/** The modules defining task functions, other than the client's test tasks, that `file` loads. */
function foreignTaskModules(file: string): string[] {
  return namedModules(file).filter(
    (m) => m !== file && definedTaskNames(m).length > 0 && !CLIENT_TEST_TASKS.test(m),
  );
}

describe("the test files sharing a fork with other cluster tests", () => {
  it("exist, and are listed once and in no other shared list", () => {
    for (const file of SHARED_CLUSTER_FILES)
      expect(existsSync(resolve(ROOT, file)), file).toBe(true);
    expect(new Set(SHARED_CLUSTER_FILES).size).toBe(SHARED_CLUSTER_FILES.length);
    expect(SHARED_CLUSTER_FILES.filter((f) => SHARED_FORK_FILES.includes(f))).toEqual([]);
  });

  it("do nothing that outlives them in the process", () => {
    const offending = SHARED_CLUSTER_FILES.flatMap((file) => {
      const found = readFileSync(resolve(ROOT, file), "utf8").match(OUTLIVING);
      return found === null ? [] : [`${file}: ${found[0]}`];
    });
    expect(offending).toEqual([]);
  });

  it("load no task functions but the client's test tasks", () => {
    const foreign = SHARED_CLUSTER_FILES.flatMap((file) =>
      foreignTaskModules(file).map((m) => `${file} loads ${m}`),
    );
    expect(foreign).toEqual([]);
  });

  it("whose test tasks have distinct names, so that one process can load them all", () => {
    const modules = namedModules("test/sharedClusterSetup.ts").concat(
      ...SHARED_CLUSTER_FILES.map(namedModules),
    );
    const taskModules = [...new Set(modules)].filter((m) => CLIENT_TEST_TASKS.test(m));
    expect(taskModules).toContain("src/client/testTasks.ts");
    const names = taskModules.flatMap(definedTaskNames);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it("the check finds what a shared file must not load", () => {
    // Files kept in their own forks for what they load: the checks above would refuse them.
    expect(foreignTaskModules("src/client/tcp.test.ts")).toContain("src/bench/clusterTasks.ts");
    expect(foreignTaskModules("src/client/events.test.ts")).toContain("src/worker/testTasks.ts");
    expect(readFileSync(resolve(ROOT, "src/client/scatterUnreadable.test.ts"), "utf8")).toMatch(
      OUTLIVING,
    );
  });
});
