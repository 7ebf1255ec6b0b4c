import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, eventually, testCluster } from "../../client/testCluster.ts";
import { runWeft, testContext } from "../testContext.ts";
import { runEvents } from "./eventsAction.ts";

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

  it("--follow prints the events kept, then those logged, until SIGINT (exit 130, as weft run's)", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    await client.logEvent("jobs", 1);
    const ctx = testContext();
    let stop!: (signal: string) => void;
    let over = false;
    const running = runEvents(cluster.address, { topic: ["jobs"], follow: true }, ctx, (o) => {
      void o.then(() => {
        over = true;
      });
      return new Promise<string | null>((resolve) => {
        stop = resolve;
      });
    });
    await eventually(() => ctx.stdout.text.includes("  jobs  1\n"), 5000, "the backlog");
    await client.logEvent("jobs", 2);
    await eventually(() => ctx.stdout.text.includes("  jobs  2\n"), 5000, "the new event");
    stop("SIGINT");
    await running;
    expect(ctx.exitCode).toBe(130);
    expect(ctx.stderr.text).toBe("");
    expect(ctx.stdout.text.trimEnd().split("\n")).toHaveLength(2);
    // The signal handlers are told the follow is over (untilSignal removes them).
    await eventually(() => over, 1000, "the follow over");
  });

  it("--follow of several topics loses no event logged while their backlogs are read", async () => {
    const { cluster, client } = await testCluster({ workers: 0, protocol: "tcp" });
    let n = 0;
    let logging = true;
    // Events on both topics all along, while the follow reads one backlog, then the other.
    const loops = Promise.all(
      [0, 1, 2, 3].map(async () => {
        while (logging) {
          const i = n++;
          await client.logEvent(i % 2 === 0 ? "a" : "b", i);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const ctx = testContext();
    await runEvents(
      cluster.address,
      { topic: ["a", "b"], follow: true, json: true },
      ctx,
      async () => {
        await new Promise((r) => setTimeout(r, 800));
        return "SIGINT";
      },
    );
    logging = false;
    await loops;
    const printed = ctx.stdout.text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { time: number; msg: number });
    const seen = new Set(printed.map((p) => p.msg));
    const lastTime = Math.max(...printed.map((p) => p.time));
    const logged = [...(await client.getEvents("a")), ...(await client.getEvents("b"))];
    const missed = logged.filter(([time, msg]) => time <= lastTime && !seen.has(msg as number));
    expect(missed).toEqual([]);
    expect(printed.length).toBeGreaterThan(10);
  });

  it("--follow ended by SIGTERM exits 143; a lost scheduler exits 1", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    await client.logEvent("jobs", 1);
    const term = testContext();
    await runEvents(cluster.address, { topic: ["jobs"], follow: true }, term, () =>
      Promise.resolve("SIGTERM"),
    );
    expect(term.exitCode).toBe(143);
    const lost = testContext();
    const running = runEvents(
      cluster.address,
      { topic: ["jobs"], follow: true },
      lost,
      () => new Promise<string | null>(() => {}),
    );
    await eventually(() => lost.stdout.text.includes("  jobs  1\n"), 5000, "the backlog");
    await cluster.close();
    await running;
    expect(lost.exitCode).toBe(1);
    expect(lost.stderr.text).toMatch(/^weft events: /);
  });
});
