import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { runWeft } from "../testContext.ts";
import { WAIT_NOTICE_MS } from "./waitNotice.ts";

afterEach(closeTestClusters);

const dir = mkdtempSync(join(tmpdir(), "weft-dump-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("weft dump", () => {
  it("takes the format from -o's extension when --format is not given", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const yaml = join(dir, "state.yaml");
    const r = await runWeft(["dump", cluster.address, "-o", yaml]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toBe(yaml);
    expect(parse(readFileSync(yaml, "utf8"))).toHaveProperty("scheduler");
    // No extension: msgpack, as before.
    const plain = join(dir, "state");
    const m = await runWeft(["dump", cluster.address, "-o", plain]);
    expect(m.code).toBe(0);
    expect(m.out.split("\n")[0]).toBe(`${plain}.msgpack.gz`);
    // No extension to contradict it: --format decides.
    const asYaml = await runWeft(["dump", cluster.address, "-o", plain, "--format", "yaml"]);
    expect(asYaml.err).toBe("");
    expect(asYaml.out.split("\n")[0]).toBe(`${plain}.yaml`);
  });

  it("says it still waits when the workers' states take a while", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const worker = cluster.workers[0] as unknown as {
      introspection: { dumpState: (...a: unknown[]) => unknown };
    };
    const real = worker.introspection.dumpState;
    worker.introspection.dumpState = async (...a: unknown[]) => {
      await new Promise((r) => setTimeout(r, WAIT_NOTICE_MS + 500));
      return real(...a);
    };
    const yaml = join(dir, "slow.yaml");
    const r = await runWeft(["dump", cluster.address, "-o", yaml]);
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      "weft dump: still waiting for workers' states (one that does not answer is waited for until the scheduler removes it)…\n",
    );
    // Quick: nothing said.
    worker.introspection.dumpState = real;
    expect(await runWeft(["dump", cluster.address, "-o", yaml])).toMatchObject({
      code: 0,
      err: "",
    });
  }, 15_000);

  it("refuses a --format that is neither msgpack nor yaml, before connecting", async () => {
    const r = await runWeft(["dump", "tcp://127.0.0.1:1", "--format", "json"]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: 'weft dump: --format must be msgpack or yaml, got "json"\n',
    });
  });

  it("refuses a --format that -o's extension contradicts, before connecting", async () => {
    const r = await runWeft([
      "dump",
      "tcp://127.0.0.1:1",
      "-o",
      join(dir, "x.yaml"),
      "--format",
      "msgpack",
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft dump: --format msgpack but -o \S+x\.yaml names a yaml file/);
    // Which extension goes with which format, so that the fix needs no look at the docs.
    expect(r.err).toContain(
      "msgpack is written to .msgpack.gz or .msgpack, yaml to .yaml, .yml, .yaml.gz or .yml.gz",
    );
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it("refuses an -o in a directory it cannot write, before connecting", async () => {
    const missing = join(dir, "no-such-dir", "state");
    const r = await runWeft(["dump", "tcp://127.0.0.1:1", "-o", missing]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `weft dump: -o ${missing}: no such directory: ${join(dir, "no-such-dir")}\n`,
    );
  });

  it("refuses an -o that names a directory, before connecting", async () => {
    const yaml = join(dir, "a-directory.yaml");
    const plain = join(dir, "plain");
    mkdirSync(yaml);
    mkdirSync(`${plain}.msgpack.gz`);
    expect(await runWeft(["dump", "tcp://127.0.0.1:1", "-o", yaml])).toEqual({
      code: 2,
      out: "",
      err: `weft dump: -o ${yaml}: it is a directory\n`,
    });
    expect(await runWeft(["dump", "tcp://127.0.0.1:1", "-o", plain])).toEqual({
      code: 2,
      out: "",
      err: `weft dump: -o ${plain}: ${plain}.msgpack.gz: it is a directory\n`,
    });
  });

  it("refuses an -o that is a directory, rather than write DIR.msgpack.gz beside it or DIR/.msgpack.gz", async () => {
    const sub = join(dir, "sub");
    mkdirSync(sub);
    for (const o of [sub, `${sub}/`, `${join(dir, "new-dir")}/`]) {
      expect(await runWeft(["dump", "tcp://127.0.0.1:1", "-o", o])).toEqual({
        code: 2,
        out: "",
        err: `weft dump: -o ${o}: ${o.endsWith("/") ? "it names a directory (it ends with /)" : "it is a directory"}\n`,
      });
    }
    expect(await runWeft(["dump", "tcp://127.0.0.1:1", "-o", ""])).toEqual({
      code: 2,
      out: "",
      err: "weft dump: -o : the name is empty\n",
    });
  });
});
