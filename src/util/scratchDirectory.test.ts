import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostTag, scratchDirectoryIn } from "./scratchDirectory.ts";

const base = mkdtempSync(join(tmpdir(), "weft-scratch-unit-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("scratchDirectoryIn", () => {
  it("leaves a directory whose pid is no process id at all", () => {
    // Past 2**53: no pid, and process.kill would throw on it rather than say "not running".
    const notAPid = `p-99999999999999999999-${hostTag()}-Ab34cd`;
    mkdirSync(join(base, notAPid));
    const mine = scratchDirectoryIn(base, "p");
    expect(readdirSync(base).sort()).toEqual([notAPid, mine.slice(base.length + 1)].sort());
  });
});
