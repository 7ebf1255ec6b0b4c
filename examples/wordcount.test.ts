import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LocalCluster } from "../src/client/localCluster.ts";
import { reportError } from "./exampleCli.ts";
import { outputSink, runCli } from "./outputSink.ts";
import {
  cli,
  DEFAULT_SIZE,
  directWordcount,
  formatReport,
  main,
  runWordcount,
  WORDCOUNT_TASKS,
  WORDCOUNT_USAGE,
  type WordcountSize,
  wordcountGraph,
  wordcountTasks,
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
    expect(wordcountTasks(SMALL)).toBe(Object.keys(graph).length);
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
    expect(report.answer).toEqual(await directWordcount(SMALL));
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

  it("counts directly a chunk at a time, letting the event loop turn between chunks (the cluster is up)", async () => {
    let turns = 0;
    let on = true;
    const spin = () => {
      turns++;
      if (on) setImmediate(spin);
    };
    setImmediate(spin);
    const counted = await directWordcount(SMALL);
    on = false;
    expect(counted.total).toBe(6 * 3_000);
    expect(turns).toBeGreaterThanOrEqual(SMALL.chunks);
  });

  it("main() prints the answer and exits 0, or 2 with a line for a variable it cannot use", async () => {
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

      // A variable it cannot use is the user's mistake: one line, no stack, exit 2.
      process.env.WORDCOUNT_CHUNKS = "lots";
      const err2 = outputSink();
      expect(await main({ stdout: outputSink().stream, stderr: err2.stream })).toBe(2);
      expect(err2.text()).toBe(
        'wordcount: WORDCOUNT_CHUNKS must be a positive integer, got "lots" (see --help)\n',
      );
      // Read with Number, 0x10 was 16 chunks and " 4 " 4.
      for (const bad of ["0x10", "0b11", "0o7", " 4 ", "1_000"]) {
        process.env.WORDCOUNT_CHUNKS = bad;
        const e = outputSink();
        expect(await main({ stdout: outputSink().stream, stderr: e.stream }), bad).toBe(2);
        expect(e.text()).toBe(
          `wordcount: WORDCOUNT_CHUNKS must be a positive integer, got ${JSON.stringify(bad)} (see --help)\n`,
        );
      }
      // Too large to run: refused before anything starts, not built until the heap is gone.
      const refused = async (vars: Record<string, string>) => {
        Object.assign(process.env, vars);
        const e = outputSink();
        expect(await main({ stdout: outputSink().stream, stderr: e.stream })).toBe(2);
        return e.text();
      };
      expect(await refused({ WORDCOUNT_CHUNKS: "4", WORDCOUNT_PARTITIONS: "99999999999" })).toBe(
        "wordcount: WORDCOUNT_PARTITIONS must be at most 1,000,000, got 99999999999 (see --help)\n",
      );
      expect(await refused({ WORDCOUNT_PARTITIONS: "2", WORDCOUNT_WORDS: "10000001" })).toBe(
        "wordcount: WORDCOUNT_WORDS must be at most 10,000,000, got 10000001 (see --help)\n",
      );
      expect(
        await refused({
          WORDCOUNT_WORDS: "500",
          WORDCOUNT_CHUNKS: "1000",
          WORDCOUNT_PARTITIONS: "1000",
        }),
      ).toBe(
        "wordcount: WORDCOUNT_CHUNKS × WORDCOUNT_PARTITIONS is too large: 1,000 chunks and 1,000 partitions make 1,004,001 tasks, more than the 1,000,000 this example runs (see --help)\n",
      );
      process.env.WORDCOUNT_PARTITIONS = "2";
      process.env.WORDCOUNT_CHUNKS = "4";
      process.env.WORDCOUNT_EXECUTOR = "processes";
      const err3 = outputSink();
      expect(await main({ stdout: outputSink().stream, stderr: err3.stream })).toBe(2);
      expect(err3.text()).toBe(
        'wordcount: WORDCOUNT_EXECUTOR must be threads or inline, got "processes" (see --help)\n',
      );
    } finally {
      process.env = env;
    }
  });

  it("has a --help, and refuses arguments (it takes none) before starting anything", async () => {
    const run = (...argv: string[]) => runCli(cli, ...argv);
    // --help ran the whole job before.
    expect(await run("--help")).toEqual({ code: 0, out: `${WORDCOUNT_USAGE}\n`, err: "" });
    expect(WORDCOUNT_USAGE).toMatch(/^usage: npm start/);
    expect(WORDCOUNT_USAGE).toMatch(
      /WORDCOUNT_CHUNKS .*WORDCOUNT_WORDS .*WORDCOUNT_PARTITIONS .*WORDCOUNT_EXECUTOR/s,
    );
    expect(await run("--chunks=4")).toEqual({
      code: 2,
      out: "",
      err: "wordcount: unknown option --chunks=4 (see --help)\n",
    });
    expect(await run("64")).toEqual({
      code: 2,
      out: "",
      err: 'wordcount: takes no arguments, got "64" (see --help)\n',
    });
  });

  it("a real failure prints its stack, exit 1", () => {
    const err = outputSink();
    const failure = new TypeError("the cluster went away");
    expect(
      reportError("wordcount", failure, { stdout: outputSink().stream, stderr: err.stream }),
    ).toBe(1);
    expect(err.text()).toBe(`wordcount: failed: ${failure.stack}\n`);
    expect(err.text()).toMatch(/\n\s+at /);
  });
});
