import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, eventually, testCluster } from "../../client/testCluster.ts";
import { runWeft, testContext } from "../testContext.ts";
import { runEvents } from "./events.ts";

afterEach(closeTestClusters);

describe("weft events", () => {
  it("prints the events kept, by time; --topic keeps some; --json", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    await client.logEvent("jobs", { job: 1 });
    await client.logEvent("other", "x");
    const r = await runWeft(["events", cluster.address]);
    expect(r).toMatchObject({ code: 0, err: "" });
    const lines = r.out.trimEnd().split("\n");
    expect(lines.some((l) => / {2}all {2}\{"action":"add-worker","worker":"tcp:/.test(l))).toBe(
      true,
    );
    expect(lines.some((l) => l.endsWith('  jobs  {"job":1}'))).toBe(true);
    const times = lines.map((l) => Date.parse(l.split("  ")[0]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const jobs = await runWeft(["events", cluster.address, "--topic", "jobs", "--json"]);
    expect(
      jobs.out
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([{ topic: "jobs", time: expect.any(Number), msg: { job: 1 } }]);
    const none = await runWeft(["events", cluster.address, "--topic", "nothing"]);
    expect(none).toMatchObject({ code: 1, err: "weft events: no events under nothing\n" });
    const noTopic = await runWeft(["events", cluster.address, "--follow"]);
    expect(noTopic.code).toBe(2);
  });

  it("--follow prints the events kept, then those logged, until told to stop", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    await client.logEvent("jobs", 1);
    const ctx = testContext();
    let stop!: () => void;
    const until = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const running = runEvents(cluster.address, { topic: ["jobs"], follow: true }, ctx, until);
    await eventually(() => ctx.stdout.text.includes("  jobs  1\n"), 5000, "the backlog");
    await client.logEvent("jobs", 2);
    await eventually(() => ctx.stdout.text.includes("  jobs  2\n"), 5000, "the new event");
    stop();
    await running;
    expect(ctx.exitCode).toBe(0);
    expect(ctx.stdout.text.trimEnd().split("\n")).toHaveLength(2);
  });
});
