/**
 * Scattered values arrive the same in process as over TCP: a copy owning its
 * memory (shared memory included), of the same kinds, and what is not data is
 * refused on both, naming the value.
 */

import { afterEach, describe, expect, it } from "vitest";
import type { Future } from "./future.ts";
import type { LocalCluster } from "./localCluster.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { VALUE_TEST_TASKS, Vec } from "./valueTestTasks.ts";

afterEach(closeTestClusters);

/** The value a worker of `cluster` holds for `future`. */
function stored(cluster: LocalCluster, future: Future): unknown {
  for (const w of cluster.workers)
    if (w.state.data.has(future.key)) return w.state.data.get(future.key);
  throw new Error(`no worker holds ${future.key}`);
}

describe("scattered values", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    const start = () =>
      testCluster({ protocol, workers: 1, taskModules: [CLIENT_TEST_TASKS, VALUE_TEST_TASKS] });

    it(`a SharedArrayBuffer is refused, saying why (${protocol})`, async () => {
      const { client } = await start();
      const err = await client.scatter([1, new SharedArrayBuffer(8)]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(
        /^scatter: value 1 \(SharedArrayBuffer\) cannot be sent to a worker: value 1 is a SharedArrayBuffer, whose memory cannot be shared with another thread or process: send a copy/,
      );
    });

    it(`a view of shared memory is copied: later writes do not reach the stored value (${protocol})`, async () => {
      const { cluster, client } = await start();
      const shared = new Uint8Array(new SharedArrayBuffer(4));
      const [f] = await client.scatter([shared]);
      shared[0] = 9;
      const held = stored(cluster, f) as Uint8Array;
      expect(held).toBeInstanceOf(Uint8Array);
      expect(held[0]).toBe(0);
      expect(held.buffer).toBeInstanceOf(ArrayBuffer);
    });

    it(`buffers, typed arrays and nested data arrive as they would over TCP (${protocol})`, async () => {
      const { cluster, client } = await start();
      const values = [
        Buffer.from("ab"),
        { b: Buffer.from("cd"), f: new Float32Array([1.5]) },
        new ArrayBuffer(3),
      ] as const;
      const fs = await client.scatter([...values]);
      const top = stored(cluster, fs[0]);
      expect(Buffer.isBuffer(top)).toBe(true);
      expect(top).not.toBe(values[0]);
      const nested = stored(cluster, fs[1]) as { b: unknown; f: unknown };
      expect(Buffer.isBuffer(nested.b)).toBe(true);
      expect(nested.f).toEqual(new Float32Array([1.5]));
      expect(stored(cluster, fs[2])).toBeInstanceOf(ArrayBuffer);
      expect(stored(cluster, fs[2])).not.toBe(values[2]);
    });

    it(`a hole in the array scattered is scattered as undefined, as the clone reads it (${protocol})`, async () => {
      const { client } = await start();
      // It failed with "Cannot read properties of undefined (reading 'length')".
      const holey: unknown[] = [];
      holey[1] = 1;
      const fs = await client.scatter(holey);
      expect(fs).toHaveLength(2);
      expect(fs[0].key).toMatch(/^undefined-/);
      expect(await client.gather(fs)).toEqual([undefined, 1]);
    });

    it(`what is not data is refused, naming the value and where in it (${protocol})`, async () => {
      const { client } = await start();
      await expect(client.scatter([1, { rows: [new Vec(1, 2)] }])).rejects.toThrow(
        /^scatter: value 1 \(Object\) cannot be sent to a worker: value 1\.rows\[0\] is a Vec \(an instance of a class: .*\); scattered values must be data/,
      );
      await expect(client.scatter({ a: 1, f: () => 1 })).rejects.toThrow(
        /^scatter: value 1 \(function\) cannot be sent to a worker: value 1 is a function; scattered values must be data/,
      );
    });

    it(`an error whose cause refers back to it is refused, not sent (${protocol})`, async () => {
      // V8 writes it but cannot read it back: over TCP the worker closed each
      // connection it came on, and the scatter, taking the workers for
      // unreachable, waited for others until its timeout.
      const { client } = await start();
      const self = new Error("self");
      self.cause = { back: self };
      await expect(client.scatter([1, self])).rejects.toThrow(
        /^scatter: value 1 \(Error\) cannot be sent to a worker: value 1\.cause\.back is an error its own cause refers back to, which the structured clone writes but cannot read back; scattered values must be data/,
      );
      expect(await client.gather(await client.scatter([2]))).toEqual([2]);
    });
  }
});
