/** `weft sim --graph FILE`: a user's graph file run in the simulator. */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { afterAll, expect, test } from "vitest";
import { runWeft } from "../testContext.ts";

const weft = (...args: string[]) => runWeft(args);
const dir = mkdtempSync(join(tmpdir(), "weft-sim-graph-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const GRAPH = {
  a: ["load", "part-1.csv"],
  b: ["load", "part-2.csv"],
  c: ["add", "a", "b"],
  d: ["inc", "c"],
  e: ["mul", "c", "a"],
};

test("weft sim --graph runs the graph file under faults, seed after seed, with the right values", async () => {
  const g = file("g.json", GRAPH);
  // Tasks of a second: long enough for workers to die under them.
  const r = await weft(
    "sim",
    "--graph",
    g,
    "--runs",
    "8",
    "--workers",
    "3",
    "--task-duration",
    "1s",
    "--verbose",
  );
  expect(r.code, r.err).toBe(0);
  expect(r.out).toMatch(/^seed 1: ok graph\(5\), /m);
  expect(r.out).toMatch(/^fault: death +[1-9]/m);
  expect(r.out.trimEnd().split("\n").at(-1)).toBe("8 passed, 0 failed");
  // The wrapper form's keys choose what is wanted, and a module's graph is read as weft run reads it.
  const wrapped = file("w.json", { graph: GRAPH, keys: ["c"] });
  expect((await weft("sim", "--graph", wrapped, "--seed", "2")).out).toMatch(
    /^seed 2: ok graph\(3\)/,
  );
  const mod = file(
    "g.mjs",
    `export const graph = ${JSON.stringify(GRAPH)};\nexport const keys = ["d"];\n`,
  );
  expect((await weft("sim", "--graph", mod, "--seed", "2")).out).toMatch(/^seed 2: ok graph\(4\)/);
});

test("the same seed gives the same run, and a failure's replay line, naming --graph, reproduces it", async () => {
  const g = file("replay.json", GRAPH);
  const args = [
    "sim",
    "--graph",
    g,
    "--seed",
    "3",
    "--task-duration",
    "20ms",
    "--task-nbytes",
    "2kB",
  ];
  const once = await weft(...args);
  expect(once.code).toBe(0);
  expect((await weft(...args)).out).toBe(once.out);
  const failing = await weft(
    ...args,
    "--variant",
    "wrong-value",
    "--faults",
    "none",
    "--no-shrink",
  );
  expect(failing.code).toBe(1);
  const replay = /^ {2}replay: weft (.*)$/m.exec(failing.out)?.[1] as string;
  expect(replay).toBe(
    `sim --seed 3 --graph ${g} --task-duration 0.02 --task-nbytes 2000 --variant wrong-value --faults none`,
  );
  const again = await weft(...replay.split(" "), "--no-shrink");
  expect(again.code).toBe(1);
  expect(again.out).toBe(failing.out);
  // Other costs make another run: the flags are not ignored.
  expect((await weft(...args.slice(0, 5))).out).not.toBe(once.out);
});

test("the replay line names a relative --graph by its absolute path, so that it replays from any directory", async () => {
  const g = file("relative.json", GRAPH);
  const given = relative(process.cwd(), g);
  expect(isAbsolute(given)).toBe(false);
  const failing = await weft(
    "sim",
    "--graph",
    given,
    "--seed",
    "3",
    "--variant",
    "wrong-value",
    "--faults",
    "none",
    "--no-shrink",
  );
  expect(failing.code).toBe(1);
  expect(/^ {2}replay: weft (.*)$/m.exec(failing.out)?.[1]).toBe(
    `sim --seed 3 --graph ${g} --variant wrong-value --faults none`,
  );
});

test("--task-duration 0 runs tasks that take no time, as the sim field's duration 0 does", async () => {
  const g = file("instant.json", GRAPH);
  const r = await weft("sim", "--graph", g, "--seed", "1", "--task-duration", "0");
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^seed 1: ok graph\(5\)/);
});

