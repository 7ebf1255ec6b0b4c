import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "../../client/client.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { processUploadDirectory } from "../../worker/uploadDirectory.ts";
import { cliWorker, runWeft, testContext } from "../testContext.ts";
import { runNanny } from "./nanny.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-upload-cli-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  // The in-process worker's uploads: a test process may end without its exit handlers.
  processUploadDirectory().close();
});

/** A scheduler on 127.0.0.1 that logs nothing. */
function quietScheduler(): Promise<Scheduler> {
  return Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: pino({ level: "silent" }) });
}

describe("weft upload", () => {
  it("sends modules to worker processes, which import them (bare imports too) and keep them across restarts", async () => {
    if (!existsSync(fileURLToPath(new URL("../../../dist/client/index.js", import.meta.url)))) {
      throw new Error("no build in dist/: run `npm run build` first (npm test does)");
    }
    const helper = join(dir, "helper.mjs");
    writeFileSync(helper, "export const twice = (x) => 2 * x;\n");
    const main = join(dir, "cli-tasks.ts");
    // `weft` and `yaml` by name: neither is reachable from the worker's upload directory.
    writeFileSync(
      main,
      'import YAML from "yaml";\nimport { defineTask } from "weft";\nimport { twice } from "./helper.mjs";\n' +
        'export const where = defineTask("upload.where", () => import.meta.url);\n' +
        'defineTask("upload.yaml", (x: number): string => YAML.stringify({ v: twice(x) }).trim());\n',
    );
    const scheduler = await quietScheduler();
    const ctx = testContext();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => {
      stop = r;
    });
    const nanny = runNanny(
      {
        args: [scheduler.address, "--nthreads", "1", "--executor", "inline", "--allow-uploads"],
        maxRestarts: 0,
        stop: stopped,
      },
      ctx,
    );
    const client = await Client.connect(scheduler.address);
    try {
      await client.waitForWorkers(1, { timeoutMs: 60_000 });
      const up = await runWeft(["upload", scheduler.address, helper, main]);
      expect(up).toMatchObject({ code: 0, err: "" });
      expect(up.out).toBe(`uploaded ${helper} to 1 worker\nuploaded ${main} to 1 worker\n`);
      expect(await client.submit("upload.yaml", 21)).toBe("v: 42");
      const first = (await client.submitWith({ pure: false }, "upload.where")) as string;
      // Under the query weft imports a TypeScript module by once it registered tsx for it,
      // as the build does (the sources' process has tsx from the start).
      expect(first).toMatch(/\/weft-uploads-\d+-[^/]+\/cli-tasks\.ts(\?weft-tsx=1)?$/);
      // The worker process a restart starts saves and imports them as it registers.
      await client.restart({ timeoutMs: 60_000 });
      expect(await client.submitWith({ pure: false }, "upload.yaml", 1)).toBe("v: 2");
      const second = (await client.submitWith({ pure: false }, "upload.where")) as string;
      expect(second).not.toBe(first);
      // The first process removed its upload directory as it exited.
      expect(existsSync(fileURLToPath(new URL(".", first)))).toBe(false);
      stop();
      await nanny;
      expect(existsSync(fileURLToPath(new URL(".", second)))).toBe(false);
    } finally {
      stop();
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it("fails, saying why, for a worker that does not accept uploads and for a file that cannot be one", async () => {
    const scheduler = await quietScheduler();
    const wctx = testContext();
    const { worker, done } = await cliWorker(scheduler.address, wctx);
    try {
      const file = join(dir, "refused.mjs");
      writeFileSync(file, "export {};\n");
      const refused = await runWeft(["upload", scheduler.address, file]);
      expect(refused.code).toBe(1);
      expect(refused.out).toBe("");
      expect(refused.err).toMatch(
        /^weft upload: uploading refused\.mjs to tcp:\/\/127\.0\.0\.1:\d+ failed: .*this worker does not accept uploaded files: start it with --allow-uploads/,
      );
      const missing = await runWeft(["upload", scheduler.address, join(dir, "nope.mjs")]);
      expect(missing.code).toBe(2);
      expect(missing.err).toBe(
        `weft upload: ${join(dir, "nope.mjs")}: no such file; nothing uploaded\n`,
      );
      const data = join(dir, "data.txt");
      writeFileSync(data, "x");
      // Only saved, not imported: still refused by this worker.
      const saved = await runWeft(["upload", scheduler.address, "--no-load", data]);
      expect(saved.code).toBe(1);
      const help = await runWeft(["upload", "--help"]);
      expect(help.code).toBe(0);
      expect(help.out).toContain("--allow-uploads");
    } finally {
      await worker.close();
      await done;
      await scheduler.close();
    }
  });

  it("checks every file before sending any: a missing or unreadable one is exit 2, nothing uploaded", async () => {
    const good = join(dir, "good.mjs");
    writeFileSync(good, "export {};\n");
    // Nothing listens there: the files are checked before connecting.
    const r = await runWeft(["upload", "tcp://127.0.0.1:1", good, join(dir, "typo.mjs")]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: `weft upload: ${join(dir, "typo.mjs")}: no such file; nothing uploaded\n`,
    });
    const folder = await runWeft(["upload", "tcp://127.0.0.1:1", dir]);
    expect(folder.code).toBe(2);
    expect(folder.err).toBe(`weft upload: ${dir}: not a file; nothing uploaded\n`);
    expect(await runWeft(["upload", "tcp://127.0.0.1:1"])).toEqual({
      code: 2,
      out: "",
      err: "weft upload: name the files to upload\n",
    });
  });

  it("--no-load saves a module without importing it", async () => {
    const scheduler = await quietScheduler();
    const { worker, done } = await cliWorker(scheduler.address, testContext(), {
      allowUploads: true,
    });
    try {
      const broken = join(dir, "broken-on-import.mjs");
      writeFileSync(broken, 'throw new Error("imported");\n');
      expect(await runWeft(["upload", scheduler.address, "--no-load", broken])).toEqual({
        code: 0,
        out: `uploaded ${broken} to 1 worker\n`,
        err: "",
      });
      const loaded = join(dir, "broken-on-import-2.mjs");
      writeFileSync(loaded, 'throw new Error("imported");\n');
      const r = await runWeft(["upload", scheduler.address, loaded]);
      expect(r.code).toBe(1);
      expect(r.err).toContain("imported");
    } finally {
      await worker.close();
      await done;
      await scheduler.close();
    }
  });

  it("takes the cluster's --max-frame-bytes, without which a cluster run with its own could not be reached", async () => {
    // The commands that connect had no --max-frame-bytes: a 20 KB file went in one
    // frame, which a cluster of 4 KiB frames refused, closing the connection.
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      maxFrameBytes: 4096,
      logger: pino({ level: "silent" }),
    });
    const { worker, done } = await cliWorker(scheduler.address, testContext(), {
      allowUploads: true,
      maxFrameBytes: "4KiB",
    });
    try {
      const data = join(dir, "twenty-kb.txt");
      writeFileSync(data, "x".repeat(20_000));
      const upload = ["upload", scheduler.address, "--no-load", data];
      expect(await runWeft([...upload, "--max-frame-bytes", "4KiB"])).toEqual({
        code: 0,
        out: `uploaded ${data} to 1 worker\n`,
        err: "",
      });
      // Checked as weft worker checks them, for every command that connects.
      expect(await runWeft(["status", scheduler.address, "--max-message-bytes", "100"])).toEqual({
        code: 2,
        out: "",
        err: "weft status: --max-message-bytes must be at least 64KiB (a cluster's own messages, such as a worker's registration and heartbeats, need room), got \"100\" (100 bytes; a size without a unit is in bytes)\n",
      });
    } finally {
      await worker.close();
      await done;
      await scheduler.close();
    }
  });

  it("weft run --upload sends modules before computing, with --scheduler only", async () => {
    const scheduler = await quietScheduler();
    const wctx = testContext();
    const { worker, done } = await cliWorker(scheduler.address, wctx, { allowUploads: true });
    try {
      const registry = new URL("../../worker/taskRegistry.ts", import.meta.url).href;
      const module = join(dir, "run-upload.mjs");
      writeFileSync(
        module,
        `import { defineTask } from ${JSON.stringify(registry)};\ndefineTask("run.upload.double", (x) => 2 * x);\n`,
      );
      const graph = join(dir, "run-upload.json");
      writeFileSync(graph, JSON.stringify({ graph: { y: ["run.upload.double", 21] } }));
      const ran = await runWeft([
        "run",
        graph,
        "--scheduler",
        scheduler.address,
        "--upload",
        module,
        "--no-progress",
      ]);
      expect(ran).toMatchObject({ code: 0, err: "" });
      expect(JSON.parse(ran.out)).toEqual({ y: 42 });
      const embedded = await runWeft(["run", graph, "--upload", module, "--no-progress"]);
      const typo = await runWeft([
        "run",
        graph,
        "--scheduler",
        scheduler.address,
        "--upload",
        `${module}x`,
      ]);
      expect(typo).toEqual({
        code: 2,
        out: "",
        err: `weft run: --upload ${module}x: no such file\n`,
      });
      expect(embedded.code).toBe(2);
      expect(embedded.err).toBe(
        "weft run: --upload applies with --scheduler only (an embedded cluster's workers import --tasks from this machine)\n",
      );
    } finally {
      await worker.close();
      await done;
      await scheduler.close();
    }
  });
});
