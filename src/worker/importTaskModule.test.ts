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

  it("imports one module at a time: another import waits for a failing one, keeping what it defines", async () => {
    const id = randomUUID();
    const slow = moduleFile(
      `defineTask("slow-${id}", () => 0);\nawait new Promise((r) => setTimeout(r, 50));\nthrow new Error("late");\n`,
    );
    const quick = moduleFile(`defineTask("quick-${id}", () => 1);\n`);
    const [failed] = await Promise.allSettled([importTaskModule(slow), importTaskModule(quick)]);
    expect(failed.status).toBe("rejected");
    expect(getTaskFunction(`slow-${id}`)).toBeUndefined();
    expect(getTaskFunction(`quick-${id}`)).toBeDefined();
  });
});
