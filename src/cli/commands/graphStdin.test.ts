/** `weft run -` and `weft sim --graph -`: the graph from stdin, as a pipeline gives it. */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { WEFT_BIN, weftProcess } from "../testWeftProcess.ts";
import { shellWord } from "./shellWord.ts";

/** The repository's root: the working directory `"tasks"` of a graph on stdin are relative to. */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

it("computes a JSON graph piped in, its task modules relative to the working directory", async () => {
  const graph = {
    graph: { x: ["inc", 1], y: ["add", "x", 2] },
    tasks: ["./src/worker/testTasks.ts"],
  };
  const run = await weftProcess(
    ["run", "-", "--executor", "inline", "--workers", "1", "--no-progress"],
    JSON.stringify(graph),
  );
  expect(run.err).toBe("");
  expect(JSON.parse(run.out)).toEqual({ y: 4 });
  expect(run.code).toBe(0);
  expect(process.cwd()).toBe(ROOT.replace(/\/$/, ""));
});

it("names stdin in what it says of a graph it cannot read or run, with the place JSON went wrong", async () => {
  const broken = await weftProcess(["run", "-"], '{\n  "x": ["inc", 1],\n}\n');
  expect(broken.err).toBe(
    "weft run: stdin: cannot read the graph: Expected double-quoted property name in JSON at position 21 (line 3, column 1)\n",
  );
  expect(broken.code).toBe(2);
  const unknown = await weftProcess(["run", "-", "--no-progress"], '{"x": ["inc", 1]}');
  expect(unknown.err).toContain('weft run: stdin: no task module defines "inc"');
  expect(unknown.code).toBe(2);
  // An empty or blank input: graphInput.test.ts.
  // The simulator names stdin as weft run does, whatever went wrong.
  const sim = await weftProcess(["sim", "--graph", "-"], '{"graph": {"a": 1}, "sim": 5}');
  expect(sim.err).toMatch(/^error: --graph stdin: the "sim" field must be /);
  expect(sim.code).toBe(2);
});

it("simulates a graph piped in, its failure's replay line naming - for the same graph piped in again", async () => {
  const graph = JSON.stringify({ a: ["load", "x"], b: ["inc", "a"] });
  const args = ["sim", "--graph", "-", "--seed", "3", "--variant", "wrong-value"];
  const failing = await weftProcess([...args, "--faults", "none", "--no-shrink"], graph);
  expect(failing.code).toBe(1);
  const replay = /^ {2}replay: weft (.*)$/m.exec(failing.out)?.[1] as string;
  // Before, `--graph /the/working/directory/-`: a file that is not there.
  expect(replay).toBe("sim --seed 3 --graph - --variant wrong-value --faults none");
  const again = await weftProcess([...replay.split(" "), "--no-shrink"], graph);
  expect(again.out).toBe(failing.out);
});

/**
 * `weft ...args` with a terminal for stdin (util-linux's `script`): what it wrote
 * before it read anything (up to `waitMs`), and all it wrote once given `input`
 * and a Ctrl-D.
 */
async function onTerminal(args: readonly string[], input: string, waitMs: number) {
  const command = [process.execPath, WEFT_BIN, ...args].map(shellWord).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], { stdio: "pipe" });
  let out = "";
  const closed = new Promise((resolve) => child.on("close", resolve));
  let spoke: () => void = () => {};
  const spoken = new Promise<void>((resolve) => {
    spoke = resolve;
  });
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("\n")) spoke();
  });
  await Promise.race([spoken, new Promise((r) => setTimeout(r, waitMs))]);
  const before = out;
  // Given the graph either way, it ends.
  child.stdin.end(`${input}\n\x04`);
  await closed;
  return { before, out };
}

it.skipIf(!existsSync("/usr/bin/script"))(
  "says it reads a graph from stdin before it waits on a terminal, sim as run",
  async () => {
    const graph = JSON.stringify({ a: ["f"] });
    const [sim, run] = await Promise.all([
      onTerminal(["sim", "--graph", "-", "--seed", "1", "--faults", "none"], graph, 8_000),
      onTerminal(["run", "-", "--no-progress"], graph, 8_000),
    ]);
    // Before, sim waited without a word.
    expect(sim.before).toMatch(
      /^weft sim: reading a JSON graph from stdin: end it with Ctrl-D\r?\n/,
    );
    expect(sim.out).toMatch(/seed 1: ok graph\(1\)/);
    expect(run.before).toMatch(
      /^weft run: reading a JSON graph from stdin: end it with Ctrl-D\r?\n/,
    );
  },
  30_000,
);
