import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { weftModuleUrl } from "../cli/testBuiltCommand.ts";
import { TEST_TLS_FILES, testTls } from "../comm/testTls.ts";
import { programArgs, programFile } from "../util/testTsxProgram.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

/** The build's when current: the programs then run without tsx, some 1.5 s of CPU less each. */
const CLIENT_INDEX = weftModuleUrl("client/index.ts");
/** For the test cluster's credentials (testTls, a test helper, is not built). */
const TLS = weftModuleUrl("comm/tls.ts");

afterEach(closeTestClusters);

/** Run `program` (through tsx unless `.mjs`) to its end: its exit code and output, or null on timeout. */
function runProgram(
  program: string,
  timeoutMs: number,
  onStdout: (text: string) => void = () => {},
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    // Not spawnSync: the cluster the program connects to runs in this process.
    const child = spawn(process.execPath, programArgs(program), {
      env: { ...process.env, WEFT_LOG_LEVEL: "silent" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      onStdout(stdout);
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

describe("a program with a TCP client it did not close", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-close-at-exit-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["tcp", "tls"] as const)(
    "over %s, ends after its last line, once what it awaited came, and what it sent last reaches the scheduler",
    async (protocol) => {
      const { cluster, client } = await testCluster(
        protocol === "tls" ? { protocol, tls: testTls() } : { protocol },
      );
      expect(cluster.address.startsWith(`${protocol}://`)).toBe(true);
      const program = programFile(dir, `forgetsClose-${protocol}`);
      writeFileSync(
        program,
        [
          `import { Client, wait } from ${JSON.stringify(CLIENT_INDEX)};`,
          `import { loadTlsCredentials } from ${JSON.stringify(TLS)};`,
          `const client = await Client.connect(${JSON.stringify(cluster.address)}, ${protocol === "tls" ? `{ tls: loadTlsCredentials(${JSON.stringify(TEST_TLS_FILES)}) }` : "{}"});`,
          'console.log("inc", await client.submit("inc", 41));',
          // Nothing but the awaited task is left to run meanwhile: the process must wait for it.
          'console.log("slowInc", await client.submit("slowInc", 1, 1_500));',
          'const later = client.submit("slowInc", 2, 500);',
          "await wait([later]);",
          'console.log("gathered", await client.gather(client.map("inc", [1, 2, 3])));',
          'client.logEvent("forgets-close", { last: true });',
          "",
        ].join("\n"),
      );
      const run = await runProgram(program, 30_000);
      expect(run.timedOut).toBe(false);
      expect(run.stdout).toBe("inc 42\nslowInc 2\ngathered [ 2, 3, 4 ]\n");
      expect(run.code).toBe(0);
      expect((await client.getEvents("forgets-close")).map(([, event]) => event)).toEqual([
        { last: true },
      ]);
    },
    40_000,
  );

  it("waits for a message a Sub.get awaits, which only the scheduler can bring", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp" });
    const program = programFile(dir, "awaitsSub");
    writeFileSync(
      program,
      [
        `import { Client } from ${JSON.stringify(CLIENT_INDEX)};`,
        `const client = await Client.connect(${JSON.stringify(cluster.address)});`,
        'const sub = await client.sub("close-at-exit");',
        'console.log("subscribed");',
        'console.log("got", await sub.get());',
        "",
      ].join("\n"),
    );
    let published = false;
    const run = await runProgram(program, 30_000, (stdout) => {
      if (published || !stdout.includes("subscribed")) return;
      published = true;
      // Later than the program's last turn of work: only the wait holds it.
      setTimeout(() => client.pub("close-at-exit").put("hello"), 1_000);
    });
    expect(run.timedOut).toBe(false);
    expect(run.stdout).toBe("subscribed\ngot hello\n");
    expect(run.code).toBe(0);
  }, 40_000);

  it("runs on while a subscribeTopic handler is subscribed, as a listener on a server does", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp" });
    const program = programFile(dir, "followsTopic");
    writeFileSync(
      program,
      [
        `import { Client } from ${JSON.stringify(CLIENT_INDEX)};`,
        `const client = await Client.connect(${JSON.stringify(cluster.address)});`,
        'await client.subscribeTopic("close-at-exit", (event) => {',
        '  console.log("event", event[1]);',
        '  void client.unsubscribeTopic("close-at-exit");',
        "});",
        'console.log("subscribed");',
        "",
      ].join("\n"),
    );
    let logged = false;
    const run = await runProgram(program, 30_000, (stdout) => {
      if (logged || !stdout.includes("subscribed")) return;
      logged = true;
      setTimeout(() => client.logEvent("close-at-exit", "hello"), 1_000);
    });
    expect(run.timedOut).toBe(false);
    expect(run.stdout).toBe("subscribed\nevent hello\n");
    expect(run.code).toBe(0);
  }, 40_000);
});

