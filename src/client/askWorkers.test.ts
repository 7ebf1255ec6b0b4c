import { describe, expect, it } from "vitest";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import {
  type AskedWorkers,
  askedFields,
  callEachWorker,
  callEachWorkerOrFail,
  onEveryWorker,
  sortedByKey,
  unaskedIn,
  workersNamed,
} from "./askWorkers.ts";

/** A pool whose every worker answers `answer(address, method, args)`, over a comm limited to 1000 bytes. */
function poolAnswering(
  answer: (address: string, method: string, args: Record<string, unknown>) => unknown,
): PeerPool {
  return {
    get: async (address: string) => ({
      comm: { maxMessageBytes: 1000 },
      call: async (method: string, args: Record<string, unknown>) => answer(address, method, args),
    }),
  } as unknown as PeerPool;
}

/** A connected worker of `address`, named `name`. */
function identity(address: string, name: string | null = null, id?: string): WorkerIdentity {
  return { address, name, ...(id !== undefined ? { id } : {}) } as WorkerIdentity;
}

const noun = { noun: "logs", expected: "no list of records" };

describe("callEachWorker", () => {
  it("sends the asker's limit with who asks, and keys the answers by address, in order", async () => {
    const sent: Record<string, unknown>[] = [];
    const peers = poolAnswering((address, _method, args) => {
      sent.push(args);
      return [address];
    });
    const got = await callEachWorker(
      peers,
      ["tcp://b:2", "tcp://a:1"],
      { op: "getWorkerLogs", method: "get_logs", args: { n: 3 }, who: "client-1" },
      noun,
      (answer) => answer,
    );
    expect(Object.keys(got)).toEqual(["tcp://a:1", "tcp://b:2"]);
    expect(got["tcp://b:2"]).toEqual(["tcp://b:2"]);
    expect(sent).toEqual([
      { n: 3, who: "client-1", maxMessageBytes: 1000 },
      { n: 3, who: "client-1", maxMessageBytes: 1000 },
    ]);
  });

  it("names the worker and why: that could not be asked, or answered what is not read", async () => {
    const call = { op: "getWorkerLogs", method: "get_logs", args: {} };
    const failing = poolAnswering((address) => {
      throw new Error(`no route to ${address}`);
    });
    await expect(
      callEachWorker(failing, ["tcp://b:2", "tcp://a:1"], call, noun, (a) => a),
    ).rejects.toThrow(
      /^getWorkerLogs: cannot read the logs of tcp:\/\/a:1: no route to tcp:\/\/a:1$/,
    );
    const odd = poolAnswering(() => 7);
    await expect(callEachWorker(odd, ["tcp://a:1"], call, noun, () => null)).rejects.toThrow(
      /^getWorkerLogs: tcp:\/\/a:1 answered get_logs with no list of records$/,
    );
  });
});

describe("callEachWorkerOrFail", () => {
  it("gives the failure a malformed answer as JSON", async () => {
    const peers = poolAnswering(() => ({ status: "odd" }));
    const failed = (address: string, why: string) => new Error(`${address}: ${why}`);
    await expect(
      callEachWorkerOrFail(peers, ["tcp://a:1"], "plugin-add", {}, () => null, failed),
    ).rejects.toThrow('tcp://a:1: malformed answer: {"status":"odd"}');
  });
});

describe("workersNamed", () => {
  const workers = async () => [
    identity("tcp://10.0.0.1:1", "alpha"),
    identity("tcp://10.0.0.1:2"),
    identity("tcp://10.0.0.2:3", "gamma"),
  ];

  it("picks the workers a list names by address, by host, or by name", async () => {
    expect(await workersNamed("run", {}, workers)).toHaveLength(3);
    expect(await workersNamed("run", { workers: "tcp://10.0.0.1:2" }, workers)).toEqual([
      "tcp://10.0.0.1:2",
    ]);
    expect(await workersNamed("run", { workers: ["10.0.0.1"] }, workers)).toEqual([
      "tcp://10.0.0.1:1",
      "tcp://10.0.0.1:2",
    ]);
    expect(await workersNamed("run", { workers: ["gamma"] }, workers)).toEqual([
      "tcp://10.0.0.2:3",
    ]);
  });
});

