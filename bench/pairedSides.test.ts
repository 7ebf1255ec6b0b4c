import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Side } from "./pairedSides.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-paired-sides-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A side script: ready at once, then `onRun` (JavaScript) for each run request. */
function sideScript(name: string, onRun: string): string {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(
    path,
    `process.on("message", (req) => {
  if (req.op === "close") process.exit(0);
  ${onRun}
});
process.send({ op: "ready" });
`,
  );
  return path;
}

describe("paired benchmark sides", () => {
  it("gets a side's seconds for a run", async () => {
    const side = await Side.start(
      "this",
      sideScript("answers", "process.send({ id: req.id, seconds: 1.5 });"),
      [],
      [],
    );
    try {
      await expect(side.run("w", "p")).resolves.toBe(1.5);
    } finally {
      await side.close();
    }
  });

  it("fails a run whose side does not answer in time, and kills the side", async () => {
    const side = await Side.start("base", sideScript("silent", ""), [], []);
    await expect(side.run("w", "p", 300)).rejects.toThrow("base: no answer to a run of w in 0.3 s");
    await expect(side.run("w", "p")).rejects.toThrow("base: no answer");
    await side.close();
  });

  it("fails a run whose side exits, naming the side", async () => {
    const side = await Side.start("this", sideScript("exits", "process.exit(3);"), [], []);
    await expect(side.run("w", "p")).rejects.toThrow("this: its process exited (3)");
    await side.close();
  });

  it("fails to start a side whose script fails", async () => {
    const script = join(dir, "broken.mjs");
    writeFileSync(
      script,
      'process.send({ op: "failed", error: "no such checkout" }, () => process.exit(1));\n',
    );
    await expect(Side.start("base", script, [], [])).rejects.toThrow("no such checkout");
  });
});
