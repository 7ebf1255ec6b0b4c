import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { weftLogger } from "./logger.ts";

describe("weftLogger", () => {
  it("logs an error's message once, with its cause nested", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = weftLogger("test", "info", sink);
    const cause = new Error("socket ended by the other party");
    log.error({ err: new Error(`send to w1 failed: ${cause.message}`, { cause }) }, "oops");
    const entry = JSON.parse(lines[0]) as {
      name: string;
      err: { message: string; cause: { message: string } };
    };
    expect(entry.name).toBe("test");
    expect(entry.err.message).toBe("send to w1 failed: socket ended by the other party");
    expect(entry.err.cause.message).toBe("socket ended by the other party");
  });
});