describe("onEveryWorker", () => {
  it("asks the workers that joined while the others were asked before recording, and answers in address order", async () => {
    const lists = [
      [identity("tcp://c:3"), identity("tcp://a:1")],
      [identity("tcp://c:3"), identity("tcp://b:2"), identity("tcp://a:1")],
    ];
    const asked: string[][] = [];
    const events: string[] = [];
    const got = await onEveryWorker(
      async () => lists[Math.min(asked.length, 1)],
      async (addresses) => {
        asked.push([...addresses]);
        events.push("ask");
        return Object.fromEntries(addresses.map((a) => [a, "OK"]));
      },
      async () => {
        events.push("record");
        return [];
      },
    );
    expect(asked).toEqual([["tcp://c:3", "tcp://a:1"], ["tcp://b:2"]]);
    expect(events).toEqual(["ask", "ask", "record"]);
    expect(Object.keys(got)).toEqual(["tcp://a:1", "tcp://b:2", "tcp://c:3"]);
  });

  it("records nothing when a worker that joined meanwhile fails; asks none joining once it recorded", async () => {
    let list = [identity("tcp://a:1")];
    const events: string[] = [];
    const failing = onEveryWorker(
      async () => list,
      async (addresses) => {
        events.push(`ask ${addresses.join(" ")}`);
        if (addresses.includes("tcp://b:2")) throw new Error("b cannot");
        list = [identity("tcp://a:1"), identity("tcp://b:2")]; // b joins meanwhile
        return Object.fromEntries(addresses.map((a) => [a, "OK"]));
      },
      async () => {
        events.push("record");
        return [];
      },
    );
    await expect(failing).rejects.toThrow("b cannot");
    expect(events).toEqual(["ask tcp://a:1", "ask tcp://b:2"]);

    list = [identity("tcp://a:1")];
    events.length = 0;
    const got = await onEveryWorker(
      async () => list,
      async (addresses) => {
        events.push(`ask ${addresses.join(" ")}`);
        return Object.fromEntries(addresses.map((a) => [a, "OK"]));
      },
      async () => {
        events.push("record");
        // c registers once recorded: it takes it as it registers.
        list = [identity("tcp://a:1"), identity("tcp://c:3")];
        return [];
      },
    );
    expect(events).toEqual(["ask tcp://a:1", "record"]);
    expect(Object.keys(got)).toEqual(["tcp://a:1"]);
  });
});

