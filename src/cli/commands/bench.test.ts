import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_BENCH_NODE_FLAGS } from "../../bench/clusterBenchCommand.ts";
import { STATE_BENCH_NODE_FLAGS } from "../../bench/stateBenchCommand.ts";
import { ONE_TASK_FINAL, writeOneTaskStream } from "../../bench/testStreams.ts";
import { TEST_TLS_FLAGS } from "../../comm/testTls.ts";
import { taskFunctionNames } from "../../worker/taskRegistry.ts";
import { runWeft } from "../testContext.ts";
import { givenOptionArgs } from "./bench.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-bench-cli-"));
const empty = mkdtempSync(join(tmpdir(), "weft-bench-cli-empty-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});
writeOneTaskStream(dir, "one");
writeOneTaskStream(dir, "wrong", { ...ONE_TASK_FINAL, transition_counter: 5 });

function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("weft bench", () => {
  it("has --help for itself and each benchmark", async () => {
    const top = await runWeft(["bench", "--help"]);
    expect(top.code).toBe(0);
    expect(top.out).toMatch(/state \[options\]/);
    expect(top.out).toMatch(/cluster \[options\]/);
    const state = await runWeft(["bench", "state", "--help"]);
    expect(state.out).toMatch(/--streams <names>/);
    expect(state.out).toMatch(/--expose-gc --max-semi-space-size=64/);
    const cluster = await runWeft(["bench", "cluster", "--help"]);
    expect(cluster.out).toMatch(/--graphs <list>/);
    expect(cluster.out).toMatch(/"inproc", "tcp",\s+"tls", default: "inproc"/);
    expect(cluster.out).toMatch(/--tls-ca-file <file>/);
  });

  it("refuses bad options, exit 2, before starting anything", async () => {
    expect(await runWeft(["bench", "state", "--runs", "0"])).toMatchObject({
      code: 2,
      err: "weft bench state: --runs must be a positive integer\n",
    });
    expect(await runWeft(["bench", "cluster", "--graphs", "map,nope"])).toMatchObject({
      code: 2,
      err: 'weft bench cluster: unknown graph "nope": expected map, tree, shuffle, chain, spawn or skew\n',
    });
    expect(await runWeft(["bench", "cluster", "--protocol", "tls"])).toMatchObject({
      code: 2,
      err: "weft bench cluster: --protocol tls needs --tls-ca-file, --tls-cert and --tls-key\n",
    });
    expect(await runWeft(["bench", "cluster", ...TEST_TLS_FLAGS])).toMatchObject({
      code: 2,
      err: "weft bench cluster: --tls-ca-file, --tls-cert and --tls-key are for --protocol tls\n",
    });
  });

  it("state: replays the streams in a child with the benchmark's V8 flags (gc exposed)", async () => {
    const r = await runWeft(
      ["bench", "state", "--dir", dir, "--streams", "one", "--runs", "2"].concat([
        "--tasks",
        "200",
      ]),
    );
    expect(r.code).toBe(0);
    const lines = jsonLines(r.out);
    expect(lines.find((l) => l.bench === "state")).toMatchObject({
      stream: "one",
      runs: 2,
      final_check: "ok",
    });
    // Only the child's --expose-gc gives it gc().
    expect(lines.find((l) => l.bench === "state-memory")).toMatchObject({
      tasks: 200,
      gc_exposed: true,
    });
    expect(r.err).toMatch(/replaying one: 1 warm-up and 2 timed runs…/);
  }, 60_000);

  it("state: exit 1 for a replay that ends elsewhere than its stream; exit 2 for no streams or an unknown one", async () => {
    const wrong = await runWeft([
      "bench",
      "state",
      "--dir",
      dir,
      "--streams",
      "wrong",
      "--tasks",
      "0",
    ]);
    expect(wrong.code).toBe(1);
    expect(String(jsonLines(wrong.out).find((l) => l.bench === "state")?.final_check)).toMatch(
      /^MISMATCH/,
    );
    const none = await runWeft(["bench", "state", "--dir", empty]);
    expect(none).toMatchObject({ code: 2 });
    expect(none.err).toMatch(/weft bench state: no \*\.jsonl\.gz streams in /);
    const unknown = await runWeft(["bench", "state", "--dir", dir, "--streams", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/weft bench state: no stream "nope" in .* \(there: one, wrong\)/);
  }, 60_000);

  // The reference's timing needs Python 3 and ../shared/reference (as tools/oracle does).
  const python =
    spawnSync("python3", ["--version"]).status === 0 &&
    existsSync(
      fileURLToPath(
        new URL("../../../../shared/reference/worker_state_machine.py", import.meta.url),
      ),
    );
  it.runIf(python)(
    "state: exit 1, not 2, when the reference's replay ends elsewhere than its stream",
    async () => {
      const r = await runWeft(
        ["bench", "state", "--dir", dir, "--streams", "wrong"].concat([
          "--tasks",
          "0",
          "--runs",
          "1",
          "--reference-here",
        ]),
      );
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /weft bench state: --reference-here: the reference's replay of .*wrong\.jsonl\.gz failed/,
      );
    },
    60_000,
  );

  it("cluster: computes the graphs in a child with the benchmark's V8 flags, each answer checked", async () => {
    const r = await runWeft(
      ["bench", "cluster", "--graphs", "chain", "--scale", "0.02", "--runs", "1"].concat([
        "--warmup",
        "0",
        "--no-work-stealing",
      ]),
    );
    expect(r.code).toBe(0);
    const [config, chain] = jsonLines(r.out);
    expect(config).toMatchObject({ bench: "cluster", workStealing: false, runs: 1 });
    expect(config.nodeFlags).toEqual(expect.arrayContaining([...CLUSTER_BENCH_NODE_FLAGS]));
    expect(chain).toMatchObject({ graph: "chain", tasks: 40, checked: true });
    expect(r.err).toMatch(/chain: 40 tasks, 0 warm-up and 1 timed run…/);
  }, 60_000);
});

describe("weft bench cluster --protocol tls", () => {
  it("runs the cluster over tls:// with the credentials given", async () => {
    const r = await runWeft([
      "bench",
      "cluster",
      "--protocol",
      "tls",
      ...TEST_TLS_FLAGS,
      "--graphs",
      "map",
      "--scale",
      "0.01",
      "--runs",
      "1",
      "--warmup",
      "0",
    ]);
    expect(r.code).toBe(0);
    const [config, map] = jsonLines(r.out);
    expect(config).toMatchObject({ bench: "cluster", transport: "tls" });
    expect(map).toMatchObject({ graph: "map", checked: true });
  }, 60_000);
});

describe("weft's own process", () => {
  it("loads none of the benchmark's task functions, which a user's task module may name too", async () => {
    expect((await runWeft(["bench", "cluster", "--runs", "0"])).code).toBe(2);
    expect((await runWeft(["bench", "--help"])).code).toBe(0);
    expect(taskFunctionNames()).toEqual([]);
  });
});

describe("the V8 flags", () => {
  it("are those the npm scripts give, so that weft bench and npm run bench:* measure alike", () => {
    const pkg = JSON.parse(
      readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
    ) as { scripts: Record<string, string> };
    const flags = (script: string) =>
      pkg.scripts[script].split(" ").filter((w) => w.startsWith("--") && w !== "--import");
    expect(flags("bench:state")).toEqual([...STATE_BENCH_NODE_FLAGS]);
    expect(flags("bench:cluster")).toEqual([...CLUSTER_BENCH_NODE_FLAGS]);
  });
});

describe("givenOptionArgs", () => {
  it("gives back the options given on the command line, not the defaults", () => {
    const cmd = new Command("x")
      .exitOverride()
      .option("--runs <n>", "", "5")
      .option("--graphs <list>", "", "map")
      .option("--flag", "")
      .option("--no-steal", "")
      .addOption(new Option("--kind <k>").choices(["a", "b"]).default("a"))
      .action(() => {});
    cmd.parse(["--runs", "3", "--flag", "--no-steal", "--kind", "b"], { from: "user" });
    expect(givenOptionArgs(cmd)).toEqual(["--runs", "3", "--flag", "--no-steal", "--kind", "b"]);
    const bare = new Command("y")
      .exitOverride()
      .option("--runs <n>", "", "5")
      .action(() => {});
    bare.parse([], { from: "user" });
    expect(givenOptionArgs(bare)).toEqual([]);
  });
});
