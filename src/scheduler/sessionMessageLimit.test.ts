/**
 * A reply the scheduler cannot send a client (over its own `maxMessageBytes`,
 * or not encodable) becomes an error reply to the same request, naming the op,
 * the sizes and whose limit: the call rejects instead of waiting forever for
 * the reply the scheduler dropped.
 */

import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../client/testCluster.ts";
import { bytes, inc, uncloneable } from "../client/testTasks.ts";

afterEach(closeTestClusters);

const MIB = 2 ** 20;

/** The error `p` rejects with (a failure if it resolves). */
async function rejection(p: PromiseLike<unknown>): Promise<Error> {
  const outcome = await p.then(
    (v) => ({ resolved: v }),
    (e: unknown) => ({ error: e }),
  );
  if (!("error" in outcome))
    throw new Error(`expected a rejection, got ${String(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(Error);
  return outcome.error as Error;
}

describe("an answer the scheduler cannot send at all", () => {
  it("over the scheduler's own limit, or not encodable: the request rejects saying so, instead of waiting", async () => {
    const { client } = await testCluster({
      protocol: "tcp",
      scheduler: { maxMessageBytes: MIB },
    });
    const big = await rejection(client.runOnScheduler(bytes, 2 * MIB));
    expect(big.message).toMatch(
      /^run-on-scheduler: the scheduler cannot send its answer to client \S+: MessageTooLargeError: cannot send a message of 2\.00 MiB \(\d+ bytes\): larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    const odd = await rejection(client.runOnScheduler(uncloneable));
    expect(odd.message).toMatch(
      /^run-on-scheduler: the scheduler cannot send its answer to client \S+: SerializationError: /,
    );
    expect(await client.runOnScheduler(inc, 1)).toBe(2);
  }, 60_000);
});
