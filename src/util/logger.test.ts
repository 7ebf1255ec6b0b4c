import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envLogLevel, weftLogger } from "./logger.ts";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

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

  it("does not throw when its destination fails, as on a full disk", () => {
    const full = new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    });
    full.write = () => {
      throw new Error("ENOSPC: no space left on device");
    };
    const log = weftLogger("test", "info", full);
    expect(() => log.warn({ key: "x" }, "spilling")).not.toThrow();
  });

  it("a process whose stderr reader is gone still exits after logging", async () => {
    // Lines logged just before exiting, to a pipe nobody reads any more (a nanny
    // killed): pino's asynchronous destination retried them forever at exit.
    const script =
      `const { weftLogger } = await import(${JSON.stringify(LOGGER)});\n` +
      `const logger = weftLogger("t", "info");\n` +
      `setTimeout(() => { for (let i = 0; i < 5; i++) logger.warn("closing " + i); process.exit(3); }, 200);\n`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    child.stderr?.destroy();
    const exit = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("hung");
      }, 20_000);
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        resolve(code ?? signal ?? "?");
      });
    });
    expect(exit).toBe(3);
  }, 30_000);
});

describe("envLogLevel", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("is $WEFT_LOG_LEVEL, the fallback when unset or empty, and a clear error for an unknown level", () => {
    vi.stubEnv("WEFT_LOG_LEVEL", "debug");
    expect(envLogLevel("info")).toBe("debug");
    vi.stubEnv("WEFT_LOG_LEVEL", "");
    expect(envLogLevel("warn")).toBe("warn");
    vi.stubEnv("WEFT_LOG_LEVEL", undefined);
    expect(envLogLevel("warn")).toBe("warn");
    // pino said "default level:verbose must be included in custom levels".
    vi.stubEnv("WEFT_LOG_LEVEL", "verbose");
    expect(() => envLogLevel("info")).toThrow(
      '$WEFT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
  });
});
