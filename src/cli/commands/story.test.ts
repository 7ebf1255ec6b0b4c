import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { inc } from "../../client/testTasks.ts";
import { runWeft } from "../testContext.ts";

afterEach(closeTestClusters);

describe("weft story", () => {
  it("takes a bare host:port as the scheduler's address, as the other commands do", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    const f = client.submit(inc, 1);
    expect(await f).toBe(2);
    const bare = cluster.address.replace(/^tcp:\/\//, "");
    const r = await runWeft(["story", f.key, bare]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(f.key);
    expect(r.out).toContain("memory");
  });

  it("refuses an empty key as bad usage, not as a key no record mentions", async () => {
    const r = await runWeft(["story", "", "no-such-dump.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: a key or stimulus id cannot be empty\n/);
  });

  it("still reads other names as files", async () => {
    const r = await runWeft(["story", "x", "no-such-dump.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft story: no-such-dump\.yaml: /);
  });

  it("says the dump goes last when it is named before the keys, as weft replay takes it", async () => {
    const dump = fileURLToPath(
      new URL("../../../test/fixtures/dumps/cancelled-and-resumed.yaml", import.meta.url),
    );
    const r = await runWeft(["story", dump, "a", "f"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(`^error: the cluster dump goes last, after the keys: weft story a f ${dump}\n`),
    );
    // A last argument that is a file is read as the dump, whatever came first.
    const both = await runWeft(["story", dump, dump]);
    expect(both.code).toBe(1);
    // The command printed runs as given: a tuple key and a path with a space were printed
    // bare (a shell's syntax error), and --replay dropped.
    const spaced = join(mkdtempSync(join(tmpdir(), "weft-story-order-")), "my dump.yaml");
    copyFileSync(dump, spaced);
    const quoted = await runWeft(["story", "--replay", spaced, "('inc-1', 0)", `"it's"`]);
    expect(quoted.code).toBe(2);
    expect(quoted.err).toContain(
      `error: the cluster dump goes last, after the keys: weft story --replay "('inc-1', 0)" '"it'\\''s"' '${spaced}'\n`,
    );
  });

  it("tells a dump written as JSON the name that reads it, as weft replay does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-story-json-"));
    const file = join(dir, "dump.json");
    writeFileSync(file, '{"scheduler": {}, "workers": {}, "versions": {}}');
    const r = await runWeft(["story", "a", file]);
    // It was "not a cluster dump: a story needs one (.msgpack.gz, .yaml, …)".
    expect(r.err).toBe(
      `weft story: ${file}: a cluster dump written as JSON, which weft reads as YAML (JSON is YAML): name it .yaml\n`,
    );
    expect(r.code).toBe(2);
    writeFileSync(file, '{"graph": {}}');
    expect((await runWeft(["story", "a", file])).err).toMatch(
      /not a cluster dump: a story needs one/,
    );
  });

  // A dump with task references to a resumed and a cancelled task, as the seed's
  // TaskState.__repr__ writes them (`resumed(executing->fetch)`: sim seed 5318's dump).
  const CANCELLED_AND_RESUMED = fileURLToPath(
    new URL("../../../test/fixtures/dumps/cancelled-and-resumed.yaml", import.meta.url),
  );

  it("reads a dump whose tasks refer to resumed and cancelled tasks", async () => {
    const r = await runWeft(["story", "a", CANCELLED_AND_RESUMED]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("('a', 'executing', 'released', 'cancelled', {}, 's2')");
    expect(r.out).toContain("('a', 'cancelled', 'fetch', 'resumed', {}, 's3')");
    const f = await runWeft(["story", "f", CANCELLED_AND_RESUMED]);
    expect(f.code).toBe(0);
    expect(f.out).toContain("('f', 'resumed', 'released', 'cancelled', {}, 's6')");
  });

  it("names the file, the task, the field and the value of a malformed task reference", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-story-cli-"));
    try {
      const bad = join(dir, "bad.yaml");
      const text = readFileSync(CANCELLED_AND_RESUMED, "utf8");
      writeFileSync(
        bad,
        text.replace(
          "<TaskState 'f' cancelled(executing)>",
          "<TaskState 'f' cancelled(executing->)>",
        ),
      );
      const r = await runWeft(["story", "f", bad]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `weft story: ${bad}: workers["tcp://127.0.0.1:1"].tasks.e.dependencies[0]: the state "cancelled(executing->)" is neither a state's name nor cancelled(PREVIOUS) or resumed(PREVIOUS->NEXT), in "<TaskState 'f' cancelled(executing->)>"\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says a file without a known extension does not exist, naming the dump meant (weft replay too)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-story-cli-"));
    try {
      const name = join(dir, "state");
      // As weft dump -o state writes it.
      writeFileSync(`${name}.msgpack.gz`, "");
      const story = await runWeft(["story", "x", name]);
      expect(story.code).toBe(2);
      expect(story.err).toBe(
        `weft story: ${name}: cannot read the file: it does not exist (${name}.msgpack.gz does)\n`,
      );
      const replay = await runWeft(["replay", join(dir, "other")]);
      expect(replay.code).toBe(2);
      expect(replay.err).toBe(
        `weft replay: ${join(dir, "other")}: cannot read the file: it does not exist\n`,
      );
      // A directory, as the sample dumps' own, is said so, not as a file of unknown kind.
      for (const command of [["replay"], ["story", "x"]]) {
        const inDir = await runWeft([...command, dir]);
        expect(inDir.code, command[0]).toBe(2);
        expect(inDir.err, command[0]).toBe(
          `weft ${command[0]}: ${dir}: cannot read the file: it is a directory (name one file in it)\n`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses the options of a connection with a dump, which is read, not connected to", async () => {
    const dump = fileURLToPath(
      new URL("../../../test/fixtures/dumps/cancelled-and-resumed.yaml", import.meta.url),
    );
    for (const [args, said] of [
      [["--connect-timeout", "abc"], "--connect-timeout is"],
      [["--tls-cert", "c.pem", "--tls-key", "k.pem"], "--tls-cert, --tls-key are"],
      [["--max-frame-bytes", "1MiB"], "--max-frame-bytes is"],
    ] as const) {
      const r = await runWeft(["story", "k", dump, ...args]);
      expect(r, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(r.err.split("\n")[0], args.join(" ")).toBe(
        `error: ${said} for a running cluster, and ${dump} is read as a cluster dump`,
      );
    }
  });

  it("with --scheduler-file, refuses no key, a dump given too, and the replay options, before connecting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-story-cli-"));
    try {
      // Never read: each refusal comes before the file is looked for.
      const file = join(dir, "scheduler.json");
      const dump = join(dir, "state.msgpack.gz");
      writeFileSync(dump, "");
      for (const [args, said] of [
        [[], "error: give at least one key"],
        [
          ["k", dump],
          `error: ${dump} is a cluster dump, and --scheduler-file names a running cluster: give one of them`,
        ],
        [
          ["k", "--follow-log"],
          "error: --replay and --follow-log replay a dump, not a running cluster",
        ],
        [
          ["k", "--replay"],
          "error: --replay and --follow-log replay a dump, not a running cluster",
        ],
      ] as const) {
        const r = await runWeft(["story", ...args, "--scheduler-file", file]);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.err.split("\n")[0], args.join(" ")).toBe(said);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
