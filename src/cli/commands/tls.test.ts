import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_TLS_FILES, TEST_TLS_FLAGS } from "../../comm/testTls.ts";
import { cliScheduler, cliWorker, runWeft, testContext } from "../testContext.ts";
import { runScheduler } from "./schedulerAction.ts";
import { runWorker } from "./workerAction.ts";

const BENCH_TASKS = fileURLToPath(new URL("../../bench/clusterTasks.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "weft-cli-tls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TLS_FLAGS = TEST_TLS_FLAGS;
const TLS_OPTS = {
  tlsCaFile: TEST_TLS_FILES.caFile,
  tlsCert: TEST_TLS_FILES.certFile,
  tlsKey: TEST_TLS_FILES.keyFile,
};

describe("TCP mode over TLS", () => {
  it("weft scheduler, weft worker, weft run and weft status with --tls-*", async () => {
    const {
      scheduler,
      stop,
      done: schedDone,
    } = await cliScheduler(
      {
        listen: "tls://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        validate: true,
        ...TLS_OPTS,
      },
      testContext(),
    );
    const address = scheduler.address;
    expect(address).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    const workerCtx = testContext();
    const { worker, done } = await cliWorker(address, workerCtx, {
      listen: "tls://127.0.0.1:0",
      tasks: [BENCH_TASKS],
      ...TLS_OPTS,
    });
    expect(worker.address).toMatch(/^tls:\/\//);
    try {
      const graph = join(dir, "g.json");
      writeFileSync(graph, JSON.stringify({ graph: { a: ["inc", 1], b: ["inc", "a"] } }));
      const r = await runWeft(["run", graph, "--scheduler", address, ...TLS_FLAGS]);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ b: 3 });
      const status = await runWeft(["status", address, "--json", ...TLS_FLAGS]);
      expect(JSON.parse(status.out).workers.map((w: { address: string }) => w.address)).toEqual([
        worker.address,
      ]);
      // Without the credentials: refused, saying what is missing.
      const bare = await runWeft(["status", address]);
      expect(bare.code).toBe(2);
      expect(bare.err).toMatch(/tls:\/\/ needs TLS credentials/);
      const partial = await runWeft(["status", address, "--tls-cert", TEST_TLS_FILES.certFile]);
      expect(partial).toMatchObject({ code: 2 });
      expect(partial.err).toContain(
        "TLS needs --tls-ca-file, --tls-cert and --tls-key: --tls-ca-file, --tls-key missing",
      );
      const unreadable = await runWeft(["status", address, ...TLS_FLAGS.slice(0, 5), "/nope.pem"]);
      expect(unreadable.err).toContain("cannot read the TLS key /nope.pem");
    } finally {
      await worker.close();
      await done;
      stop();
      await schedDone;
    }
  });

  it("with the --tls-* files, a scheduler or worker never listens on tcp://", async () => {
    const plain = testContext();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...TLS_OPTS },
      plain,
      () => Promise.resolve(),
    );
    expect(plain.exitCode).toBe(2);
    expect(plain.stderr.text).toBe(
      // It was "Scheduler option listen tcp://…", naming the API's option.
      "weft scheduler: cannot start: --listen tcp://127.0.0.1:0: with TLS credentials it must listen on tls:// (tls://127.0.0.1:0): on tcp:// anyone could connect without a certificate\n",
    );
    const { scheduler, stop, done } = await cliScheduler(
      { listen: "tls://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", ...TLS_OPTS },
      testContext(),
    );
    try {
      // Without --listen, a worker of a tls:// scheduler listens on tls:// (every interface).
      const { worker, done: workerDone } = await cliWorker(scheduler.address, testContext(), {
        listen: undefined,
        ...TLS_OPTS,
      });
      expect(worker.options.listen).toMatch(/^tls:\/\/(0\.0\.0\.0|\[::\]):\d+$/);
      expect(worker.address).toMatch(/^tls:\/\//);
      await worker.close();
      await workerDone;
      const refused = testContext();
      await runWorker(
        scheduler.address,
        {
          tasks: [],
          listen: "tcp://127.0.0.1:0",
          executor: "inline",
          logLevel: "silent",
          connectTimeout: "5000",
          ...TLS_OPTS,
        },
        refused,
        () => Promise.resolve(),
      );
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr.text).toContain(
        "weft worker: cannot start: --listen tcp://127.0.0.1:0: with TLS credentials it must listen on tls://",
      );
    } finally {
      stop();
      await done;
    }
  });

  it("the TLS flags with a tcp:// scheduler are refused, not left unused (nothing would be encrypted)", async () => {
    const { scheduler, stop, done } = await cliScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      testContext(),
    );
    const address = scheduler.address;
    const why = `--tls-ca-file, --tls-cert and --tls-key are for a tls:// scheduler, and ${address} is not one: give its tls:// address (over tcp:// nothing would be encrypted)`;
    try {
      const graph = join(dir, "plain.json");
      writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));
      const run = await runWeft(["run", graph, "--scheduler", address, ...TLS_FLAGS]);
      expect(run).toMatchObject({ code: 2, err: `weft run: ${why}\n` });
      const status = await runWeft(["status", address, ...TLS_FLAGS]);
      expect(status).toMatchObject({ code: 2, err: `weft status: ${why}\n` });
      const worker = await runWeft(["worker", address, "--executor", "inline", ...TLS_FLAGS]);
      expect(worker).toMatchObject({ code: 2, err: `weft worker: cannot start: ${why}\n` });
      expect(scheduler.state.workers.size).toBe(0);
    } finally {
      stop();
      await done;
    }
  });

  it("a TLS file linked to /dev/zero is refused unread, exit 2 (it was read forever)", async () => {
    const zero = join(dir, "zero.pem");
    symlinkSync("/dev/zero", zero);
    const flags = [
      "--tls-ca-file",
      TEST_TLS_FILES.caFile,
      "--tls-cert",
      TEST_TLS_FILES.certFile,
      "--tls-key",
      zero,
    ];
    const r = await runWeft(["status", "tls://127.0.0.1:1", ...flags]);
    expect(r).toMatchObject({ code: 2, out: "" });
    expect(r.err).toContain(
      `cannot read the TLS key ${zero}: it is a character device, not a regular file`,
    );
  });

  it("weft run refuses the TLS flags without --scheduler", async () => {
    const graph = join(dir, "h.json");
    writeFileSync(graph, JSON.stringify({ graph: { a: ["inc", 1] }, tasks: [BENCH_TASKS] }));
    const r = await runWeft(["run", graph, ...TLS_FLAGS]);
    expect(r).toMatchObject({ code: 2 });
    expect(r.err).toContain("--tls-ca-file, --tls-cert and --tls-key apply with --scheduler only");
  });
});
