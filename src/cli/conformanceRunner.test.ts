import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { runConformance } from "./conformanceRunner.ts";

const VECTOR = new URL("../../test/vectors/oracle/scenario-resources.json.gz", import.meta.url);

interface Step {
  event?: unknown;
  instructions: { cls: string; key?: string }[];
  state: Record<string, unknown>;
  [field: string]: unknown;
}

function vector(): { name: string; order_sensitive: boolean; steps: Step[] } {
  return JSON.parse(gunzipSync(readFileSync(VECTOR)).toString("utf8"));
}

function run(paths: string[]): { code: number; out: string[] } {
  const out: string[] = [];
  const code = runConformance(paths, { log: (l) => out.push(l) });
  return { code, out };
}

describe("conformance runner", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-conformance-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes a recorded vector and closes with the counts", () => {
    const { code, out } = run([VECTOR.pathname]);
    expect(code).toBe(0);
    expect(out.at(-1)).toBe("1 passed, 0 failed, 0 skipped");
  });

  it("reports the first diverging step of a changed instruction, with a readable diff", () => {
    const v = vector();
    v.name = "tampered-instruction";
    v.steps[3].instructions.push({ cls: "Execute", key: "nope" });
    const file = join(dir, "instr.json");
    writeFileSync(file, JSON.stringify(v));
    const { code, out } = run([file]);
    expect(code).toBe(1);
    expect(out[0]).toContain("FAIL tampered-instruction");
    expect(out[1]).toContain("first divergence at step 3 (instructions)");
    expect(out.join("\n")).toContain('"key":"nope"');
    const event = v.steps[3].event as { cls: string; stimulus_id: string };
    expect(out[2]).toMatch(
      new RegExp(`^  event: ${event.cls}\\(.*stimulus_id=.?${event.stimulus_id}.?\\)`),
    );
    expect(out.at(-1)).toBe("0 passed, 1 failed, 0 skipped");
  });

  it("reports a state difference with its path and both sides", () => {
    const v = vector();
    v.steps[2].state.transition_counter = 999;
    const file = join(dir, "state.json");
    writeFileSync(file, JSON.stringify(v));
    const { out } = run([file]);
    expect(out[1]).toContain("first divergence at step 2 (state)");
    expect(out.join("\n")).toMatch(/transition_counter.*999/);
  });

  it("names a broken file and goes on; skips order-sensitive vectors", () => {
    const sub = join(dir, "mixed");
    mkdirSync(sub);
    writeFileSync(join(sub, "a-broken.json"), "{ not json");
    const v = vector();
    v.order_sensitive = true;
    writeFileSync(join(sub, "b-order.json"), JSON.stringify(v));
    writeFileSync(join(sub, "c-good.json"), JSON.stringify(vector()));
    const { code, out } = run([sub]);
    expect(code).toBe(2); // a file that could not be run
    expect(out[0]).toMatch(/FAIL .*a-broken\.json: broken vector file/);
    expect(out.at(-1)).toBe("1 passed, 1 failed, 1 skipped");
  });

  it("refuses an order_sensitive that is not a boolean", () => {
    const v = vector() as Record<string, unknown>;
    v.order_sensitive = "yes";
    const file = join(dir, "os.json");
    writeFileSync(file, JSON.stringify(v));
    const bad = run([file]);
    expect(bad.code).toBe(2);
    expect(bad.out[0]).toMatch(
      /broken vector file: .*order_sensitive must be true or false, got "yes"/,
    );
  });

  it("fails when a step expected to raise does not", () => {
    const v = vector() as { steps: unknown[] };
    v.steps[1] = { event: (v.steps[1] as Step).event, raises: "InvalidTransition" };
    const file = join(dir, "raises.json");
    writeFileSync(file, JSON.stringify(v));
    const { out } = run([file]);
    expect(out[1]).toContain("first divergence at step 1 (raises)");
    expect(out.join("\n")).toContain("expected InvalidTransition, nothing was raised");
  });

  it("applies config_before, counters included, before the step's event", () => {
    const v = vector();
    v.steps[0].config_before = { transition_counter: 100, executed_count: 7 };
    for (const step of v.steps) {
      const state = step.state as Record<string, number>;
      state.transition_counter += 100;
      state.executed_count += 7;
    }
    const file = join(dir, "config-before.json");
    writeFileSync(file, JSON.stringify(v));
    expect(run([file]).out.at(-1)).toBe("1 passed, 0 failed, 0 skipped");
  });

  it("exits 1 when given nothing to run, 2 for a missing path", () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    const none = run([empty]);
    expect(none.code).toBe(1);
    expect(none.out).toEqual([`no vectors found in ${empty}`, "0 passed, 0 failed, 0 skipped"]);
    expect(runConformance([join(dir, "missing")], { log: () => {} })).toBe(2);
  });

  it("reports a missing path or a dangling symlink, runs the rest, and closes with the counts", () => {
    const sub = join(dir, "links");
    mkdirSync(sub);
    writeFileSync(join(sub, "good.json"), JSON.stringify(vector()));
    symlinkSync(join(dir, "nowhere.json"), join(sub, "dangling.json"));
    symlinkSync(join(dir, "nowhere"), join(sub, "dangling-notes.txt"));
    const missing = join(dir, "missing");
    const { code, out } = run([missing, sub, join(sub, "dangling.json")]);
    expect(code).toBe(2);
    expect(out).toEqual([
      `FAIL ${missing}: cannot read: no such file (or a dangling symlink)`,
      `FAIL ${join(sub, "dangling.json")}: cannot read: no such file (or a dangling symlink)`,
      `FAIL ${join(sub, "dangling.json")}: cannot read: no such file (or a dangling symlink)`,
      "1 passed, 3 failed, 0 skipped",
    ]);
  });

  it("reports a file named on the command line that is not a vector; ignores one in a directory", () => {
    const sub = join(dir, "notes");
    mkdirSync(sub);
    writeFileSync(join(sub, "README.txt"), "not a vector");
    // Not named, so found only by walking the directory: ignored, as are names that
    // merely contain ".json".
    writeFileSync(join(sub, "NOTES.md"), "not a vector");
    writeFileSync(join(sub, "old.json.bak"), "not a vector");
    writeFileSync(join(sub, "good.json.gz"), gzipSync(JSON.stringify(vector())));
    const named = join(sub, "README.txt");
    const { code, out } = run([named, sub]);
    expect(code).toBe(2);
    expect(out).toEqual([
      `FAIL ${named}: not a vector file (.json or .json.gz)`,
      "1 passed, 1 failed, 0 skipped",
    ]);
  });

  it("names the file once and the field inside it", () => {
    const v = vector() as { steps: unknown[] };
    v.steps[0] = { ...(v.steps[0] as Step), event: null };
    const file = join(dir, "event-null.json");
    writeFileSync(file, JSON.stringify(v));
    expect(run([file]).out[0]).toBe(
      `FAIL ${file}: broken vector file: steps[0].event: expected an object, got null`,
    );
  });

  it("names the step whose event the codec rejects", () => {
    const v = vector();
    (v.steps[2].event as Record<string, unknown>).stimulus_id = 7;
    v.name = "bad-stimulus-id";
    const file = join(dir, "stimulus-id.json");
    writeFileSync(file, JSON.stringify(v));
    const bad = run([file]);
    expect(bad.out[0]).toMatch(
      /^FAIL bad-stimulus-id \(.*stimulus-id\.json\): broken vector file: steps\[2\]\.event: \w+Event\.stimulus_id: expected a string, got number 7$/,
    );
    expect(bad.code).toBe(2);
    (v.steps[2].event as Record<string, unknown>).cls = "NoSuchEvent";
    writeFileSync(file, JSON.stringify(v));
    expect(run([file]).out[0]).toMatch(/: steps\[2\]\.event: unknown class "NoSuchEvent"/);
  });

  it("says a .gz that does not decompress is not valid gzip", () => {
    const file = join(dir, "truncated.json.gz");
    writeFileSync(file, gzipSync(JSON.stringify(vector())).subarray(0, 100));
    const { code, out } = run([file]);
    expect(code).toBe(2);
    expect(out[0]).toBe(
      `FAIL ${file}: broken vector file: not valid gzip (unexpected end of file)`,
    );
  });

  it("names a vector without a name of its own by its file, once", () => {
    const v = vector() as Partial<ReturnType<typeof vector>>;
    delete v.name;
    (v.steps as Step[])[1].state.transition_counter = -1;
    const file = join(dir, "nameless.json");
    writeFileSync(file, JSON.stringify(v));
    expect(run([file]).out[0]).toBe(`FAIL ${file}`);
  });

  it("names a config field without repeating the vector's name", () => {
    const v = vector() as unknown as { name: string; config: Record<string, unknown> };
    v.name = "bad-config";
    v.config.nthreads = "one";
    const file = join(dir, "config.json");
    writeFileSync(file, JSON.stringify(v));
    const r = run([file]);
    expect(r.out[0]).toMatch(
      /^FAIL bad-config \(.*\): broken vector file: config\.nthreads: expected /,
    );
    // Not a valid vector file, as --help says of exit code 2.
    expect(r.code).toBe(2);
  });

  it("refuses a vector of no steps, which would pass having checked nothing", () => {
    const v = vector() as unknown as { name: string; steps: unknown[] };
    v.name = "no-steps";
    v.steps = [];
    const file = join(dir, "no-steps.json");
    writeFileSync(file, JSON.stringify(v));
    const r = run([file]);
    expect(r).toEqual({
      code: 2,
      out: [
        `FAIL no-steps (${file}): broken vector file: the vector has no steps: nothing to replay or check`,
        "0 passed, 1 failed, 0 skipped",
      ],
    });
  });

  it("says what a stimulus stream or a cluster dump named .json is, and the name to give it", () => {
    const sub = join(dir, "misnamed");
    mkdirSync(sub);
    const stream = [
      { name: "s", config: {} },
      { cls: "PauseEvent", stimulus_id: "p" },
    ];
    writeFileSync(join(sub, "a-stream.json"), stream.map((l) => JSON.stringify(l)).join("\n"));
    const dump = { scheduler: {}, workers: {}, versions: {} };
    writeFileSync(join(sub, "b-dump.json.gz"), gzipSync(JSON.stringify(dump)));
    const r = run([sub]);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([
      `FAIL ${join(sub, "a-stream.json")}: broken vector file: a stimulus stream (JSON lines, the first a header with a config), not a conformance vector: name it .jsonl`,
      `FAIL ${join(sub, "b-dump.json.gz")}: broken vector file: a cluster dump written as JSON, which weft reads as YAML (JSON is YAML): name it .yaml.gz`,
      "0 passed, 2 failed, 0 skipped",
    ]);
  });

  it("replays a file named twice, or reached again through a link, once", () => {
    const sub = join(dir, "looped");
    mkdirSync(sub);
    writeFileSync(join(sub, "v.json"), JSON.stringify(vector()));
    symlinkSync(".", join(sub, "again"));
    const r = run([sub, join(sub, "v.json")]);
    expect(r.code).toBe(0);
    expect(r.out.at(-1)).toBe("1 passed, 0 failed, 0 skipped");
  });

  it("exits 0 when every vector found was skipped, without saying none was found", () => {
    const sub = join(dir, "only-skipped");
    mkdirSync(sub);
    const v = vector();
    v.order_sensitive = true;
    writeFileSync(join(sub, "order.json"), JSON.stringify(v));
    expect(run([sub])).toEqual({ code: 0, out: ["0 passed, 0 failed, 1 skipped"] });
  });

  it("lists passed and skipped vectors when verbose, and only failures otherwise", () => {
    const sub = join(dir, "verbose");
    mkdirSync(sub);
    const skippedVector = vector();
    skippedVector.name = "skipped-one";
    skippedVector.order_sensitive = true;
    writeFileSync(join(sub, "a.json"), JSON.stringify(skippedVector));
    const passing = vector();
    passing.name = "passing-one";
    writeFileSync(join(sub, "b.json"), JSON.stringify(passing));
    const lines: string[] = [];
    expect(runConformance([sub], { verbose: true, log: (l) => lines.push(l) })).toBe(0);
    expect(lines).toEqual([
      `SKIP skipped-one (${join(sub, "a.json")}) (order-sensitive)`,
      `ok   passing-one (${join(sub, "b.json")})`,
      "1 passed, 0 failed, 1 skipped",
    ]);
    expect(run([sub]).out).toEqual(["1 passed, 0 failed, 1 skipped"]);
  });

  it("reports an error the replay throws that is no decoding error as a failed vector, and goes on", () => {
    // The runner cannot tell a port refusing a valid config from a bad one, so a
    // rejection by the state machine itself counts as a failed vector (1), not an
    // unusable file (2).
    const sub = join(dir, "port-error");
    mkdirSync(sub);
    const v = vector() as unknown as { name: string; config: Record<string, unknown> };
    v.name = "refused-config";
    v.config.nthreads = -1;
    writeFileSync(join(sub, "a.json"), JSON.stringify(v));
    writeFileSync(join(sub, "b.json"), JSON.stringify(vector()));
    const r = run([sub]);
    expect(r.code).toBe(1);
    expect(r.out[0]).toMatch(/^FAIL refused-config \(.*a\.json\): WorkerState: nthreads must be /);
    expect(r.out[0]).not.toContain("broken vector file");
    expect(r.out.at(-1)).toBe("1 passed, 1 failed, 0 skipped");
  });
});
