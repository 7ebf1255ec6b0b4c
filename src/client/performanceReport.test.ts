import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SchedulerCounters } from "../protocol/messagesSession.ts";
import {
  type PerformanceReportData,
  performanceReport,
  type ReportSource,
  renderPerformanceReport,
} from "./performanceReport.ts";
import type { ProfileOptions } from "./profile.ts";
import { spinFor } from "./profileTestTasks.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";

const PROFILE_TASKS = new URL("./profileTestTasks.ts", import.meta.url).href;

import { add, boom, inc } from "./testTasks.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  await closeTestClusters();
});

async function reportPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "weft-report-"));
  dirs.push(dir);
  return join(dir, "report.html");
}

const COUNTERS: SchedulerCounters = {
  tasksFinished: 0,
  tasksErred: 0,
  tasksDone: 0,
  keysTransferred: 0,
  stealsRequested: 0,
  stealsConfirmed: 0,
  replicasDropped: 0,
  rejectedMessages: 0,
  tasks: 0,
  workers: 0,
  clients: 0,
};

/** A second in which no task ran, on no worker: each test adds what it looks at. */
const NOTHING_RAN: PerformanceReportData = {
  start: 0,
  stop: 1,
  scheduler: "tcp://s:1",
  workers: [],
  runs: [],
  before: COUNTERS,
  after: COUNTERS,
  failed: false,
};

describe("Client.performanceReport", () => {
  it("writes the task stream, time by prefix and worker, and the counts of what ran meanwhile", async () => {
    const { cluster, client } = await testCluster();
    // Before the report: not in it.
    await client.submit(inc, 100);
    const path = await reportPath();
    const answer = await client.performanceReport(path, async () => {
      const xs = Array.from({ length: 20 }, (_, i) => client.submit(inc, i));
      const total = client.submit(add, xs[0], xs[19]);
      await client.gather(xs);
      await expect(client.submit(boom, "in the report")).rejects.toThrow("in the report");
      return total.result();
    });
    expect(answer).toBe(1 + 20);
    const html = await readFile(path, "utf8");
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).not.toContain("<script");
    expect(html).toMatch(
      /<p>21 task runs finished, 1 erred, \d+ keys? transferred between workers;/,
    );
    expect(html).toContain("scheduler inproc://scheduler/");
    expect(html).toContain(", 2 workers, 2 threads at the end.");
    expect(html).toMatch(
      /<svg class="stream"[^>]*aria-label="task stream of the [\d.]+ s of the report">/,
    );
    // inc: 20 runs (not the one before), none erred; boom: 1 run, erred.
    expect(html).toMatch(/<\/span>inc<\/td><td>20<\/td><td>0<\/td>/);
    expect(html).toMatch(/<\/span>boom<\/td><td>1<\/td><td>1<\/td>/);
    expect(html).toMatch(/<\/span>add<\/td><td>1<\/td><td>0<\/td>/);
    for (const w of cluster.workers) {
      expect(html).toMatch(new RegExp(`<td>${w.address}</td><td>1</td><td>\\d+</td>`));
    }
  });

  it("with profile: true, says where the workers' CPU went and links the profile, also when the code throws", async () => {
    const { client } = await testCluster({
      executor: "threads",
      workers: 1,
      taskModules: [CLIENT_TEST_TASKS, PROFILE_TASKS],
    });
    const path = await reportPath();
    const answer = await client.performanceReport(
      path,
      () => client.submitWith({ pure: false }, spinFor, 500),
      { profile: { intervalUs: 500 } },
    );
    expect(typeof answer).toBe("number");
    const html = await readFile(path, "utf8");
    expect(html).toContain("<h2>CPU profile of the workers' threads</h2>");
    expect(html).toMatch(/<td>profiledSpin<\/td><td>file:[^<]*profileTestTasks\.ts:\d+<\/td>/);
    const link = /href="data:application\/json;base64,([^"]+)"/.exec(html);
    const linked = JSON.parse(Buffer.from(link?.[1] ?? "", "base64").toString()) as {
      nodes: unknown[];
    };
    expect(linked.nodes.length).toBeGreaterThan(2);
    expect(html).not.toContain("<script");

    await expect(
      client.performanceReport(
        path,
        async () => {
          throw new Error("broke while profiled");
        },
        { profile: true },
      ),
    ).rejects.toThrow("broke while profiled");
    const after = await readFile(path, "utf8");
    expect(after).toContain("(the code reported on threw)");
    expect(after).toContain("<h2>CPU profile of the workers' threads</h2>");
    await expect(
      client.performanceReport(path, () => 1, { profile: "yes" as never }),
    ).rejects.toThrow(
      'performanceReport: profile must be a boolean or {intervalUs, maxMs}, got "yes"',
    );
    await expect(
      client.performanceReport(path, () => 1, { profile: { intervalUs: 1 } }),
    ).rejects.toThrow(/performanceReport: profile: intervalUs must be an integer from 100/);
  });

  it("writes the report also when the code throws, and rethrows; refuses bad arguments", async () => {
    const { client } = await testCluster();
    const path = await reportPath();
    await expect(
      client.performanceReport(path, async () => {
        await client.submit(inc, 1);
        throw new Error("the code broke");
      }),
    ).rejects.toThrow("the code broke");
    const html = await readFile(path, "utf8");
    expect(html).toContain("(the code reported on threw)");
    expect(html).toContain("<p>1 task run finished, 0 erred, 0 keys transferred");
    await expect(client.performanceReport(42 as never, () => 1)).rejects.toThrow(
      "performanceReport: path must be a file path or a file: URL",
    );
    await expect(client.performanceReport(path, "code" as never)).rejects.toThrow(
      "performanceReport: expected the code to report on, as a function",
    );
    // A report that cannot be written rejects, saying where and why.
    await expect(
      client.performanceReport(join(path, "not-a-dir", "r.html"), () => 1),
    ).rejects.toThrow(
      /^performanceReport: cannot write to .*not-a-dir\/r\.html: .* is not a directory$/,
    );
  });
});