describe("a program's own beforeExit listeners", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-close-at-exit-listeners-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("use the client left open, added before or after it, and the program ends once they are done", async () => {
    const { cluster } = await testCluster({ protocol: "tcp" });
    const program = programFile(dir, "beforeExitListeners");
    writeFileSync(
      program,
      [
        `import { Client } from ${JSON.stringify(CLIENT_INDEX)};`,
        // Added before the client's: run first in the same turn.
        "let first = true;",
        'process.on("beforeExit", async () => {',
        "  if (!first) return;",
        "  first = false;",
        '  console.log("before", await client.submit("inc", 1));',
        "});",
        `const client = await Client.connect(${JSON.stringify(cluster.address)});`,
        // Added after the client's, and using it only once a timer fired.
        "let second = true;",
        'process.on("beforeExit", async () => {',
        "  if (!second) return;",
        "  second = false;",
        "  await new Promise((resolve) => setTimeout(resolve, 200));",
        '  console.log("after", await client.gather(client.map("inc", [10, 20])));',
        "});",
        'console.log("main", await client.submit("inc", 0));',
        "",
      ].join("\n"),
    );
    const run = await runProgram(program, 30_000);
    expect(run.timedOut).toBe(false);
    // Before, the close at beforeExit ran with them: each failed with ClientClosedError.
    expect(run.stderr).toBe("");
    expect(run.stdout.split("\n").sort()).toEqual(["", "after [ 11, 21 ]", "before 2", "main 1"]);
    expect(run.code).toBe(0);
  }, 40_000);
});

describe("a program on a LocalCluster", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-close-at-exit-local-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("waits for a result held back by a worker paused for memory, which nothing else in it works on", async () => {
    const tasks = join(dir, "tasks.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(CLIENT_INDEX)};\nexport const inc = defineTask("inc", (x) => x + 1);\n`,
    );
    const program = programFile(dir, "pausedWorker");
    writeFileSync(
      program,
      [
        `import { LocalCluster } from ${JSON.stringify(CLIENT_INDEX)};`,
        // A measure of the program's own: the worker pauses, then resumes at a look of
        // its monitor, whose timer does not keep the process running.
        "let memory = 0;",
        "const cluster = await LocalCluster.start({",
        `  workers: 1, taskModules: [${JSON.stringify(tasks)}],`,
        "  worker: { memoryLimit: 100e6, memoryMeasure: () => memory },",
        "});",
        "const client = await cluster.client();",
        "memory = 85e6;",
        "while (!cluster.workers[0].isPaused) await new Promise((r) => setTimeout(r, 20));",
        "setTimeout(() => { memory = 0; }, 0);",
        'console.log("result", await client.submit("inc", 1));',
        "await cluster.close();",
        'console.log("end");',
        "",
      ].join("\n"),
    );
    const run = await runProgram(program, 30_000);
    expect(run.timedOut).toBe(false);
    // Before, it ended at the await with exit code 13 (a top-level await left unsettled).
    expect(run.stdout).toBe("result 2\nend\n");
    expect(run.code).toBe(0);
  }, 40_000);
});
