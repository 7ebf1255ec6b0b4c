import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CONTEXT = fileURLToPath(new URL("./context.ts", import.meta.url));
const LOGGER = fileURLToPath(new URL("../../util/logger.ts", import.meta.url));

/** Run `script` (an ES module) with its stderr's reader gone: its exit code and stdout. */
async function withStderrClosed(script: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr?.destroy();
  let stdout = "";
  child.stdout?.on("data", (b: Buffer) => {
    stdout += b.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout };
}

describe("processContext", () => {
  it("goes on when the reader of stderr is gone (`weft … 2>&1 >out | head -1`), its logger's lines and notes unread", async () => {
    const script =
      `const { processContext } = await import(${JSON.stringify(CONTEXT)});\n` +
      `const { weftLogger } = await import(${JSON.stringify(LOGGER)});\n` +
      "const ctx = processContext();\n" +
      'const logger = weftLogger("weft.test", "info");\n' +
      "for (let i = 0; i < 5; i++) {\n" +
      '  ctx.stderr.write("note " + i + "\\n");\n' +
      '  logger.info({ i }, "a line");\n' +
      "  await new Promise((r) => setTimeout(r, 50));\n" +
      "}\n" +
      'ctx.stdout.write("result\\n");\n';
    expect(await withStderrClosed(script)).toEqual({ code: 0, stdout: "result\n" });
  }, 30_000);
});
