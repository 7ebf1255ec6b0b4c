import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { forEachMessage } from "./forEachMessage.ts";
import { type CommPair, commPair } from "./testPair.ts";

let pair: CommPair | null = null;
afterEach(async () => {
  await pair?.client.close();
  await pair?.listener.close();
  pair = null;
});

function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("forEachMessage", () => {
  it("hands over every message in order and resolves when the comm closes", async () => {
    pair = await commPair("inproc://");
    const got: unknown[] = [];
    const done = forEachMessage(pair.server, (m) => got.push(m));
    for (let i = 0; i < 5; i++) await pair.client.send({ i });
    await pair.client.close();
    await done;
    expect(got).toEqual([0, 1, 2, 3, 4].map((i) => ({ i })));
  });

  it("rejects with the comm's error when it breaks, and with the handler's", async () => {
    pair = await commPair("inproc://");
    const broken = forEachMessage(pair.server, () => {});
    pair.server.abort();
    await expect(broken).rejects.toBeInstanceOf(Error);

    pair = await commPair("inproc://");
    const failing = forEachMessage(pair.server, () => {
      throw new RangeError("bad message");
    });
    await pair.client.send("x");
    await expect(failing).rejects.toThrow(/bad message/);
  });

  it("waits for a promise the handler returns; its rejection ends the loop and rejects", async () => {
    pair = await commPair("inproc://");
    const order: string[] = [];
    const done = forEachMessage(pair.server, async (m) => {
      order.push(`start ${m}`);
      await tick();
      order.push(`end ${m}`);
      if (m === "bad") throw new RangeError("async handler failed");
    });
    await pair.client.send("a");
    await pair.client.send("bad");
    await pair.client.send("never");
    // Before, the rejection went unhandled (the process's unhandledRejection) and the loop went on.
    await expect(done).rejects.toThrow(/async handler failed/);
    expect(order).toEqual(["start a", "end a", "start bad", "end bad"]);
  }, 5_000);

  it("keeps no reference to a handled message while it waits for the next", async () => {
    const gc = exposeGc();
    pair = await commPair("inproc://");
    let handled: WeakRef<object> | null = null;
    const done = forEachMessage(pair.server, (m) => {
      handled = new WeakRef(m as object);
    });
    await pair.client.send({ big: new Array(100_000).fill(1) });
    for (let i = 0; i < 3 && handled === null; i++) await tick();
    expect(handled).not.toBeNull();
    for (let i = 0; i < 3; i++) {
      gc();
      await tick();
    }
    expect((handled as WeakRef<object> | null)?.deref()).toBeUndefined();
    await pair.client.close();
    await done;
  });

  it("a closed comm ends the loop without an error, as for await does", async () => {
    pair = await commPair("inproc://");
    await pair.client.close();
    await expect(forEachMessage(pair.server, () => {})).resolves.toBeUndefined();
  });
});
