import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LocalCluster } from "../src/client/localCluster.ts";
import { outputSink } from "./outputSink.ts";
import {
  DEFAULT_SIZE,
  directWordcount,
  formatReport,
  main,
  runWordcount,
  WORDCOUNT_TASKS,
  type WordcountSize,
  wordcountGraph,
} from "./wordcount.ts";

const SMALL: WordcountSize = { ...DEFAULT_SIZE, chunks: 6, words: 3_000, partitions: 4 };

let cluster: LocalCluster | null = null;
afterEach(async () => {
  cluster?.validateState();
  await cluster?.close();
  cluster = null;
});

describe("the word-count example", () => {
  it("builds a map → shuffle → reduce graph", () => {
    const { graph, answer } = wordcountGraph(SMALL);
    expect(Object.keys(graph)).toHaveLength(6 * 3 + 6 * 4 + 4 + 1);
    expect(graph[answer][0]).toMatchObject({ name: "wordcount.summary" });
  });

  it("computes the right answer on a local cluster, moving data between workers", async () => {
    cluster = await LocalCluster.start({
      workers: 2,
      executor: "inline",
      taskModules: [WORDCOUNT_TASKS],
      validate: true,
      logger: pino({ level: "silent" }),
    });
    const client = await cluster.client();
    const err = outputSink();
    const report = await runWordcount(client, SMALL, {
      stdout: outputSink().stream,
      stderr: err.stream,
    });
    expect(report.mismatch).toBeNull();
    expect(report.answer).toEqual(directWordcount(SMALL));
    expect(report.answer.total).toBe(6 * 3_000);
    expect(report.tasks).toBe(6 * 3 + 6 * 4 + 4 + 1);
    expect(report.transfers).toBeGreaterThan(0);
    expect(err.text()).toMatch(/word count: 47\/47 tasks \(100%\)\n$/);
    const text = formatReport(report, SMALL, "a test cluster");
    expect(text).toMatch(/top words:\n\s+1\. ka\s+[\d,]+\n/);
    expect(text).toMatch(
      /total: 18,000 words, [\d,]+ distinct \(checked against a direct count: equal\)/,
    );
    expect(text).toMatch(/summary: 47 tasks, \d+ transfers between workers, [\d.]+ s/);
  });

  it("main() prints the answer and exits 0, or 1 with a message", async () => {
    const env = { ...process.env };
    try {
      Object.assign(process.env, {
        WORDCOUNT_CHUNKS: "4",
        WORDCOUNT_WORDS: "500",
        WORDCOUNT_PARTITIONS: "2",
        WORDCOUNT_EXECUTOR: "inline",
        WEFT_LOG_LEVEL: "silent",
      });
      const out = outputSink();
      const err = outputSink();
      expect(await main({ stdout: out.stream, stderr: err.stream })).toBe(0);
      expect(out.text()).toMatch(/^weft word count: 4 chunks × 500 words, 2 partitions/);
      expect(out.text()).toMatch(/summary: 23 tasks/);

      process.env.WORDCOUNT_CHUNKS = "lots";
      const err2 = outputSink();
      expect(await main({ stdout: outputSink().stream, stderr: err2.stream })).toBe(1);
      expect(err2.text()).toMatch(
        /^wordcount: failed: Error: WORDCOUNT_CHUNKS must be a positive integer, got lots/,
      );
    } finally {
      process.env = env;
    }
  });
});
