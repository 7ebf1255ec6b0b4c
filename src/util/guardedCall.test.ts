import { describe, expect, it } from "vitest";
import { callGuarded } from "./guardedCall.ts";

describe("callGuarded", () => {
  it("hands a throw, and the rejection of a returned thenable, to failed; a result is ignored", async () => {
    const failed: unknown[] = [];
    const args: number[] = [];
    callGuarded(
      () => args.push(1),
      (e) => failed.push(e),
    );
    callGuarded(
      () => {
        throw new Error("sync");
      },
      (e) => failed.push(e),
    );
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: the test is of a thenable that is not a Promise
      then: (_ok: unknown, no: (e: unknown) => void) => no(new Error("thenable")),
    };
    callGuarded(
      () => thenable,
      (e) => failed.push(e),
    );
    callGuarded(
      () => Promise.reject(new Error("async")),
      (e) => failed.push(e),
    );
    await new Promise((r) => setImmediate(r));
    expect(args).toEqual([1]);
    expect(failed.map((e) => (e as Error).message)).toEqual(["sync", "thenable", "async"]);
  });

  it("a failed that throws on the value (a logger reading a Proxy) is given a plain error of what can be read", async () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("proxy trap");
        },
      },
    );
    const told: string[] = [];
    const failed = (e: unknown) => {
      told.push((e as Error).message); // reading the Proxy's message throws
    };
    callGuarded(() => {
      throw hostile;
    }, failed);
    callGuarded(() => Promise.reject(hostile), failed);
    // A `then` getter that throws: the callback's failure, not the caller's.
    callGuarded(
      () =>
        // biome-ignore lint/suspicious/noThenProperty: the test is of a then that cannot be read
        Object.defineProperty({}, "then", {
          get() {
            throw new Error("then getter");
          },
        }),
      failed,
    );
    await new Promise((r) => setImmediate(r));
    expect(told).toEqual([
      "an error whose fields cannot be read (Error: proxy trap)",
      "then getter",
      "an error whose fields cannot be read (Error: proxy trap)",
    ]);
  });
});
