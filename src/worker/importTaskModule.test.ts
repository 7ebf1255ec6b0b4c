import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { importTaskModule } from "./importTaskModule.ts";
import { defineTask, getTaskFunction } from "./taskRegistry.ts";

const REGISTRY = new URL("./taskRegistry.ts", import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), "import-task-module-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A module file in the test's directory, with `text`, as a file URL. */
function moduleFile(text: string): string {
  const path = join(dir, `m-${randomUUID()}.mjs`);
  writeFileSync(path, `import { defineTask } from ${JSON.stringify(REGISTRY)};\n${text}`);
  return pathToFileURL(path).href;
}

describe("importTaskModule", () => {
  it("unregisters the task functions a module defined before it threw, and only those", async () => {
    const id = randomUUID();
    defineTask(`before-${id}`, () => 0);
    const url = moduleFile(
      `defineTask("a-${id}", () => "broken");\nnull.x;\ndefineTask("b-${id}", () => 1);\n`,
    );
    await expect(importTaskModule(url)).rejects.toThrow(TypeError);
    expect(getTaskFunction(`a-${id}`)).toBeUndefined();
    expect(getTaskFunction(`before-${id}`)).toBeDefined();
    // The fixed module defines the name again.
    await importTaskModule(moduleFile(`defineTask("a-${id}", () => "fixed");\n`));
    expect((getTaskFunction(`a-${id}`) as () => string)()).toBe("fixed");
  });

  it("unregisters them for every import of the module at once (two workers of a process)", async () => {
    const id = randomUUID();
    const url = moduleFile(
      `defineTask("twice-${id}", () => 0);\nawait new Promise((r) => setTimeout(r, 20));\nthrow new Error("late");\n`,
    );
    const both = await Promise.allSettled([importTaskModule(url), importTaskModule(url)]);
    expect(both.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(getTaskFunction(`twice-${id}`)).toBeUndefined();
  });

  it("keeps them when another module was imported meanwhile (they may be its), and does not wait for it", async () => {
    const id = randomUUID();
    const never = moduleFile(`defineTask("never-${id}", () => 0);\nawait new Promise(() => {});\n`);
    void importTaskModule(never);
    // It fails only once the other has defined its function, whichever was evaluated
    // first (the first import on a thread may be the slower, its hooks being set up).
    const failing = moduleFile(
      `import { getTaskFunction } from ${JSON.stringify(REGISTRY)};\n` +
        `defineTask("overlapped-${id}", () => 0);\n` +
        `while (getTaskFunction("never-${id}") === undefined) await new Promise((r) => setTimeout(r, 5));\n` +
        `throw new Error("broken");\n`,
    );
    await expect(importTaskModule(failing)).rejects.toThrow("broken");
    expect(getTaskFunction(`overlapped-${id}`)).toBeDefined();
    expect(getTaskFunction(`never-${id}`)).toBeDefined();
  });
});
