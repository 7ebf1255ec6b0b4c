import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Client } from "../../client/client.ts";
import { listen } from "../../comm/connect.ts";
import { serveRpc } from "../../comm/rpc.ts";
import { TEST_TLS_FILES } from "../../comm/testTls.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { readSchedulerFile } from "../../util/schedulerFile.ts";
import { testContext as context, refusingAddress } from "../testContext.ts";
import { main } from "../weft.ts";
import { freePort } from "./contactAddress.ts";
import { runScheduler } from "./schedulerAction.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The test cluster's TLS credentials, as `weft scheduler`'s options. */
const TLS_OPTS = {
  tlsCaFile: TEST_TLS_FILES.caFile,
  tlsCert: TEST_TLS_FILES.certFile,
  tlsKey: TEST_TLS_FILES.keyFile,
};

/** Credentials another CA signed, which the test cluster's refuses. */
const STRANGER_OPTS = {
  tlsCaFile: TEST_TLS_FILES.caFile.replace(/ca\.pem$/, "other.pem"),
  tlsCert: TEST_TLS_FILES.caFile.replace(/ca\.pem$/, "other.pem"),
  tlsKey: TEST_TLS_FILES.caFile.replace(/ca\.pem$/, "other-key.pem"),
};

/** The port `server` listens on, once it does (any free one of 127.0.0.1). */
async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

/** A server answering whatever comes with an HTTP error (a program that is no scheduler). */
function answeringHttp(): Server {
  return createServer((socket) => {
    socket.on("error", () => {}); // the probe's reset
    socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
  });
}

/**
 * Programs that accept connections and are no scheduler, for `use`: one answering
 * HTTP, and a sink that never answers (as a network that accepts every connection);
 * both closed after, the sink's connections too.
 */
async function withForeignListeners(
  use: (listeners: { readonly http: Server; readonly sink: Server }) => Promise<void>,
): Promise<void> {
  const sockets: Socket[] = [];
  const http = answeringHttp();
  const sink = createServer((socket) => {
    socket.on("error", () => {});
    sockets.push(socket);
  });
  try {
    await use({ http, sink });
  } finally {
    for (const socket of sockets) socket.destroy();
    http.close();
    sink.close();
  }
}

/** A logger that says nothing. */
function silentLogger() {
  return pino({ level: "silent" });
}

const WORKER = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];

