import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { locatedSyntaxError } from "./syntaxErrorLocation.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-syntax-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return pathToFileURL(path).href;
}

describe("locatedSyntaxError", () => {
  it("says where a JavaScript module's own syntax error is, the error its cause", async () => {
    const url = file("bad.mjs", 'export const a = 1;\nconsole.log("x";\n');
    const err = new SyntaxError("missing ) after argument list");
    const located = await locatedSyntaxError(err, url);
    expect(located).toBeInstanceOf(SyntaxError);
    expect((located as Error).message).toBe(
      `missing ) after argument list (${join(dir, "bad.mjs")}:2: console.log("x";)`,
    );
    expect((located as Error).cause).toBe(err);
    // tsx's loader's words, which say line 1.
    const parse = new Error(`Parse error ${join(dir, "bad.mjs")}:1:1`);
    expect((await locatedSyntaxError(parse, url)) as Error).toMatchObject({
      message: expect.stringContaining("bad.mjs:2: "),
    });
  });

  it("leaves other failures as they are: a module that parses, not JavaScript, not a parse error", async () => {
    const good = file("good.mjs", 'import { x } from "./elsewhere.mjs";\nexport const y = x;\n');
    const err = new SyntaxError(
      "The requested module './elsewhere.mjs' does not provide an export named 'x'",
    );
    expect(await locatedSyntaxError(err, good)).toBe(err);
    const tsError = new SyntaxError("x");
    expect(await locatedSyntaxError(tsError, file("bad.ts", "const a: = 1;\n"))).toBe(tsError);
    const thrown = new Error("thrown at import");
    expect(await locatedSyntaxError(thrown, file("bad2.mjs", "const = 1;\n"))).toBe(thrown);
  });
});