describe("onEveryWorker, the scheduler checking the record", () => {
  const ok = (addresses: readonly string[]) => Object.fromEntries(addresses.map((a) => [a, "OK"]));

  it("asks the workers the scheduler names as not asked, and records once it names none; none asked after", async () => {
    let list = [identity("tcp://a:1")];
    const events: string[] = [];
    const got = await onEveryWorker(
      async () => list,
      async (addresses) => {
        events.push(`ask ${addresses.join(" ")}`);
        return ok(addresses);
      },
      async (asked) => {
        events.push(`record ${asked?.addresses.join(" ")}`);
        if (asked?.addresses.includes("tcp://b:2")) {
          // Recorded: c, registering now, takes it as it registers.
          list = [...list, identity("tcp://c:3")];
          return [];
        }
        list = [identity("tcp://a:1"), identity("tcp://b:2")]; // b joined as it recorded
        return ["tcp://b:2"];
      },
    );
    expect(events).toEqual([
      "ask tcp://a:1",
      "record tcp://a:1",
      "ask tcp://b:2",
      "record tcp://a:1 tcp://b:2",
    ]);
    expect(Object.keys(got)).toEqual(["tcp://a:1", "tcp://b:2"]);
  });

  it("records nothing when a worker named as not asked fails", async () => {
    const events: string[] = [];
    const failing = onEveryWorker(
      async () => [identity("tcp://a:1")],
      async (addresses) => {
        events.push(`ask ${addresses.join(" ")}`);
        if (addresses.includes("tcp://b:2")) throw new Error("b cannot");
        return ok(addresses);
      },
      async (asked) => {
        events.push(`record ${asked?.addresses.join(" ")}`);
        return ["tcp://b:2"];
      },
    );
    await expect(failing).rejects.toThrow("b cannot");
    expect(events).toEqual(["ask tcp://a:1", "record tcp://a:1", "ask tcp://b:2"]);
  });

  it("records unchecked, then asks those joined, when workers keep joining, or one named was asked", async () => {
    let n = 1;
    const records: (AskedWorkers | null)[] = [];
    const got = await onEveryWorker(
      async () => Array.from({ length: n }, (_, i) => identity(`tcp://w:${i}`)),
      async (addresses) => ok(addresses),
      async (asked) => {
        records.push(asked);
        // One more every time: never all asked.
        n++;
        return asked === null ? [] : [`tcp://w:${n - 1}`];
      },
    );
    expect(records).toHaveLength(11);
    expect(records.at(-1)).toBeNull();
    // Each named was asked, and the one joining as it recorded unchecked after.
    expect(Object.keys(got)).toHaveLength(12);

    const again: (AskedWorkers | null)[] = [];
    await onEveryWorker(
      async () => [identity("tcp://a:1")],
      async (addresses) => ok(addresses),
      async (asked) => {
        again.push(asked);
        return asked === null ? [] : ["tcp://a:1"];
      },
    );
    expect(again).toEqual([{ addresses: ["tcp://a:1"], ids: [] }, null]);
  });

  it("asks again a worker restarted at an address asked, told apart by its registration", async () => {
    // The process asked at a left; another registered at its address before the record.
    let list = [identity("tcp://a:1", null, "1")];
    const events: string[] = [];
    const records: (AskedWorkers | null)[] = [];
    const got = await onEveryWorker(
      async () => list,
      async (addresses) => {
        events.push(`ask ${addresses.join(" ")}`);
        return Object.fromEntries(addresses.map((a) => [a, `answer ${events.length}`]));
      },
      async (asked) => {
        records.push(asked);
        events.push("record");
        if (asked?.ids.includes("2")) return [];
        list = [identity("tcp://a:1", null, "2")];
        return ["tcp://a:1"];
      },
    );
    expect(events).toEqual(["ask tcp://a:1", "record", "ask tcp://a:1", "record"]);
    expect(records).toEqual([
      { addresses: ["tcp://a:1"], ids: ["1"] },
      { addresses: ["tcp://a:1"], ids: ["1", "2"] },
    ]);
    // The answer of the process there now.
    expect(got).toEqual({ "tcp://a:1": "answer 3" });
  });
});

describe("askedFields", () => {
  it("names the workers asked, and their registrations when the scheduler lists them", () => {
    expect(askedFields(null)).toEqual({});
    expect(askedFields({ addresses: ["tcp://a:1"], ids: [] })).toEqual({ asked: ["tcp://a:1"] });
    expect(askedFields({ addresses: ["tcp://a:1"], ids: ["7"] })).toEqual({
      asked: ["tcp://a:1"],
      askedIds: ["7"],
    });
  });
});

describe("unaskedIn", () => {
  it("reads the scheduler's answer to a checked record: recorded, the workers not asked, or an error", () => {
    expect(unaskedIn("uploadFile", ["a.mjs"])).toEqual([]);
    expect(unaskedIn("uploadFile", { unasked: ["tcp://w:1"] })).toEqual(["tcp://w:1"]);
    for (const bad of [null, {}, { unasked: [] }, { unasked: [1] }]) {
      expect(() => unaskedIn("loadTaskModules", bad)).toThrow(
        /^loadTaskModules: the scheduler's answer is not one/,
      );
    }
  });
});

describe("sortedByKey", () => {
  it("orders the keys", () => {
    expect(Object.keys(sortedByKey({ b: 1, c: 2, a: 3 }))).toEqual(["a", "b", "c"]);
  });
});
