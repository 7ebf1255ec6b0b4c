import { type AddressInfo, createServer, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { Actor, ActorError } from "./actor.ts";
import { ClientClosedError } from "./errors.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { bump, type Counter, counter, identity } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("actors: objects kept on a worker, called through handles", () => {
  for (const executor of ["inline", "threads"] as const) {
    for (const protocol of ["inproc", "tcp"] as const) {
      it(`a client and tasks call one object on its worker (${executor}, ${protocol})`, async () => {
        const { cluster, client } = await testCluster({ executor, protocol });
        const future = client.submitWith({ actor: true }, counter, 10);
        const handle: Actor<Counter> = await future.result();
        expect(handle).toBeInstanceOf(Actor);
        expect(handle.key).toBe(future.key);
        const holder = cluster.workers.find((w) => w.address === handle.address);
        expect(holder?.state.actors.has(future.key)).toBe(true);

        expect(await handle.call("increment", 5)).toBe(15);
        // Synchronous methods run one at a time: no increment is lost.
        const counts = await Promise.all(
          Array.from({ length: 20 }, () => handle.call("increment", 1)),
        );
        expect(new Set(counts).size).toBe(20);
        expect(await handle.get("n")).toBe(35);

        // A task given the future, or the handle, calls the same object.
        expect(await client.submit(bump, future, 3)).toBe(38);
        expect(await client.submitWith({ pure: false }, bump, handle, 2)).toBe(40);
        expect(await handle.call("slowIncrement", 2, 5)).toBe(42);
        // The object never left its worker: the only copy is the actor's.
        expect(holder?.state.data.has(future.key)).toBe(false);
      });
    }
  }

  it("a method's print is a task's message, under the actor's key", async () => {
    const { client } = await testCluster({ workers: 1 });
    await client.subscribeTopic("print", () => {}); // not on the test's stdout
    const future = client.submitWith({ actor: true }, counter, 3);
    const handle: Actor<Counter> = await future.result();
    expect(await handle.call("say", "from the actor")).toBe(3);
    // An actor's call does not wait for its messages: they come soon after.
    let events: (readonly [number, unknown])[] = [];
    for (let i = 0; i < 250 && events.length === 0; i++) {
      events = await client.getEvents("print");
      if (events.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(events.map(([, msg]) => msg)).toEqual([{ text: "from the actor", key: future.key }]);
  });

  it("a method gets a handle to another actor, and the worker's client", async () => {
    const { cluster, client } = await testCluster();
    const a = await client.submitWith({ actor: true }, counter, 1).result();
    const b = await client.submitWith({ actor: true }, counter, 100).result();
    expect(await a.call("addFrom", b)).toBe(101);
    expect(await a.call("clientScheduler")).toBe(cluster.address);
  });

  it("reports a method that threw, a missing method and a misused field as ActorErrors", async () => {
    const { client } = await testCluster();
    const handle = await client.submitWith({ actor: true }, counter).result();
    const thrown = await handle.call("fail", "no good").catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ActorError);
    expect((thrown as ActorError).exceptionText).toBe("ValueError: no good");
    // The method's frames only: not the actor server's, the rpc server's or Node's
    // below them, as a task's traceback.
    const frames = (thrown as ActorError).tracebackText.split("\n");
    expect(frames[0]).toMatch(/^ {4}at Counter\.fail \(.*testTasks\.ts:\d+:\d+\)$/);
    expect(frames.every((f) => f.includes("testTasks.ts"))).toBe(true);

    const untyped = handle as unknown as Actor<Record<string, () => unknown>>;
    await expect(untyped.call("nothing")).rejects.toThrow(
      'AttributeError: Counter has no method "nothing"',
    );
    await expect(untyped.call("n")).rejects.toThrow("it is a number field: read it with get");
    // Said "it is a object field" before.
    await expect(untyped.call("notes")).rejects.toThrow(
      'Counter has no method "notes" (it is an object field: read it with get)',
    );
    await expect(
      (handle as unknown as Actor<Record<string, number>>).get("increment"),
    ).rejects.toThrow('"increment" of Counter is a method: call it with call');
    // No such field: an AttributeError, as Dask's getattr raises, not undefined.
    await expect(
      (handle as unknown as Actor<Record<string, number>>).get("missing"),
    ).rejects.toThrow('AttributeError: Counter has no attribute "missing"');
    // A name that is not one is a TypeError of the handle, sent nowhere.
    await expect(untyped.call(5 as never)).rejects.toThrow(
      new TypeError("Actor.call: method must be a method's name, got 5"),
    );
    await expect(untyped.get(null as never)).rejects.toThrow(
      new TypeError("Actor.get: attribute must be a field's name, got null"),
    );
    // The actor is unharmed.
    expect(await handle.call("increment")).toBe(1);
  });

  it("a handle whose actor was released says so", async () => {
    const { cluster, client } = await testCluster();
    const future = client.submitWith({ actor: true }, counter);
    const handle = await future.result();
    future.release();
    // The handle kept it alive too.
    await new Promise((r) => setTimeout(r, 200));
    const holder = cluster.workers.find((w) => w.address === handle.address);
    expect(holder?.state.actors.size).toBe(1);
    handle.release();
    await expect.poll(() => holder?.state.actors.size, { timeout: 5_000 }).toBe(0);
    await expect(handle.call("increment")).rejects.toThrow(
      `ActorLostError: worker ${handle.address} holds no actor "${future.key}"`,
    );
  });

  it("a handle keeps its actor alive once its future is collected, until the handle is", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { cluster, client } = await testCluster();
    const collect = async () => {
      for (let i = 0; i < 4; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // Only the handle is kept: the future is garbage once the result is in.
    let handle: Actor<Counter> | null = await client.submitWith({ actor: true }, counter).result();
    await collect();
    expect(await handle.call("increment")).toBe(1);
    const holder = cluster.workers.find((w) => w.address === handle?.address);
    handle = null;
    await collect();
    await expect.poll(() => holder?.state.actors.size, { timeout: 5_000 }).toBe(0);
  });

  it("a handle whose worker is gone cannot reach it", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp" });
    const handle = await client.submitWith({ actor: true }, counter).result();
    const holder = cluster.workers.find((w) => w.address === handle.address);
    await holder?.close();
    const err = await handle.call("increment").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ActorError);
    expect((err as Error).message).toContain(`cannot reach the actor's worker ${handle.address}`);
  });

  it("a handle whose worker the scheduler does not have fails at once, not connecting to it", async () => {
    const { client } = await testCluster({ protocol: "tcp" });
    // A frozen process: its kernel takes connections, and nothing ever answers.
    const accepted: Socket[] = [];
    const frozen = createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => frozen.listen(0, "127.0.0.1", resolve));
    const address = `tcp://127.0.0.1:${(frozen.address() as AddressInfo).port}`;
    try {
      const handle = new Actor<Counter>({ __weftActor: "gone-1", address }, () =>
        Promise.resolve(client),
      );
      const err = await handle.call("increment").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ActorError);
      expect((err as Error).message).toBe(
        `actor gone-1: cannot reach the actor's worker ${address}: ${address} is not in the cluster (the scheduler removed it, or never had it)`,
      );
      expect(accepted).toHaveLength(0);
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => frozen.close(resolve));
    }
  });

  it("spreads actors over the workers, and a task elsewhere fetches a handle", async () => {
    const { cluster, client } = await testCluster();
    const [a, b] = await client.gather([
      client.submitWith({ actor: true, pure: false }, counter, 0),
      client.submitWith({ actor: true, pure: false }, counter, 0),
    ]);
    expect(a.address).not.toBe(b.address);
    // Run on the worker not holding `a`: the input arrives from the holder as a handle.
    const elsewhere = cluster.workers.find((w) => w.address !== a.address)?.address as string;
    const far = client.submitWith({ workers: elsewhere, pure: false }, bump, a, 4);
    expect(await far).toBe(4);
    expect(await a.get("n")).toBe(4);
  });

  it("fails the future of an actor whose worker was lost, and its dependents", async () => {
    const { cluster, client } = await testCluster();
    const future = client.submitWith({ actor: true }, counter, 0);
    const handle = await future.result();
    await handle.call("increment");
    const holder = cluster.workers.find((w) => w.address === handle.address);
    await holder?.close();
    await expect(future.result()).rejects.toThrow("Worker holding Actor was lost");
    await expect(client.submit(bump, future, 1)).rejects.toThrow("Worker holding Actor was lost");
    // Submitted again (as it was: an actor's key is fresh each time), it is a new object.
    const again = await client.submitWith({ actor: true }, counter, 0).result();
    expect(again.address).not.toBe(handle.address);
    expect(await again.call("increment")).toBe(1);
  });

  it("a handle of a closed client says so", async () => {
    const { cluster } = await testCluster();
    const other = await cluster.client();
    const handle = await other.submitWith({ actor: true }, counter).result();
    await other.close();
    await expect(handle.call("increment")).rejects.toBeInstanceOf(ClientClosedError);
  });

  it("a call in flight when its client closes says so, not that the worker is out of reach", async () => {
    const { cluster } = await testCluster();
    const other = await cluster.client();
    const handle = await other.submitWith({ actor: true }, counter).result();
    const inFlight = handle.call("slowIncrement", 1, 500).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await other.close();
    expect(await inFlight).toBeInstanceOf(ClientClosedError);
  });

  it("new Actor refuses what is not an ActorRef, or a host that is not a function", async () => {
    const { client } = await testCluster();
    const ref = { __weftActor: "counter-1", address: "inproc://w/1" };
    expect(
      () => new Actor({ __weftActor: "counter-1" } as never, () => Promise.resolve(client)),
    ).toThrow(/^new Actor: ref must be an ActorRef/);
    expect(() => new Actor(ref, client as never)).toThrow(/^new Actor: host must be a function/);
    expect(new Actor(ref, () => Promise.resolve(client)).key).toBe("counter-1");
  });

  it("each submission makes an object of its own, whoever submits it, unless pure: true", async () => {
    const { cluster, client } = await testCluster();
    const a = client.submitWith({ actor: true }, counter, 0);
    const b = client.submitWith({ actor: true }, counter, 0);
    const other = await cluster.client();
    const c = other.submitWith({ actor: true }, counter, 0);
    expect(new Set([a.key, b.key, c.key]).size).toBe(3);
    expect(a.key).toMatch(/^counter-/);
    const [ha, hb, hc] = await Promise.all([a.result(), b.result(), c.result()]);
    await ha.call("increment", 5);
    expect(await hb.get("n")).toBe(0);
    expect(await hc.get("n")).toBe(0);
    // map too; pure: true asks for the key of the function and arguments.
    const mapped = client.map("counter", [0, 0], { actor: true });
    expect(mapped[0].key).not.toBe(mapped[1].key);
    const shared = client.submitWith({ actor: true, pure: true }, counter, 0);
    expect(client.submitWith({ actor: true, pure: true }, counter, 0).key).toBe(shared.key);
  });

  it("refuses a non-boolean actor option", () => {
    return testCluster().then(({ client }) => {
      expect(() => client.submitWith({ actor: "yes" as unknown as boolean }, identity, 1)).toThrow(
        "actor must be a boolean",
      );
    });
  });
});