describe("--scheduler-file", () => {
  it("weft scheduler writes its address there; weft worker waits for it and finds the scheduler", async () => {
    const file = join(dir, "cluster.json");
    // The worker first: it waits for the file.
    const workerCtx = context();
    const worker = main(
      ["node", "weft", "worker", "--scheduler-file", file, ...WORKER, "--connect-timeout", "20000"],
      workerCtx,
    );
    await sleep(300);
    const schedCtx = context();
    let address = "";
    const scheduler = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      schedCtx,
      (s) => {
        address = s.address;
        return s.closed;
      },
    );
    const found = await readSchedulerFile(file, { timeoutMs: 10_000 });
    expect(found).toBe(address);
    const content = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(content).toMatchObject({ type: "Scheduler", address, services: {}, workers: {} });
    expect(content.id).toMatch(/^Scheduler-/);
    const client = await Client.connect(found, { printTaskOutput: false });
    await client.waitForWorkers(1, { timeoutMs: 20_000 });
    // weft run finds it the same way.
    const graph = join(dir, "graph.json");
    writeFileSync(graph, JSON.stringify({ graph: { x: 1, y: 2 } }));
    const runCtx = context();
    expect(await main(["node", "weft", "run", graph, "--scheduler-file", file], runCtx)).toBe(0);
    expect(JSON.parse(runCtx.stdout.text)).toEqual({ x: 1, y: 2 });
    const both = context();
    await main(
      ["node", "weft", "run", graph, "--scheduler-file", file, "--scheduler", found],
      both,
    );
    expect(both.stderr.text).toBe("weft run: give --scheduler or --scheduler-file, not both\n");
    // Shut down: the worker exits 0, the scheduler closes and removes its file.
    await client.shutdown();
    expect(await worker).toBe(0);
    await scheduler;
    expect(schedCtx.exitCode).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it("weft worker reads the file again while the scheduler it names refuses connections (left by one gone)", async () => {
    const file = join(dir, "stale.json");
    writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
    const workerCtx = context();
    const worker = main(
      ["node", "weft", "worker", "--scheduler-file", file, ...WORKER, "--connect-timeout", "20000"],
      workerCtx,
    );
    await sleep(300);
    // Started again, elsewhere: it writes its own address over the stale one.
    let address = "";
    const scheduler = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      context(),
      (s) => {
        address = s.address;
        return s.closed;
      },
    );
    const client = await Client.connect(
      await readSchedulerFile(file, { timeoutMs: 10_000 }).then(async (found) => {
        // The stale address may still be there for a moment.
        while (found !== address) found = await readSchedulerFile(file);
        return found;
      }),
      { printTaskOutput: false },
    );
    try {
      await client.waitForWorkers(1, { timeoutMs: 10_000 });
    } finally {
      await client.shutdown();
    }
    expect(await worker).toBe(0);
    await scheduler;

    // None comes: the worker says which address refused, and for how long.
    writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
    const alone = context();
    expect(
      await main(
        ["node", "weft", "worker", "--scheduler-file", file, ...WORKER, "--death-timeout", "300ms"],
        alone,
      ),
    ).toBe(2);
    expect(alone.stderr.text).toMatch(
      /^weft worker: cannot start: the scheduler at tcp:\/\/127\.0\.0\.1:\d+ \(named by .*stale\.json\) still refuses connections after 300 ms/,
    );
  }, 60_000);

  it("weft scheduler does not take the file of a scheduler still running: it was written over, then removed", async () => {
    const file = join(dir, "taken.json");
    let first = "";
    let firstId = "";
    let stopFirst = (): void => {};
    const running = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      context(),
      (s) => {
        first = s.address;
        firstId = s.id;
        stopFirst = () => void s.close();
        return s.closed;
      },
    );
    await readSchedulerFile(file, { timeoutMs: 10_000 });
    // A second one given the same path by mistake (a job script run twice).
    const second = context();
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      second,
      () => Promise.resolve(),
    );
    expect(second.exitCode).toBe(2);
    expect(second.stderr.text).toBe(
      `weft scheduler: cannot start: the scheduler file ${file} names a scheduler still running at ${first} (${firstId} answers there): written over, its workers and clients would come to this one. Stop that scheduler first, or give another --scheduler-file\n`,
    );
    // The first's file is still there: workers its nannies start again still find it.
    expect(await readSchedulerFile(file, { timeoutMs: 0 })).toBe(first);
    stopFirst();
    await running;
    expect(existsSync(file)).toBe(false);
  }, 30_000);

  it("two schedulers started at once with one file: the one that writes second does not write over the first's", async () => {
    const file = join(dir, "together.json");
    // Its preload holds it in its start until the other has written the file: as a
    // job script run twice at once (an array job, mpirun -n 2), its first look saw none.
    const preload = join(dir, "until-written.mjs");
    writeFileSync(
      preload,
      `import { existsSync } from "node:fs";\nexport async function weftSetup() {\n  while (!existsSync(${JSON.stringify(file)})) await new Promise((r) => setTimeout(r, 20));\n}\n`,
    );
    const late = context();
    const lateRun = runScheduler(
      {
        listen: "tcp://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        schedulerFile: file,
        preload: [preload],
      },
      late,
      () => Promise.resolve(),
    );
    await sleep(300);
    let first = "";
    let firstId = "";
    let stopFirst = (): void => {};
    const running = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      context(),
      (s) => {
        first = s.address;
        firstId = s.id;
        stopFirst = () => void s.close();
        return s.closed;
      },
    );
    await lateRun;
    // It wrote its own address over the first's, then, closing, removed the file.
    expect(late.exitCode).toBe(2);
    expect(late.stderr.text).toBe(
      `weft scheduler: cannot start: the scheduler file ${file} names a scheduler still running at ${first} (${firstId} answers there): written over, its workers and clients would come to this one. Stop that scheduler first, or give another --scheduler-file\n`,
    );
    expect(late.stdout.text).toBe("");
    expect(await readSchedulerFile(file, { timeoutMs: 0 })).toBe(first);
    stopFirst();
    await running;
  }, 30_000);

  it("weft scheduler replaces a file whose address a program that is no scheduler accepts connections on, saying so", async () => {
    // It was refused as a scheduler still running: a port taken by another program
    // since, or a network that accepts every connection (a sink).
    await withForeignListeners(async ({ http, sink }) => {
      for (const [server, why] of [
        [http, "it answered no identity: .*HTTP"],
        [sink, "it accepts connections but did not answer within 2 s"],
      ] as const) {
        const port = await listening(server);
        const file = join(dir, `foreign-${port}.json`);
        const address = `tcp://127.0.0.1:${port}`;
        writeFileSync(file, JSON.stringify({ type: "Scheduler", id: "Scheduler-gone", address }));
        const ctx = context();
        let written: Record<string, unknown> = {};
        let id = "";
        await runScheduler(
          {
            listen: "tcp://127.0.0.1:0",
            workerTtl: "30000",
            logLevel: "silent",
            schedulerFile: file,
          },
          ctx,
          async (s) => {
            id = s.id;
            written = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
          },
        );
        expect(ctx.exitCode).toBe(0);
        expect(written.id).toBe(id);
        expect(ctx.stderr.text).toMatch(
          new RegExp(
            `^weft scheduler: the scheduler file ${file} named ${address}, where no weft scheduler answers \\(${why}[^\n]*\\): replacing it\n$`,
          ),
        );
      }
    });
  }, 30_000);

  it("weft scheduler replaces a file whose address a weft server that is no scheduler listens on", async () => {
    // A worker now on the port (or a program of weft's protocol answering garbage).
    for (const [identity, why] of [
      [{ type: "Worker", id: "tcp://127.0.0.1:1" }, `it answered identity with {"type":"Worker"`],
      [42, "it answered identity with 42"],
      [undefined, "it answered identity with undefined"],
    ] as const) {
      const listener = await listen("tcp://127.0.0.1:0", (comm) =>
        serveRpc(comm, { identity: () => identity }),
      );
      try {
        const file = join(dir, "worker-port.json");
        const address = listener.address;
        writeFileSync(file, JSON.stringify({ type: "Scheduler", id: "Scheduler-gone", address }));
        const ctx = context();
        await runScheduler(
          {
            listen: "tcp://127.0.0.1:0",
            workerTtl: "30000",
            logLevel: "silent",
            schedulerFile: file,
          },
          ctx,
          () => Promise.resolve(),
        );
        expect(ctx.exitCode).toBe(0);
        expect(ctx.stderr.text).toContain(
          `weft scheduler: the scheduler file ${file} named ${address}, where no weft scheduler answers (${why}`,
        );
      } finally {
        await listener.close();
      }
    }
  }, 30_000);

  it("weft scheduler refuses a stale file whose address another scheduler now runs on", async () => {
    // The file's scheduler is gone; one started since without the file listens there.
    const other = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silentLogger() });
    try {
      const file = join(dir, "stale-taken.json");
      writeFileSync(
        file,
        JSON.stringify({ type: "Scheduler", id: "Scheduler-gone", address: other.address }),
      );
      const ctx = context();
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          schedulerFile: file,
        },
        ctx,
        () => Promise.resolve(),
      );
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).toBe(
        `weft scheduler: cannot start: the scheduler file ${file} names Scheduler-gone at ${other.address}, where another scheduler, ${other.id}, now runs: whoever reads the file joins that cluster, and written over, its workers and clients would come to this one. Stop that scheduler first, or give another --scheduler-file (if that cluster is not to be found through this file, remove it)\n`,
      );
      expect(JSON.parse(readFileSync(file, "utf8")).id).toBe("Scheduler-gone");
    } finally {
      await other.close();
    }
  }, 30_000);

  it("weft scheduler asks a TLS scheduler over TLS, and refuses its file, with the cluster's certificates or others", async () => {
    const file = join(dir, "tls.json");
    let first = "";
    let firstId = "";
    let stopFirst = (): void => {};
    const running = runScheduler(
      {
        listen: "tls://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        schedulerFile: file,
        ...TLS_OPTS,
      },
      context(),
      (s) => {
        first = s.address;
        firstId = s.id;
        stopFirst = () => void s.close();
        return s.closed;
      },
    );
    await readSchedulerFile(file, { timeoutMs: 10_000 });
    const second = async (tls: object) => {
      const ctx = context();
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          schedulerFile: file,
          ...tls,
        },
        ctx,
        () => Promise.resolve(),
      );
      expect(ctx.exitCode).toBe(2);
      return ctx.stderr.text;
    };
    try {
      expect(await second({ ...TLS_OPTS, listen: "tls://127.0.0.1:0" })).toBe(
        `weft scheduler: cannot start: the scheduler file ${file} names a scheduler still running at ${first} (${firstId} answers there): written over, its workers and clients would come to this one. Stop that scheduler first, or give another --scheduler-file\n`,
      );
      // Another CA's certificate, which the running one refuses; no TLS at all.
      const unasked = (why: string) =>
        new RegExp(
          `^weft scheduler: cannot start: the scheduler file ${file} names ${first}, which accepts connections, but this scheduler cannot ask it what it is \\(${why}[^\n]*\\): it may be a scheduler still running with other certificates, whose workers and clients would come to this one\\. Stop it first, or give another --scheduler-file \\(if what listens at ${first} is no scheduler of yours, remove the file\\)\n$`,
        );
      expect(await second({ ...STRANGER_OPTS, listen: "tls://127.0.0.1:0" })).toMatch(
        unasked(
          "it (ended the TLS handshake|closed the TLS connection before answering), refusing this scheduler's certificate\\?",
        ),
      );
      expect(await second({})).toMatch(unasked("this scheduler has no TLS credentials"));
      expect(await readSchedulerFile(file, { timeoutMs: 0 })).toBe(first);
    } finally {
      stopFirst();
      await running;
    }
  }, 30_000);

  it("weft scheduler replaces a tls:// file whose address a program speaking no TLS, or a sink, listens on", async () => {
    await withForeignListeners(async ({ http, sink }) => {
      for (const [server, why] of [
        [http, "the TLS handshake failed: wrong version number \\(ERR_SSL_WRONG_VERSION_NUMBER\\)"],
        // The TLS handshake never ends.
        [sink, "it accepts connections but did not answer within 2 s"],
      ] as const) {
        const port = await listening(server);
        const file = join(dir, `tls-foreign-${port}.json`);
        const address = `tls://127.0.0.1:${port}`;
        writeFileSync(file, JSON.stringify({ type: "Scheduler", id: "Scheduler-gone", address }));
        const ctx = context();
        await runScheduler(
          {
            listen: "tls://127.0.0.1:0",
            workerTtl: "30000",
            logLevel: "silent",
            schedulerFile: file,
            ...TLS_OPTS,
          },
          ctx,
          () => Promise.resolve(),
        );
        expect(ctx.exitCode).toBe(0);
        expect(ctx.stderr.text).toMatch(
          new RegExp(
            `^weft scheduler: the scheduler file ${file} named ${address}, where no weft scheduler answers \\(${why}\\): replacing it\n$`,
          ),
        );
      }
    });
  }, 30_000);

  it("weft scheduler does not write over a file that is no scheduler file: it was lost", async () => {
    for (const [name, text, why] of [
      ["settings.json", '{ "threads": 4 }\n', 'gives no address \\(a string field "address"\\)'],
      ["notes.txt", "run on node-3\n", "is not JSON: "],
    ] as const) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const ctx = context();
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          schedulerFile: file,
        },
        ctx,
        () => Promise.resolve(),
      );
      // Written over, then removed as the scheduler closed.
      expect(readFileSync(file, "utf8")).toBe(text);
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).toMatch(
        new RegExp(
          `^weft scheduler: cannot start: the scheduler file ${file} ${why}[\\s\\S]*: written over, what it holds would be lost\\. Give another --scheduler-file, or remove it\n$`,
        ),
      );
    }
    // An empty one (made ahead by the job script) is written as before.
    const empty = join(dir, "empty.json");
    writeFileSync(empty, "");
    const ctx = context();
    let written = "";
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: empty },
      ctx,
      async () => {
        written = readFileSync(empty, "utf8");
      },
    );
    expect(ctx.exitCode).toBe(0);
    expect(JSON.parse(written)).toMatchObject({ type: "Scheduler" });
  }, 30_000);

  it("weft scheduler refuses a --scheduler-file that is a FIFO or a device, unread", async () => {
    const fifo = join(dir, "fifo.json");
    spawnSync("mkfifo", [fifo]);
    const zero = join(dir, "zero-scheduler.json");
    symlinkSync("/dev/zero", zero);
    for (const [file, kind] of [
      [fifo, "a FIFO (named pipe)"],
      [zero, "a character device"],
    ] as const) {
      const ctx = context();
      // Read to see what it names, the FIFO waited for a writer, /dev/zero was read forever.
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          schedulerFile: file,
        },
        ctx,
        () => Promise.resolve(),
      );
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).toMatch(
        new RegExp(
          `^weft scheduler: cannot start: cannot write the scheduler file ${file}: it is ${kind.replace(/[()]/g, "\\$&")}`,
        ),
      );
    }
  }, 30_000);

  it("weft scheduler replaces a file left by one gone whose address it now listens on itself", async () => {
    const file = join(dir, "own-address.json");
    const port = await freePort("127.0.0.1");
    // A scheduler SIGKILLed on this fixed port, started again on it.
    writeFileSync(
      file,
      JSON.stringify({
        type: "Scheduler",
        id: "Scheduler-gone",
        address: `tcp://127.0.0.1:${port}`,
      }),
    );
    const ctx = context();
    let written = "";
    await runScheduler(
      {
        listen: `tcp://127.0.0.1:${port}`,
        workerTtl: "30000",
        logLevel: "silent",
        schedulerFile: file,
      },
      ctx,
      async () => {
        written = readFileSync(file, "utf8");
      },
    );
    expect(ctx.stderr.text).toBe("");
    expect(ctx.exitCode).toBe(0);
    expect(JSON.parse(written)).toMatchObject({ address: `tcp://127.0.0.1:${port}` });
    expect(JSON.parse(written).id).not.toBe("Scheduler-gone");
  }, 30_000);

  it("weft worker refuses neither or both, and says what is wrong with the file", async () => {
    const run = async (...args: string[]) => {
      const ctx = context();
      const code = await main(["node", "weft", "worker", ...args, ...WORKER], ctx);
      return { code, err: ctx.stderr.text };
    };
    const neither = await run();
    expect(neither.code).toBe(2);
    expect(neither.err).toBe(
      "weft worker: cannot start: give the scheduler's address or --scheduler-file, neither was given\n",
    );
    const both = await run("tcp://127.0.0.1:1", "--scheduler-file", join(dir, "x.json"));
    expect(both.err).toMatch(/give the scheduler's address or --scheduler-file, not both/);
    const missing = join(dir, "missing.json");
    const late = await run("--scheduler-file", missing, "--death-timeout", "200ms");
    expect(late.code).toBe(2);
    expect(late.err).toBe(
      `weft worker: cannot start: no scheduler file at ${missing} after 200 ms (is the scheduler started with --scheduler-file?)\n`,
    );
    // A link to /dev/zero was read forever: exit 2, saying what it is.
    const zero = join(dir, "zero.json");
    symlinkSync("/dev/zero", zero);
    expect(await run("--scheduler-file", zero)).toEqual({
      code: 2,
      err: `weft worker: cannot start: cannot read the scheduler file ${zero}: it is a character device, not a regular file\n`,
    });
    const status = context();
    expect(await main(["node", "weft", "status", "--scheduler-file", zero], status)).toBe(2);
    expect(status.stderr.text).toBe(
      `weft status: cannot read the scheduler file ${zero}: it is a character device, not a regular file\n`,
    );
    const garbage = join(dir, "garbage.json");
    writeFileSync(garbage, "{ not json");
    expect((await run("--scheduler-file", garbage)).err).toMatch(
      new RegExp(`cannot start: the scheduler file ${garbage} is not JSON: `),
    );
    const noAddress = join(dir, "no-address.json");
    writeFileSync(noAddress, JSON.stringify({ type: "Scheduler" }));
    expect((await run("--scheduler-file", noAddress)).err).toMatch(
      /gives no address \(a string field "address"\)/,
    );
  });

  it("weft status says at once on stderr that it waits for the scheduler file, and for how long", async () => {
    const file = join(dir, "later.json");
    const ctx = context();
    const status = main(
      ["node", "weft", "status", "--scheduler-file", file, "--json", "--connect-timeout", "20000"],
      ctx,
    );
    // Said once the command's modules are loaded: not a fixed time on a loaded host.
    await vi.waitFor(() => expect(ctx.stderr.text).not.toBe(""), { timeout: 10_000, interval: 20 });
    const waiting = `weft status: waiting for the scheduler file ${file} (not there yet); giving up after 20 s\n`;
    expect(ctx.stderr.text).toBe(waiting);
    const schedCtx = context();
    let stop = (): void => {};
    const scheduler = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent", schedulerFile: file },
      schedCtx,
      (s) => {
        stop = () => void s.close();
        return s.closed;
      },
    );
    expect(await status).toBe(0);
    expect(ctx.stderr.text).toBe(waiting); // said once
    expect(JSON.parse(ctx.stdout.text)).toMatchObject({ workers: [] });
    stop();
    await scheduler;
    // None in time: the wait said, then why it ended.
    const missing = join(dir, "never.json");
    const late = context();
    expect(
      await main(
        ["node", "weft", "status", "--scheduler-file", missing, "--connect-timeout", "300ms"],
        late,
      ),
    ).toBe(2);
    expect(late.stderr.text).toBe(
      `weft status: waiting for the scheduler file ${missing} (not there yet); giving up after 0.3 s\n` +
        `weft status: no scheduler file at ${missing} after 300 ms (is the scheduler started with --scheduler-file?)\n`,
    );
  }, 30_000);

  // A directory closed to this process as it runs: by its mode, or (root ignoring modes)
  // by a read-only bind mount over it.
  it("weft scheduler says so when it cannot remove its file as it closes, and exits as it would", async ({
    skip,
  }) => {
    const sub = join(dir, "closed-later");
    mkdirSync(sub);
    const file = join(sub, "s.json");
    const root = process.getuid?.() === 0;
    let closedBy = "";
    const close = (): void => {
      if (!root) {
        chmodSync(sub, 0o555);
        closedBy = "does not allow it (EACCES)";
      } else if (
        spawnSync("mount", ["--bind", sub, sub]).status === 0 &&
        spawnSync("mount", ["-o", "remount,ro,bind", sub]).status === 0
      ) {
        closedBy = "is on a read-only file system (EROFS)";
      }
    };
    const ctx = context();
    try {
      await runScheduler(
        {
          listen: "tcp://127.0.0.1:0",
          workerTtl: "30000",
          logLevel: "silent",
          schedulerFile: file,
        },
        ctx,
        () => {
          close();
          return Promise.resolve();
        },
      );
      if (closedBy === "") skip("no way to close the directory here");
      // It was silence: the file stayed, naming a scheduler gone, and nothing said so.
      expect(ctx.stderr.text).toBe(
        `weft scheduler: cannot remove the scheduler file ${file}: ${sub} ${closedBy}; remove it by hand\n`,
      );
      expect(ctx.exitCode).toBe(0);
      expect(existsSync(file)).toBe(true);
    } finally {
      if (root) spawnSync("umount", [sub]);
      else chmodSync(sub, 0o755);
    }
  });

  it("weft scheduler cannot start when it cannot write the file", async () => {
    const ctx = context();
    await runScheduler(
      {
        listen: "tcp://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        schedulerFile: join(dir, "no", "such", "dir", "s.json"),
      },
      ctx,
      () => Promise.resolve(),
    );
    expect(ctx.exitCode).toBe(2);
    expect(ctx.stderr.text).toBe(
      `weft scheduler: cannot start: cannot write the scheduler file ${join(dir, "no", "such", "dir", "s.json")}: no such directory: ${join(dir, "no", "such", "dir")}\n`,
    );
  });
});
