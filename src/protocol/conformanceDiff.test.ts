import { describe, expect, it } from "vitest";
import { canonical, eventLine, instructionDiff, jsonDiff } from "./conformanceDiff.ts";

describe("canonical", () => {
  it("writes infinity as the recordings do (null), but never NaN or undefined", () => {
    expect(canonical([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])).toBe("[null,null]");
    expect(canonical(Number.NaN)).not.toBe(canonical(null));
    expect(canonical(undefined)).not.toBe(canonical(null));
    expect(canonical({ a: undefined })).not.toBe(canonical({ a: null }));
  });
});

describe("jsonDiff", () => {
  it("a NaN or undefined the port left where the recording has null is a difference", () => {
    expect(jsonDiff({ nbytes: null }, { nbytes: Number.NaN })).toEqual([
      '.nbytes: expected null, got "<JavaScript NaN>"',
    ]);
    expect(jsonDiff({ nbytes: null }, { nbytes: undefined })).toHaveLength(1);
    expect(jsonDiff([null], [undefined])).toHaveLength(1);
  });

  it("shows short values whole", () => {
    expect(jsonDiff({ p: [2, 7, -1] }, { p: [2, 8, -1] })).toEqual([
      ".p: expected [2,7,-1], got [2,8,-1]",
    ]);
  });

  it("names the elements a long list lacks or has besides, however long it is", () => {
    const keys = Array.from({ length: 100 }, (_, i) => `sum-${String(i).padStart(40, "0")}`);
    const [line] = jsonDiff({ data: keys }, { data: keys.slice(0, -1) });
    expect(line).toBe(`.data: missing "${keys[99]}" (expected 100 elements, got 99)`);
    const [both] = jsonDiff({ data: keys }, { data: [...keys.slice(1), "other"] });
    expect(both).toBe(
      `.data: missing "${keys[0]}"; unexpected "other" (expected 100 elements, got 100)`,
    );
  });

  it("says where a long list's order differs when its elements are the same", () => {
    const keys = Array.from({ length: 30 }, (_, i) => `ready-task-number-${i}`);
    const swapped = [...keys];
    [swapped[4], swapped[5]] = [swapped[5], swapped[4]];
    expect(jsonDiff(keys, swapped)).toEqual([
      `.: the same 30 elements in another order: at [4] expected "${keys[4]}", got "${keys[5]}"`,
    ]);
  });

  it("names at most ten elements, and how many more", () => {
    const long = Array.from({ length: 40 }, (_, i) => `key-${i}-${"x".repeat(10)}`);
    const [line] = jsonDiff(long, []);
    expect(line).toContain(`"${long[9]}" and 30 more (expected 40 elements, got 0)`);
    expect(line).not.toContain(long[10]);
  });
});

describe("instructionDiff", () => {
  it("shows an instruction that differs in a field by that field", () => {
    const keys = Array.from({ length: 40 }, (_, i) => `slowinc-${"0".repeat(30)}${i}`);
    const want = { cls: "GatherDep", worker: "tcp://w:1", to_gather: keys, stimulus_id: "s" };
    const got = { ...want, to_gather: [...keys, "extra"] };
    expect(instructionDiff([want], [got])).toEqual([
      '~ GatherDep(worker="tcp://w:1"): .to_gather: unexpected "extra" (expected 40 elements, got 41)',
    ]);
  });

  it("shows instructions of no counterpart whole, and duplicates as such", () => {
    const a = { cls: "Execute", key: "x", stimulus_id: "s" };
    const b = { cls: "Execute", key: "y", stimulus_id: "s" };
    expect(instructionDiff([a], [b])).toEqual([
      '- expected {"cls":"Execute","key":"x","stimulus_id":"s"}',
      '+ got      {"cls":"Execute","key":"y","stimulus_id":"s"}',
    ]);
    expect(instructionDiff([a], [a, a])).toEqual([
      '+ got      {"cls":"Execute","key":"x","stimulus_id":"s"}',
    ]);
    expect(instructionDiff([b, a], [a, b])).toEqual([]);
  });
});

describe("eventLine", () => {
  it("puts the class, key and stimulus ID first, whatever the event's length", () => {
    const event = {
      cls: "ComputeTaskEvent",
      actor: false,
      who_has: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, ["w"]])),
      key: "sum-1",
      stimulus_id: "compute-task-9",
    };
    const line = eventLine(event);
    expect(
      line.startsWith(
        'ComputeTaskEvent(key="sum-1", stimulus_id="compute-task-9") {"actor":false,',
      ),
    ).toBe(true);
    expect(line.length).toBeLessThanOrEqual(601);
  });
});
