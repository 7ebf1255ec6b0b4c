import { describe, expect, it } from "vitest";
import { MessageTooLargeError, SerializationError } from "../comm/errors.ts";
import { workerMessageHalves } from "./unsentToWorker.ts";

const tooLarge = new MessageTooLargeError(2000, 1000, "send", "the maxMessageBytes of worker w");

describe("workerMessageHalves", () => {
  it("splits the keys of free-keys and remove-replicas, the first half the larger", () => {
    for (const op of ["free-keys", "remove-replicas"]) {
      const msg = { op, keys: ["a", "b", "c"], stimulusId: "s" };
      expect(workerMessageHalves(msg, tooLarge)).toEqual([
        { op, keys: ["a", "b"], stimulusId: "s" },
        { op, keys: ["c"], stimulusId: "s" },
      ]);
    }
  });

  it("splits acquire-replicas by key, each half with the sizes of its keys; refresh-who-has too", () => {
    const whoHas = new Map([
      ["a", ["w1"]],
      ["b", ["w2"]],
    ]);
    const nbytes = new Map([
      ["a", 1],
      ["b", 2],
    ]);
    expect(
      workerMessageHalves({ op: "acquire-replicas", whoHas, nbytes, stimulusId: "s" }, tooLarge),
    ).toEqual([
      {
        op: "acquire-replicas",
        whoHas: new Map([["a", ["w1"]]]),
        nbytes: new Map([["a", 1]]),
        stimulusId: "s",
      },
      {
        op: "acquire-replicas",
        whoHas: new Map([["b", ["w2"]]]),
        nbytes: new Map([["b", 2]]),
        stimulusId: "s",
      },
    ]);
    expect(
      workerMessageHalves({ op: "refresh-who-has", whoHas, stimulusId: "s" }, tooLarge),
    ).toEqual([
      { op: "refresh-who-has", whoHas: new Map([["a", ["w1"]]]), stimulusId: "s" },
      { op: "refresh-who-has", whoHas: new Map([["b", ["w2"]]]), stimulusId: "s" },
    ]);
  });

  it("leaves dropped a message of one key, one of other ops, and one that cannot be encoded", () => {
    expect(
      workerMessageHalves({ op: "free-keys", keys: ["a"], stimulusId: "s" }, tooLarge),
    ).toEqual([]);
    expect(workerMessageHalves({ op: "compute-task", key: "a" }, tooLarge)).toEqual([]);
    const keys = { op: "free-keys", keys: ["a", "b"], stimulusId: "s" };
    expect(workerMessageHalves(keys, new SerializationError("cannot encode"))).toEqual([]);
    expect(workerMessageHalves(null, tooLarge)).toEqual([]);
  });
});
