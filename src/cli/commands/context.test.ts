import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runWithReaderGone } from "../../util/testReaderGone.ts";

const CONTEXT = fileURLToPath(new URL("./context.ts", import.meta.url));
const LOGGER = fileURLToPath(new URL("../../util/logger.ts", import.meta.url));

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
    expect(await runWithReaderGone(["--input-type=module", "-e", script], "stderr")).toEqual({
      code: 0,
      other: "result\n",
    });
  }, 30_000);
});
