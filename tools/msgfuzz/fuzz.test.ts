/**
 * A bounded run of the message fuzzing of fuzz.ts, in process over TCP: a
 * validating scheduler and worker (a LocalCluster), and hostile messages from a
 * client, a fake worker and a peer of the worker's server. After each run the
 * scheduler and the worker must still be running, without a fault, and a fresh
 * client must compute right.
 */

import fc from "fast-check";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Client } from "../../src/client/client.ts";
import { LocalCluster } from "../../src/client/localCluster.ts";
import { CLIENT_TEST_TASKS } from "../../src/client/testCluster.ts";
import type { Comm, Listener } from "../../src/comm/comm.ts";
import { connect, listen } from "../../src/comm/connect.ts";
import { wireVersion } from "../../src/protocol/version.ts";
import {
  CLIENT_TEMPLATES,
  mutate,
  oddValue,
  PEER_TEMPLATES,
  Rng,
  WORKER_TEMPLATES,
  type World,
} from "./messages.ts";
import { anythingPool } from "./values.ts";

let cluster: LocalCluster;
let owner: Client;
let fakeListener: Listener;
let world: World;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    workers: 1,
    threadsPerWorker: 2,
    executor: "inline",
    protocol: "tcp",
    taskModules: [CLIENT_TEST_TASKS],
    validate: true,
    logger: pino({ level: "silent" }),
  });
  owner = await cluster.client();
  const real = owner.compute({ "real-0": ["inc", 1], "real-1": ["inc", "real-0"] });
  await real["real-1"].result();
  // Something at the fake worker's address, for the scheduler's reachability check.
  fakeListener = await listen("tcp://127.0.0.1:0", (comm) => void comm.closed);
  world = {
    keys: ["real-0", "real-1"],
    worker: cluster.workers[0].address,
    fakeWorker: fakeListener.address,
    client: owner.id,
    pool: anythingPool(300, 7),
  };
}, 30_000);

afterAll(async () => {
  await owner?.close();
  await cluster?.close();
  await fakeListener?.close();
});

const CLIENT_OPS = Object.keys(CLIENT_TEMPLATES);
const WORKER_OPS = Object.keys(WORKER_TEMPLATES);
const PEER_OPS = Object.keys(PEER_TEMPLATES);

/** Send `msgs`, skipping one the client side cannot encode; false once the comm closed. */
async function sendEach(comm: Comm, msgs: readonly unknown[]): Promise<void> {
  for (const m of msgs) {
    if (comm.isClosed) return;
    await comm.send(m).catch(() => {});
  }
}

async function registered(first: Record<string, unknown>): Promise<Comm> {
  const comm = await connect(cluster.address, { timeoutMs: 5_000 });
  await comm.send({ ...first, ...wireVersion() });
  const reply = (await comm.recv()) as { status?: string };
  expect(reply.status).toBe("OK");
  void (async () => {
    for (;;) await comm.recv();
  })().catch(() => {});
  return comm;
}

let runs = 0;

it("the scheduler and its worker survive hostile messages of clients, workers and peers", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 30 }), async (seed) => {
      const r = new Rng(seed);
      const n = ++runs;
      const clientId = `fuzz-${n}`;
      const client = await registered({ op: "register-client", clientId });
      const worker = await registered({
        op: "register-worker",
        address: world.fakeWorker,
        nthreads: 1,
        resources: {},
        stimulusId: `reg-${n}`,
      });
      const peer = await connect(world.worker, { timeoutMs: 5_000 });
      void (async () => {
        for (;;) await peer.recv();
      })().catch(() => {});
      for (let i = 0; i < 10; i++) {
        const op = r.pick(CLIENT_OPS);
        const m = mutate(r, world, CLIENT_TEMPLATES[op](r, world));
        if (r.chance(0.9)) m.clientId = clientId;
        if (r.chance(0.9)) m.requestId = r.int(1e6);
        // Not a retirement of the real worker, which a client may ask for.
        if (m.op === "retire-workers") m.workers = ["nope"];
        const w = mutate(r, world, WORKER_TEMPLATES[r.pick(WORKER_OPS)](r, world));
        const pop = r.pick(PEER_OPS);
        const p = { op: pop, id: i, args: mutate(r, world, PEER_TEMPLATES[pop](r, world)) };
        if (r.chance(0.1)) p.args = oddValue(r, world) as Record<string, unknown>;
        await sendEach(client, [[m]]);
        await sendEach(worker, [[w]]);
        await sendEach(peer, [p]);
      }
      await new Promise((res) => setTimeout(res, 20));
      client.abort();
      worker.abort();
      peer.abort();
      expect(cluster.scheduler.fault).toBeNull();
      expect(cluster.scheduler.status).toBe("running");
      expect(cluster.workers[0].status).toBe("running");
      const check = await cluster.client();
      try {
        const f = check.compute({ [`check-${n}`]: ["inc", n] });
        expect(await f[`check-${n}`].result()).toBe(n + 1);
      } finally {
        await check.close();
      }
    }),
    { numRuns: 150, seed: 20261206, endOnFailure: true },
  );
}, 60_000);
