import { describe, expect, it } from "vitest";
import type { DumpTask, SchedulerDump } from "../protocol/clusterDump.ts";
import { decodeStimulusLog, dumpEventDict, UNKNOWN_TYPENAME } from "./dumpEvents.ts";

function scheduler(tasks: Record<string, { type?: string; nbytes?: number }>): SchedulerDump {
  return {
    address: null,
    id: null,
    status: null,
    transitionCounter: null,
    transitionLog: [],
    tasks: new Map(Object.entries(tasks)),
    workers: new Map(),
    raw: {},
  };
}

const update = (keys: string[]) => ({
  cls: "UpdateDataEvent",
  stimulus_id: "scatter-1",
  handled: 1.5,
  data: Object.fromEntries(keys.map((k) => [k, null])),
});

describe("stand-ins for the values a dump strips", () => {
  it("take the scheduler's type and size, else the worker's own, else unknown", () => {
    const workerTasks = new Map([
      ["forgotten", { raw: { type: "<class 'dict'>", nbytes: 99 } } as unknown as DumpTask],
    ]);
    const dict = dumpEventDict(
      update(["known", "forgotten", "untyped", "nowhere"]),
      scheduler({ known: { type: "<class 'list'>", nbytes: 7 }, untyped: { type: "None" } }),
      workerTasks,
    );
    expect(dict.data).toEqual({
      known: { typename: "list", sizeof: 7, value: null },
      forgotten: { typename: "dict", sizeof: 99, value: null },
      untyped: { typename: UNKNOWN_TYPENAME, sizeof: 0, value: null },
      nowhere: { typename: UNKNOWN_TYPENAME, sizeof: 0, value: null },
    });
  });

  it("name the event that cannot be decoded", () => {
    const events = [update(["a"]), { cls: "NoSuchEvent", stimulus_id: "x", handled: 2 }];
    expect(() => decodeStimulusLog("f.msgpack.gz", "tcp://w:1", events, scheduler({}))).toThrow(
      /^f\.msgpack\.gz: workers\["tcp:\/\/w:1"\]\.stimulus_log\[1\]: /,
    );
    // Of another release, the error says which wrote the dump.
    expect(() =>
      decodeStimulusLog("f.msgpack.gz", "tcp://w:1", events, scheduler({}), undefined, "2022.1.0"),
    ).toThrow(
      / \(the dump was written by distributed 2022\.1\.0; weft reads the dumps of 2023\.7\.0, whose worker it ports\)$/,
    );
  });
});
