import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { parseStream } from "../src/bench/streamFile.ts";
import { ONE_TASK_FINAL, writeOneTaskStream } from "../src/bench/testStreams.ts";
import { readMaybeGzip, workerStateFromConfig } from "../src/protocol/conformance.ts";
import { eventFromDict } from "../src/protocol/daskJson/events.ts";
import { benchStateAb, main } from "./stateAb.ts";
import { type Modules, replay } from "./stateAbSide.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), "weft-state-ab-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeOneTaskStream(dir, "one");
writeOneTaskStream(dir, "two");
writeOneTaskStream(dir, "wrong", { ...ONE_TASK_FINAL, tasks: 2 });

const options = { base: ROOT, dir, pairs: 2, rounds: 2, warmup: 1 };

describe("bench:state-ab", () => {
  it("pairs replays of two checkouts and reports the median ratio (here: this one against itself)", async () => {
    const records: Record<string, unknown>[] = [];
    await benchStateAb({ ...options, streams: ["one", "two"] }, (r) => records.push(r));
    expect(records[0]).toMatchObject({
      bench: "state-ab",
      base: ROOT,
      this: ROOT,
      rounds: 2,
      pairsPerRound: 2,
    });
    expect(records[0].nodeFlags).toContain("--expose-gc");
    expect(records.slice(1).map((r) => r.stream)).toEqual(["one", "two"]);
    for (const r of records.slice(1)) {
      expect(r.checked).toBe(true);
      expect(r.medianRatio).toBeGreaterThan(0);
      const [q1, q3] = r.ratioQuartiles as number[];
      expect(q1).toBeLessThanOrEqual(q3);
      expect(r.roundMedianRatios).toHaveLength(2);
    }
  });

  it("gives each side's state machine the wall clock, as bench:state does", () => {
    const path = join(dir, "one.jsonl.gz");
    const stream = parseStream<unknown>(readMaybeGzip(path), path, (d) => eventFromDict(d));
    const read: number[] = [];
    const m: Modules = {
      readMaybeGzip,
      eventFromDict,
      workerStateFromConfig: (config, where, data, clock) => {
        const ws = workerStateFromConfig(config as Record<string, unknown>, where, data, clock);
        read.push(ws.clock());
        return ws;
      },
    };
    const before = Date.now() / 1000;
    expect(replay(m, stream, "one")).toBeGreaterThanOrEqual(0);
    expect(read).toHaveLength(1);
    expect(read[0]).toBeGreaterThanOrEqual(before);
    expect(read[0]).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it("fails when a replay does not end as the stream's final line says", async () => {
    await expect(benchStateAb({ ...options, streams: ["wrong"] }, () => {})).rejects.toThrow(
      /base: wrong: got .*"tasks":1.*, expected .*"tasks":2/,
    );
  });

  it("refuses a directory that is not a weft checkout, and unknown streams", async () => {
    const empty = mkdtempSync(join(tmpdir(), "weft-ab-"));
    onTestFinished(() => rmSync(empty, { recursive: true, force: true }));
    await expect(
      benchStateAb({ ...options, base: empty, streams: ["one"] }, () => {}),
    ).rejects.toThrow(
      `${empty} is not a weft checkout: ${join(empty, "src/protocol/conformance.ts")} is missing`,
    );
    await expect(benchStateAb({ ...options, streams: ["nope"] }, () => {})).rejects.toThrow(
      `no stream "nope" in ${dir} (there: one, two, wrong)`,
    );
    await expect(benchStateAb({ ...options, streams: ["one", "one"] }, () => {})).rejects.toThrow(
      "a stream is named twice: one, one",
    );
    await expect(benchStateAb({ ...options, streams: [] }, () => {})).rejects.toThrow(
      "no streams to compare",
    );
    // As bench:state says it, not a bare ENOENT from scandir.
    const missing = join(empty, "missing");
    await expect(main(["--base", ROOT, "--dir", missing])).rejects.toThrow(
      `cannot read ${missing} (ENOENT: no such file or directory, scandir '${missing}'): give --dir the directory of the recorded streams`,
    );
    await expect(
      benchStateAb({ ...options, dir: missing, streams: ["one"] }, () => {}),
    ).rejects.toThrow(`cannot read ${missing}`);
  });

  it("refuses bad options before starting anything", async () => {
    await expect(main(["--base", ROOT, "--dir", dir, "--pairs", "0"])).rejects.toThrow(
      "--pairs must be a positive integer",
    );
    await expect(main(["--base", ROOT, "--dir", dir, "--warmup", "x"])).rejects.toThrow(
      "--warmup must be an integer >= 0",
    );
  });
});
