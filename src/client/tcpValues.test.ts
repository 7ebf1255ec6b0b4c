/**
 * Task values over TCP: they cross between workers, and to the client, with
 * the structured-clone algorithm, in several frames when large, and a value
 * too large to send fails its dependents instead of leaving them waiting.
 * Large arguments reach the worker through the scheduler, which passes them on
 * unread.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ForwardedBytes } from "../comm/forwardedBytes.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import type { WorkerOptions } from "../worker/workerOptions.ts";
import { Client } from "./client.ts";
import { RemoteTaskError, ResultFetchError } from "./errors.ts";
import { LocalCluster } from "./localCluster.ts";
import { CLIENT_TEST_TASKS } from "./testCluster.ts";
import { byteSum, bytes, describeBytes, inc, inspectTangled, sum, tangled } from "./testTasks.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

/**
 * A scheduler and two TCP workers running the client test tasks, validation
 * on: worker A has resource `A`, worker B resource `B`, so that a task can be
 * made to run on one and its dependent on the other.
 */
async function twoWorkersAB(
  worker: Partial<WorkerOptions> = {},
  schedulerOptions: { readonly maxMessageBytes?: number } = {},
): Promise<{ client: Client; check(): void }> {
  const scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    validate: true,
    logger: silent,
    ...schedulerOptions,
  });
  toClose.push(scheduler);
  const workers = await Promise.all(
    ["A", "B"].map((name) =>
      Worker.create({
        scheduler: scheduler.address,
        listen: "tcp://127.0.0.1:0",
        nthreads: 1,
        executor: "inline",
        taskModules: [CLIENT_TEST_TASKS],
        resources: { [name]: 1 },
        validate: true,
        logger: silent,
        ...worker,
      }),
    ),
  );
  toClose.push(...workers);
  const client = await Client.connect(scheduler.address, { logger: silent });
  toClose.push(client);
  return {
    client,
    check() {
      scheduler.state.validateState();
      for (const w of workers) w.state.validateState();
    },
  };
}

const onA = { pure: false, resources: { A: 1 } } as const;
const onB = { pure: false, resources: { B: 1 } } as const;