describe("performanceReport, with a stand-in source", () => {
  /** A source with nothing to say; its profile runs the code and records its options. */
  function standIn() {
    const profiled: ProfileOptions[] = [];
    const source: ReportSource = {
      address: "tcp://s:1",
      counters: async () => COUNTERS,
      workers: async () => [],
      getTaskStream: async () => [],
      profile: async (body, options) => {
        profiled.push(options);
        return {
          value: await body(),
          profile: { nodes: [], startTime: 0, endTime: 0 },
          threads: [],
          lostThreads: 0,
          failedWorkers: [],
          top: [],
        };
      },
    };
    return { source, profiled };
  }

  it("profiles with the settings given; a report of code that did not throw does not say it threw", async () => {
    const { source, profiled } = standIn();
    const path = await reportPath();
    expect(await performanceReport(source, path, () => 3, { profile: { intervalUs: 500 } })).toBe(
      3,
    );
    expect(await performanceReport(source, path, () => 4, { profile: true })).toBe(4);
    expect(profiled).toEqual([{ intervalUs: 500 }, {}]);
    expect(await performanceReport(source, path, () => 5)).toBe(5);
    expect(await readFile(path, "utf8")).not.toContain("threw");
  });

  it("a path that cannot be written is refused before the code runs, rather than its value lost after", async () => {
    const { source } = standIn();
    const dir = dirname(await reportPath());
    let ran = 0;
    const code = () => ++ran;
    for (const options of [{}, { profile: true }]) {
      // With the code of the file error a write there would fail with, and the path.
      await expect(
        performanceReport(source, join(dir, "not-a-dir", "r.html"), code, options),
      ).rejects.toMatchObject({
        message: expect.stringMatching(
          /^performanceReport: cannot write to .*not-a-dir.*: no such directory: /,
        ),
        code: "ENOENT",
        path: join(dir, "not-a-dir", "r.html"),
      });
      await expect(performanceReport(source, dir, code, options)).rejects.toMatchObject({
        message: expect.stringMatching(
          /^performanceReport: cannot write to .*: it is a directory$/,
        ),
        code: "EISDIR",
      });
    }
    expect(ran).toBe(0);
  });

  it("a report that cannot be written at the end (its directory removed meanwhile) says the call, with the file error's code and cause", async () => {
    const { source } = standIn();
    const dir = join(dirname(await reportPath()), "removed");
    await mkdir(dir);
    const path = join(dir, "r.html");
    for (const options of [{}, { profile: true }]) {
      await mkdir(dir, { recursive: true });
      const err = await performanceReport(
        source,
        path,
        () => rm(dir, { recursive: true }).then(() => 1),
        options,
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({
        message: expect.stringMatching(
          /^performanceReport: cannot write to .*removed\/r\.html: ENOENT: no such file or directory/,
        ),
        code: "ENOENT",
        path,
      });
      expect((err as Error).cause).toMatchObject({ code: "ENOENT", syscall: "open" });
    }
  });

  it("the code's error wins over a report that cannot be written once it is over, which rejects otherwise", async () => {
    const { source } = standIn();
    for (const options of [{}, { profile: true }]) {
      // Writable when asked, gone by the end: the code takes the directory away.
      let path = join(await reportPath(), "..", "gone", "r.html");
      await mkdir(dirname(path));
      const code = async () => {
        await rm(dirname(path), { recursive: true });
        throw new Error("the code broke");
      };
      await expect(performanceReport(source, path, code, options)).rejects.toThrow(
        "the code broke",
      );
      path = join(await reportPath(), "..", "gone", "r.html");
      await mkdir(dirname(path));
      const works = async () => {
        await rm(dirname(path), { recursive: true });
        return 1;
      };
      await expect(performanceReport(source, path, works, options)).rejects.toThrow(/ENOENT/);
    }
  });

  it("refuses options and a profile option that are arrays", async () => {
    const { source } = standIn();
    const path = await reportPath();
    await expect(performanceReport(source, path, () => 1, [] as never)).rejects.toThrow(
      "performanceReport: options must be an object, got []",
    );
    await expect(
      performanceReport(source, path, () => 1, { profile: [] as never }),
    ).rejects.toThrow(
      "performanceReport: profile must be a boolean or {intervalUs, maxMs}, got []",
    );
  });
});

describe("renderPerformanceReport", () => {
  it("says how many runs the task stream lacks, lists idle and departed workers, escapes", () => {
    const html = renderPerformanceReport({
      start: 1000,
      stop: 1010,
      scheduler: "tcp://<s>:1",
      workers: [
        { address: "tcp://a:1", nthreads: 2 },
        { address: "tcp://idle:1", nthreads: 4 },
      ],
      runs: [
        {
          key: "inc-1",
          worker: "tcp://a:1",
          status: "OK",
          startstops: [
            { action: "transfer", start: 1001, stop: 1002, source: "tcp://gone:1" },
            { action: "compute", start: 1002, stop: 1007 },
          ],
          nbytes: 8,
        },
        {
          key: "<x>-1",
          worker: "tcp://gone:1",
          status: "OK",
          startstops: [{ action: "compute", start: 1000, stop: 1001 }],
          nbytes: 8,
        },
      ],
      before: COUNTERS,
      after: { ...COUNTERS, tasksFinished: 5, keysTransferred: 1 },
      failed: false,
    });
    expect(html).toContain(
      "3 of the 5 runs reported are not in the task stream: the scheduler keeps its last",
    );
    expect(html).toContain("scheduler tcp://&#60;s&#62;:1, 2 workers, 6 threads at the end.");
    // 6 s of compute over 10 s of 6 threads.
    expect(html).toContain("6.000 s of compute (10.0% of the threads' time)");
    // inc: 5 s of compute, 1 s waiting for its input; 5 s of 2 threads × 10 s busy.
    expect(html).toMatch(
      /<\/span>inc<\/td><td>1<\/td><td>0<\/td><td>5\.000<\/td><td>5\.000<\/td><td>5\.000<\/td><td>1\.000<\/td><td>83\.3%<\/td>/,
    );
    expect(html).toContain(
      "<td>tcp://a:1</td><td>2</td><td>1</td><td>5.000</td><td>1.000</td><td>25.0%</td>",
    );
    expect(html).toContain(
      "<td>tcp://idle:1</td><td>4</td><td>0</td><td>0.000</td><td>0.000</td><td>0.0%</td>",
    );
    expect(html).toContain("<td>tcp://gone:1</td><td>gone</td><td>1</td>");
    expect(html).toContain("&#60;x&#62;");
    expect(html).not.toContain("<x>");
  });

  it("orders prefixes by compute and workers by address, takes each prefix's longest run, and says nothing is missing when nothing is", () => {
    const run = (key: string, worker: string, start: number, stop: number) => ({
      key,
      worker,
      status: "OK" as const,
      startstops: [{ action: "compute" as const, start, stop }],
      nbytes: 8,
    });
    const html = renderPerformanceReport({
      start: 1000,
      stop: 1010,
      scheduler: "tcp://s:1",
      workers: [
        { address: "tcp://b:1", nthreads: 1 },
        { address: "tcp://a:1", nthreads: 1 },
      ],
      runs: [
        run("small-1", "tcp://b:1", 1000, 1001),
        run("big-1", "tcp://a:1", 1001, 1004),
        run("big-2", "tcp://b:1", 1004, 1006),
      ],
      before: COUNTERS,
      after: { ...COUNTERS, tasksFinished: 3 },
      failed: false,
    });
    // big: 5 s over 2 runs, the longest 3 s.
    expect(html).toMatch(
      /<\/span>big<\/td><td>2<\/td><td>0<\/td><td>5\.000<\/td><td>2\.500<\/td><td>3\.000<\/td>/,
    );
    expect(html.indexOf("</span>big</td>")).toBeLessThan(html.indexOf("</span>small</td>"));
    expect(html.indexOf("<td>tcp://a:1</td>")).toBeLessThan(html.indexOf("<td>tcp://b:1</td>"));
    expect(html).not.toContain("not in the task stream");
  });

  it("a stop before the start (clocks) is 0 s long", () => {
    const html = renderPerformanceReport({
      start: 1000,
      stop: 999,
      scheduler: "tcp://s:1",
      workers: [{ address: "tcp://a:1", nthreads: 1 }],
      runs: [],
      before: COUNTERS,
      after: COUNTERS,
      failed: false,
    });
    expect(html).toContain(", 0.000 s; scheduler tcp://s:1");
    expect(html).toContain(
      "<td>tcp://a:1</td><td>1</td><td>0</td><td>0.000</td><td>0.000</td><td></td>",
    );
  });

  it("the profile section: each thread's busy time, the top 25 functions' share of it, what was lost", () => {
    const top = Array.from({ length: 30 }, (_, i) => ({
      functionName: `fn${i}`,
      url: i === 0 ? "file:///t.js" : "",
      line: 0,
      selfMs: 100,
    }));
    const html = renderPerformanceReport({
      ...NOTHING_RAN,
      profile: {
        profile: { nodes: [], startTime: 0, endTime: 0 },
        threads: [
          { worker: "tcp://a:1", thread: "main", sampledMs: 4000, idleMs: 1000 },
          { worker: "tcp://a:1", thread: "thread 2", sampledMs: 0, idleMs: 0 },
        ],
        lostThreads: 1,
        failedWorkers: [{ worker: "tcp://b:1", reason: "gone <quietly>" }],
        top,
      },
    });
    expect(html).toContain("<td>tcp://a:1 main</td><td>4.000</td><td>3.000</td><td>75.0%</td>");
    expect(html).toContain("<td>tcp://a:1 thread 2</td><td>0.000</td><td>0.000</td><td></td>");
    // A line unknown (0) is not named; 100 ms of the 3 s busy.
    expect(html).toContain("<td>fn0</td><td>file:///t.js</td><td>0.100</td><td>3.3%</td>");
    expect(html).toContain("<td>fn24</td>");
    expect(html).not.toContain("<td>fn25</td>");
    expect(html).toContain("1 pool thread ended while profiled");
    expect(html).toContain("no profile of tcp://b:1: gone &#60;quietly&#62;");
  });

  it("the profile section with no busy time gives functions no share", () => {
    const html = renderPerformanceReport({
      ...NOTHING_RAN,
      profile: {
        profile: { nodes: [], startTime: 0, endTime: 0 },
        threads: [{ worker: "tcp://a:1", thread: "main", sampledMs: 1000, idleMs: 1000 }],
        lostThreads: 0,
        failedWorkers: [],
        top: [{ functionName: "f", url: "file:///t.js", line: 3, selfMs: 0 }],
      },
    });
    expect(html).toContain("<td>f</td><td>file:///t.js:3</td><td>0.000</td><td></td>");
    expect(html).not.toContain("pool thread");
  });

  it("says so when no task ran", () => {
    const html = renderPerformanceReport({
      ...NOTHING_RAN,
    });
    expect(html).toContain("<p>no task ran.</p>");
    expect(html.match(/<td colspan="\d+">none<\/td>/g)).toHaveLength(2);
  });
});