test("--graph refuses flags that would choose another graph, and bad graph files, in one line, exit 2", async () => {
  const g = file("ok.json", GRAPH);
  const refused = async (args: string[], message: string) => {
    const r = await weft("sim", ...args);
    expect(r.code).toBe(2);
    expect(r.err.split("\n")[0]).toContain(message);
    expect(r.out).toBe("");
  };
  await refused(["--graph", g, "--workload", "map"], "--graph and --workload both choose");
  await refused(["--graph", g, "--tasks", "3"], "--tasks sizes the built-in workloads");
  await refused(["--graph", g, "--actors", "0.5"], "--actors makes a share");
  await refused(
    ["--graph", g, "--replicate", "0.5"],
    "--replicate acts only on runs with scattered data",
  );
  await refused(["--task-duration", "1s"], "--task-duration sets the tasks of a --graph FILE");
  await refused(["--task-nbytes", "1MB"], "--task-nbytes sets the tasks of a --graph FILE");
  await refused(["--graph", g, "--task-nbytes", "-1"], "expected");
  await refused(["--graph", g, "--task-duration", "-1"], "expected");
  await refused(["--graph", join(dir, "missing.json")], "missing.json: cannot read the graph");
  await refused(
    ["--graph", file("cycle.json", { a: ["inc", "b"], b: ["inc", "a"], c: ["inc", "a"] })],
    "the graph has a cycle: ",
  );
  await refused(
    ["--graph", file("key.json", { graph: GRAPH, keys: ["z"] })],
    'key.json: the graph has no key "z"',
  );
  await refused(["--graph", file("empty.json", {})], "empty.json: the graph has no tasks");
  await refused(["--graph", file("bad.txt", "")], "expected a .json graph or a module");
});

test('the wrapper\'s "sim" field sets the costs by function name; a wrong one is refused, naming it', async () => {
  const plain = file("plain.json", { graph: GRAPH });
  const costed = file("costed.json", {
    graph: GRAPH,
    sim: { load: { duration: "2s", nbytes: "20MB" }, add: { duration: 0.5 } },
  });
  const time = (out: string) => Number(/ t=([\d.]+)s/.exec(out)?.[1]);
  const before = await weft("sim", "--graph", plain, "--seed", "1", "--faults", "none");
  const after = await weft("sim", "--graph", costed, "--seed", "1", "--faults", "none");
  expect(after.code, after.err).toBe(0);
  // Two loads of 2 s then an add of 0.5 s: at least 2.5 virtual seconds, where 50 ms tasks take less than 1.
  expect(time(before.out)).toBeLessThan(1);
  expect(time(after.out)).toBeGreaterThan(2.5);
  const refused = async (sim: unknown, message: string) => {
    const r = await weft(
      "sim",
      "--graph",
      file("bad-sim.json", { graph: GRAPH, sim }),
      "--seed",
      "1",
    );
    expect(r.code).toBe(2);
    expect(r.err.split("\n")[0]).toContain(message);
  };
  await refused(
    { lod: { duration: "1s" } },
    'bad-sim.json: sim names "lod", which no task of the graph calls',
  );
  await refused({ load: { duration: "soon" } }, 'sim["load"].duration: ');
  await refused({ load: { size: "1MB" } }, 'sim["load"]: unknown field "size"');
  await refused({ load: { nbytes: -5 } }, 'sim["load"].nbytes must be an integer');
  await refused([1], 'the "sim" field must be');
});

test("what a graph module writes to stdout as it loads goes to stderr: --json's lines all parse", async () => {
  const mod = file(
    "chatty.mjs",
    `process.stdout.write("module loaded\\n");\nexport const graph = ${JSON.stringify(GRAPH)};\n`,
  );
  const r = await weft("sim", "--graph", mod, "--seed", "2", "--json");
  expect(r.code).toBe(0);
  const lines = r.out.trimEnd().split("\n");
  expect(lines.map((l) => JSON.parse(l) as { seed?: number })[0].seed).toBe(2);
  expect(r.err).toContain("module loaded\n");
});