describe("task values over TCP", () => {
  it("cross between workers and to the client as structured clones", async () => {
    const { client, check } = await twoWorkersAB();
    const value = client.submitWith(onA, tangled);
    expect(await client.submitWith(onB, inspectTangled, value)).toEqual({
      cycle: true,
      shared: true,
      hole: true,
      protoKey: "__proto__",
    });
    const got = await value;
    expect(got.cyc.self).toBe(got.cyc);
    expect(got.pair[0]).toBe(got.pair[1]);
    expect(1 in got.sparse).toBe(false);
    expect((await client.counters()).keysTransferred).toBe(1);
    check();
  });

  it("a value larger than maxFrameBytes moves between workers in several frames", async () => {
    const { client, check } = await twoWorkersAB({ maxFrameBytes: 10_000 });
    const b = client.submitWith(onA, bytes, 100_000);
    let expected = 0;
    for (let i = 0; i < 100_000; i++) expected += i % 251;
    expect(await client.submitWith(onB, byteSum, b)).toBe(expected);
    expect((await b).length).toBe(100_000); // to the client too
    check();
  });

  it("a value fetched by the client is not kept alive by the connection it came on", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { client } = await twoWorkersAB();
    const fetchOnce = async (): Promise<WeakRef<Uint8Array>> => {
      const f = client.submitWith(onA, bytes, 1_000_000);
      const value = await f;
      f.release();
      return new WeakRef(value);
    };
    const fetched = await fetchOnce();
    // The connection to the worker stays open (pooled) and quiet.
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    expect(fetched.deref()).toBeUndefined();
  });

  it("a task whose compute-task is larger than the scheduler's maxMessageBytes fails with the reason instead of hanging", async () => {
    // The graph reaches the scheduler, but the compute-task adds where each of
    // the 100 inputs is held and its size: too large for the scheduler to send.
    const { client, check } = await twoWorkersAB({}, { maxMessageBytes: 12_000 });
    const inputs = [];
    for (let i = 0; i < 100; i += 20) {
      inputs.push(
        ...client.map(
          inc,
          Array.from({ length: 20 }, (_, j) => i + j),
        ),
      );
      await client.gather(inputs);
    }
    const total = client.submitWith({ retries: 1 }, sum, inputs);
    await expect(total).rejects.toThrow(
      /the scheduler could not send the task to tcp:\/\/.*larger than maxMessageBytes \(11\.72 kiB\)/,
    );
    // The cluster goes on.
    expect(await client.submit(inc, 1)).toBe(2);
    check();
  });

  it("a value larger than maxMessageBytes fails its dependent with the reason; the cluster goes on", async () => {
    const { client, check } = await twoWorkersAB({ maxMessageBytes: 50_000 });
    const b = client.submitWith(onA, bytes, 100_000);
    const sum = client.submitWith(onB, byteSum, b);
    const err = (await sum.catch((e: unknown) => e)) as RemoteTaskError;
    expect(err).toBeInstanceOf(RemoteTaskError);
    expect(err.message).toMatch(
      /MessageTooLargeError: cannot send a message of \d+\.\d\d [kM]iB \(\d+ bytes\): larger than maxMessageBytes \(48\.83 kiB\) \(while fetching its input bytes-/,
    );
    expect(err.blame).toBe(sum.key);
    // With retries, it is tried again (and fails again, for the same reason).
    const retried = client.submitWith({ ...onB, retries: 1 }, byteSum, b);
    await expect(retried).rejects.toThrow(/while fetching its input/);
    // Small values still move, both ways.
    const one = client.submitWith(onB, inc, 1);
    expect(await client.submitWith(onA, inc, one)).toBe(3);
    check();
  });

  it("a result too large to send fails only its own future, not those fetched with it", async () => {
    const { client, check } = await twoWorkersAB({ maxMessageBytes: 50_000 });
    const big = client.submitWith(onA, bytes, 100_000);
    const small = client.submitWith(onA, inc, 7);
    for (let i = 0; i < 500 && (big.status !== "finished" || small.status !== "finished"); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // Both held by worker A: fetched in one request.
    const [bigOutcome, smallOutcome] = await Promise.allSettled([big.result(), small.result()]);
    expect(bigOutcome.status).toBe("rejected");
    expect((bigOutcome as PromiseRejectedResult).reason).toBeInstanceOf(ResultFetchError);
    expect(String((bigOutcome as PromiseRejectedResult).reason)).toMatch(
      /cannot fetch the result of bytes-.*MessageTooLargeError/,
    );
    expect(smallOutcome).toEqual({ status: "fulfilled", value: 8 });
    // Among many results fetched together, only the one at fault fails (not so many
    // that the scheduler's compute-task batch exceeds the worker's 50,000 bytes).
    const many = Array.from({ length: 150 }, (_, i) => client.submitWith(onA, inc, i));
    await client.gather(many);
    const outcomes = await Promise.allSettled([big, ...many].map((f) => f.result()));
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(1);
    expect(outcomes[0].status).toBe("rejected");
    check();
  });
});

/** Large byte arrays of each kind sent raw: a view with an offset, a Buffer, an ArrayBuffer. */
function largeArgs(): (ArrayBufferView | ArrayBuffer)[] {
  const n = 1 << 20;
  return [
    new Float64Array(new ArrayBuffer(n + 8), 8, n / 8).map((_, i) => i / 7),
    Buffer.alloc(n + 3, 7),
    Uint8Array.from({ length: n }, (_, i) => i % 253).buffer,
    new Int16Array(n / 2).fill(-3),
  ];
}

describe("large arguments over TCP", () => {
  it("reach the worker whole and aligned; the scheduler passes them on without joining or reading them", async () => {
    for (const maxFrameBytes of [64 * 1024, undefined]) {
      const scheduler = await Scheduler.start({
        listen: "tcp://127.0.0.1:0",
        validate: true,
        logger: silent,
        maxFrameBytes,
      });
      toClose.push(scheduler);
      const worker = await Worker.create({
        scheduler: scheduler.address,
        listen: "tcp://127.0.0.1:0",
        nthreads: 1,
        executor: "inline",
        taskModules: [CLIENT_TEST_TASKS],
        validate: true,
        logger: silent,
        maxFrameBytes,
      });
      toClose.push(worker);
      const client = await Client.connect(scheduler.address, { logger: silent, maxFrameBytes });
      toClose.push(client);
      for (const arg of largeArgs()) {
        const f = client.submitWith({ pure: false }, describeBytes, arg);
        expect(await f, `${arg.constructor.name}, frames of ${maxFrameBytes}`).toEqual({
          ...describeBytes.fn(arg),
          aligned: true,
        });
        // What the scheduler holds: the bytes as they arrived, not the array.
        const held = scheduler.state.tasks.get(f.key)?.runSpec?.args[0];
        expect(held).toBeInstanceOf(ForwardedBytes);
        expect((held as ForwardedBytes).pieces.length).toBeGreaterThan(1);
        expect((held as ForwardedBytes).byteLength).toBe(arg.byteLength);
      }
      scheduler.state.validateState();
      worker.state.validateState();
    }
  });

  it("in process, nothing changes: the scheduler holds the arguments themselves", async () => {
    const cluster = await LocalCluster.start({
      workers: 1,
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      logger: silent,
    });
    toClose.push(cluster);
    const client = await cluster.client();
    for (const arg of largeArgs()) {
      const f = client.submitWith({ pure: false }, describeBytes, arg);
      expect(await f).toEqual(describeBytes.fn(arg));
      const held = cluster.scheduler.state.tasks.get(f.key)?.runSpec?.args[0];
      expect(Object.getPrototypeOf(held)).toBe(Object.getPrototypeOf(arg));
    }
  });
});
