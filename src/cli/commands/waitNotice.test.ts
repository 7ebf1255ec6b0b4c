import { afterEach, describe, expect, it } from "vitest";
import type { LocalCluster } from "../../client/localCluster.ts";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { runWeft } from "../testContext.ts";
import { WAIT_NOTICE_MS } from "./waitNotice.ts";

afterEach(closeTestClusters);

type Handler = (...a: unknown[]) => unknown;

/** Make the first worker's `method` answer only after the notice is due; returns the undo. */
function slowWorker(cluster: LocalCluster, method: "getLogs" | "getStory"): () => void {
  const introspection = (
    cluster.workers[0] as unknown as { introspection: Record<string, Handler> }
  ).introspection;
  const real = introspection[method];
  introspection[method] = async (...a: unknown[]) => {
    await new Promise((r) => setTimeout(r, WAIT_NOTICE_MS + 500));
    return real(...a);
  };
  return () => {
    introspection[method] = real;
  };
}

const waiting = (command: string, what: string) =>
  `weft ${command}: still waiting for ${what} (one that does not answer is waited for until the scheduler removes it)…\n`;

describe("a command waiting long for its workers says so on stderr", () => {
  it("weft logs", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const undo = slowWorker(cluster, "getLogs");
    const r = await runWeft(["logs", cluster.address]);
    expect(r).toMatchObject({ code: 0, err: waiting("logs", "the workers' logs") });
    undo();
    expect(await runWeft(["logs", cluster.address])).toMatchObject({ code: 0, err: "" });
  }, 15_000);

  it("weft story of a running cluster", async () => {
    const { cluster } = await testCluster({ workers: 1, protocol: "tcp" });
    const undo = slowWorker(cluster, "getStory");
    // No record mentions x: said after the notice, as without it.
    const story = () => runWeft(["story", "x", cluster.address]);
    const r = await story();
    expect(r.err.startsWith(waiting("story", "the workers' stories"))).toBe(true);
    undo();
    const after = await story();
    expect(r.err).toBe(waiting("story", "the workers' stories") + after.err);
    expect(after.err).not.toMatch(/still waiting/);
  }, 15_000);
});
