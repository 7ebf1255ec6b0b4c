import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startWeft, stoppedOnceDialled, WEFT_BIN } from "../testWeftProcess.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-server-exit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A preload whose weftSetup dials `hostPort` over TLS and waits for an answer that never comes. */
function dialingPreload(hostPort: string): string {
  const file = join(dir, "dialing.mjs");
  const [host, port] = hostPort.split(":");
  writeFileSync(
    file,
    `import { connect } from "node:tls";
export function weftSetup() {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: ${JSON.stringify(host)}, port: ${port}, rejectUnauthorized: false }, resolve);
    socket.on("error", reject);
  });
}
`,
  );
  return file;
}

/**
 * Run `weft ...args(preload)`, SIGTERM it once its preload dialled, and give what it
 * ended with and how long after the signal.
 */
function stoppedWhilePreloadDials(args: (preload: string) => readonly string[]) {
  return stoppedOnceDialled((hostPort) => args(dialingPreload(hostPort)));
}

// What a preload or a plugin starts is its own: the server's close cannot end it. Before,
// a connection it left pending (or a timer) kept the process alive after the close, for
// as long as it lasted (a Client.connect's 30 s), where Dask's process ends with its loop.
describe("weft scheduler and weft worker exit once closed, whatever their preloads left running", () => {
  it("weft scheduler", async () => {
    const { outcome, tookMs } = await stoppedWhilePreloadDials((preload) => [
      "scheduler",
      "--listen",
      "tcp://127.0.0.1:0",
      "--preload",
      preload,
    ]);
    expect(outcome?.code).toBe(0);
    expect(tookMs).toBeLessThan(5_000);
    expect(outcome?.err).toContain('"msg":"scheduler closed"');
  }, 30_000);

  it("weft worker", async () => {
    const scheduler = startWeft(["scheduler", "--listen", "tcp://127.0.0.1:0"]);
    try {
      const address = await new Promise<string>((resolve) => {
        let out = "";
        scheduler.child.stdout?.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /scheduler at (tcp:\/\/\S+)/.exec(out);
          if (m) resolve(m[1] as string);
        });
      });
      const { outcome, tookMs } = await stoppedWhilePreloadDials((preload) => [
        "worker",
        address,
        "--executor",
        "inline",
        "--nthreads",
        "1",
        "--preload",
        preload,
      ]);
      expect(outcome?.code).toBe(0);
      expect(tookMs).toBeLessThan(5_000);
    } finally {
      scheduler.child.kill("SIGTERM");
      await scheduler.outcome;
    }
  }, 30_000);
});

describe("weft scheduler and weft worker exit once closed, but not before their output is written", () => {
  it("a reader behind on stdout gets all of it (a task's, a teardown's last lines)", async () => {
    const preload = join(dir, "loud.mjs");
    // Stops its scheduler, then writes more than a pipe holds as it is torn down.
    writeFileSync(
      preload,
      `export function weftSetup() { setTimeout(() => process.kill(process.pid, "SIGTERM"), 300); }
export function weftTeardown() { process.stdout.write("x".repeat(1_000_000) + "\\n"); }
`,
    );
    // The reader starts reading 3 s on: before, the process ended a second after its
    // close with all but the first 64 KiB (what the pipe holds) still to be written.
    const count = await new Promise<string>((resolve, reject) =>
      execFile(
        "sh",
        [
          "-c",
          '"$0" "$1" scheduler --listen tcp://127.0.0.1:0 --preload "$2" 2>/dev/null | (sleep 3; wc -c)',
          process.execPath,
          WEFT_BIN,
          preload,
        ],
        { timeout: 20_000 },
        (err, stdout) => (err === null ? resolve(stdout) : reject(err)),
      ),
    );
    // Its "scheduler at" line, then the teardown's.
    expect(Number(count.trim())).toBeGreaterThan(1_000_001);
  }, 30_000);
});
