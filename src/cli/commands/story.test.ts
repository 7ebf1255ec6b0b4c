import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

  it("still reads other names as files", async () => {
    const r = await runWeft(["story", "x", "no-such-dump.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft story: no-such-dump\.yaml: /);
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
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
