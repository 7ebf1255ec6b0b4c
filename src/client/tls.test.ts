import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { strangerTls, testTls } from "../comm/testTls.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { LocalCluster } from "./localCluster.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc, sum } from "./testTasks.ts";

const silent = pino({ level: "silent" });
afterEach(closeTestClusters);

describe("a cluster over tls://", () => {
  it("computes, moves data between workers, scatters and gathers, all over TLS", async () => {
    const { cluster, client } = await testCluster({ protocol: "tls", tls: testTls() });
    expect(cluster.address).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    for (const w of cluster.workers) expect(w.address).toMatch(/^tls:\/\//);
    const [first, second] = cluster.workers;
    const a = client.submitWith({ workers: first.address }, inc, 1);
    const b = client.submitWith({ workers: second.address }, inc, 2);
    // The sum needs a transfer between the workers.
    expect(await client.submit(sum, [a, b])).toBe(5);
    const [x] = await client.scatter([41]);
    expect(await client.submit(inc, x)).toBe(42);
    await client.restart();
    expect(await client.submit(inc, 9)).toBe(10);
  });

  it("refuses clients and workers without the cluster's credentials, saying why", async () => {
    const { cluster } = await testCluster({ protocol: "tls", tls: testTls() });
    await expect(Client.connect(cluster.address, { logger: silent })).rejects.toThrow(
      /tls:\/\/ needs TLS credentials/,
    );
    await expect(
      Client.connect(cluster.address, { logger: silent, tls: strangerTls(), timeoutMs: 5000 }),
    ).rejects.toThrow(/the TLS handshake failed/);
    // A worker trusting the cluster's CA, with a certificate another CA signed: refused.
    const intruder = { ...strangerTls(), ca: testTls().ca };
    const err = await Worker.create({
      scheduler: cluster.address,
      listen: "tls://127.0.0.1:0",
      tls: intruder,
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      connectTimeoutMs: 5000,
      logger: silent,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/may have refused this process's TLS certificate/);
    expect(cluster.scheduler.state.workers.size).toBe(2);
  });

  it("a client or worker dialling a tls:// scheduler at its tcp:// address is told it may listen on tls://", async () => {
    // The scheduler closes such a connection unanswered (its log says why); the message
    // asked only whether the address was a worker's.
    const { cluster } = await testCluster({ protocol: "tls", tls: testTls() });
    const plain = cluster.address.replace("tls://", "tcp://");
    const told = `a scheduler listening on tls:// (give ${cluster.address} and the cluster's TLS credentials, --tls-ca-file, --tls-cert, --tls-key)`;
    const clientErr = (await Client.connect(plain, { logger: silent, timeoutMs: 5000 }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(clientErr.message).toContain(
      `closed the connection instead of answering register-client`,
    );
    expect(clientErr.message).toContain(`; or is it ${told}?`);
    const workerErr = await Worker.create({
      scheduler: plain,
      listen: "tcp://127.0.0.1:0",
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      connectTimeoutMs: 5000,
      deathTimeoutMs: 5000,
      logger: silent,
    }).catch((e: unknown) => e as Error);
    expect((workerErr as Error).message).toContain(`, ${told} a third`);
  });

  it("protocol tls needs the credentials; bad credentials are named", async () => {
    await expect(LocalCluster.start({ protocol: "tls", logger: silent })).rejects.toThrow(
      'LocalCluster option protocol "tls" needs the tls option (ca, cert, key)',
    );
    await expect(
      Client.connect("tls://127.0.0.1:1", { tls: { ca: "x", cert: "y" } as never }),
    ).rejects.toThrow("Client option tls.key must be PEM text (a string or a Buffer)");
    expect(
      () => new Worker({ scheduler: "tls://127.0.0.1:1", tls: { ca: 1 } as never, logger: silent }),
    ).toThrow("Worker option tls.ca must be PEM text");
  });

  it("a server with credentials never listens in the clear", async () => {
    const tls = testTls();
    // A worker of a tls:// scheduler serves its peers over TLS by default.
    const w = new Worker({ scheduler: "tls://127.0.0.1:1", tls, logger: silent });
    expect(w.options.listen).toBe("tls://127.0.0.1:0");
    // So does one given credentials for another scheduler: its default was refused as
    // "Worker option listen tcp://127.0.0.1:0: with TLS credentials it must listen on tls://".
    expect(
      () =>
        new Worker({
          scheduler: "tls://127.0.0.1:1",
          contactAddress: "tcp://10.0.0.1:4000",
          tls,
          logger: silent,
        }),
    ).toThrow(
      /this worker listens on tls:\/\/ \(listen tls:\/\/127.0.0.1:0\), which peers dialling tcp:\/\/ would not reach/,
    );
    for (const scheduler of ["tcp://127.0.0.1:1", "inproc://elsewhere/1"]) {
      expect(new Worker({ scheduler, tls, logger: silent }).options.listen, scheduler).toBe(
        "tls://127.0.0.1:0",
      );
    }
    // On tcp://, anyone could fetch results or run code without a certificate: refused.
    expect(
      () =>
        new Worker({
          scheduler: "tls://127.0.0.1:1",
          listen: "tcp://0.0.0.0:4000",
          tls,
          logger: silent,
        }),
    ).toThrow(
      "Worker option listen tcp://0.0.0.0:4000: with TLS credentials it must listen on tls:// (tls://0.0.0.0:4000): on tcp:// anyone could connect without a certificate",
    );
    expect(() => new Scheduler({ listen: "tcp://127.0.0.1:0", tls, logger: silent })).toThrow(
      "Scheduler option listen tcp://127.0.0.1:0: with TLS credentials it must listen on tls://",
    );
    // In one process nobody else can connect: allowed.
    expect(new Scheduler({ listen: "inproc://s", tls, logger: silent }).options.listen).toBe(
      "inproc://s",
    );
    await expect(LocalCluster.start({ protocol: "tcp", tls, logger: silent })).rejects.toThrow(
      'LocalCluster option tls applies with protocol "tls" (got protocol "tcp", which would not use it)',
    );
  });
});
