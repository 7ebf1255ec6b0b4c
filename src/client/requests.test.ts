import { afterEach, describe, expect, it, vi } from "vitest";
import type { DataUpdatedMsg, ReplicatedMsg } from "../protocol/messagesClient.ts";
import { DatasetError, RebalanceError, ReplicateError, ScatterError } from "./errors.ts";
import { type Request, Requests } from "./requests.ts";

/** Requests of client `id` over a stand-in client recording what is sent. */
function setup(id = "c1", onSend: (msg: Request, requests: Requests) => void = () => {}) {
  const sent: Request[] = [];
  const requests: Requests = new Requests({
    id,
    send: (msg) => {
      sent.push(msg);
      onSend(msg, requests);
    },
  });
  return { requests, sent };
}

/** A scatter's request, under `stimulusId`. */
function updateData(stimulusId: string): Request {
  return { op: "update-data", keys: [], clientId: "c1", stimulusId };
}

/** The answer to a scatter's request `stimulusId`. */
function dataUpdated(stimulusId: string): DataUpdatedMsg {
  return { op: "data-updated", stimulusId } as DataUpdatedMsg;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("Requests", () => {
  it("makes stimulus ids no other request has, within one millisecond and across clients", () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_700_000_000_000 });
    const a = setup("c1").requests;
    const b = setup("c2").requests;
    const ids = [a.stimulusId("replicate"), a.stimulusId("replicate"), b.stimulusId("replicate")];
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^replicate-/);
  });

  it("sends the request and settles it with the answer under its stimulus id, whatever the order", async () => {
    const { requests, sent } = setup();
    const first = requests.ask(updateData("s-1"));
    const second = requests.ask(updateData("s-2"));
    expect(sent.map((m) => m.stimulusId)).toEqual(["s-1", "s-2"]);
    expect(requests.answer("s-2", dataUpdated("s-2"))).toBe(true);
    expect(requests.answer("s-1", dataUpdated("s-1"))).toBe(true);
    await expect(first).resolves.toEqual(dataUpdated("s-1"));
    await expect(second).resolves.toEqual(dataUpdated("s-2"));
  });

  it("takes an answer that comes while the request is being sent", async () => {
    const { requests } = setup("c1", (msg, r) =>
      r.answer(msg.stimulusId, dataUpdated(msg.stimulusId)),
    );
    await expect(requests.ask(updateData("s-1"))).resolves.toEqual(dataUpdated("s-1"));
  });

  it("tells whether a request was waiting for an answer: not once it is answered, failed, or all failed", async () => {
    const { requests } = setup();
    expect(requests.answer("nobody", dataUpdated("nobody"))).toBe(false);
    const answered = requests.ask(updateData("s-1"));
    expect(requests.answer("s-1", dataUpdated("s-1"))).toBe(true);
    expect(requests.answer("s-1", dataUpdated("s-1"))).toBe(false);
    await answered;

    const failed = requests.ask(updateData("s-2"));
    const why = new Error("no");
    requests.fail("s-2", why);
    await expect(failed).rejects.toBe(why);
    expect(requests.answer("s-2", dataUpdated("s-2"))).toBe(false);

    const closed = new Error("the client was closed");
    const all = [requests.ask(updateData("s-3")), requests.ask(updateData("s-4"))];
    requests.failAll(closed);
    for (const p of all) await expect(p).rejects.toBe(closed);
    expect(requests.answer("s-3", dataUpdated("s-3"))).toBe(false);
  });

  it.each([
    ["update-data", "data-updated", ScatterError, "scatter"],
    ["replicate", "replicated", ReplicateError, "replicate"],
    ["rebalance", "rebalanced", RebalanceError, "rebalance"],
    ["retire-workers", "workers-retired", Error, "retireWorkers"],
    ["restart", "restarted", Error, "restart"],
    ["restart-workers", "workers-restarted", Error, "restartWorkers"],
    ["publish-dataset", "dataset-published", DatasetError, "publishDataset"],
    ["get-dataset", "dataset", DatasetError, "getDataset"],
    ["unpublish-dataset", "dataset-unpublished", DatasetError, "unpublishDataset"],
  ] as const)(
    "%s: a request that could not be sent, or whose %s answer could not be, fails naming the call",
    async (op, answerOp, errorClass, method) => {
      const { requests } = setup();
      const unsent = requests.ask({ op, stimulusId: "s-1" } as Request);
      expect(requests.unsent({ op, stimulusId: "s-1" }, new Error("too large"))).toBe(true);
      const err = await unsent.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(errorClass);
      expect((err as Error).message).toBe(`${method}: the scheduler could not be told: too large`);

      const unanswered = requests.ask({ op, stimulusId: "s-2" } as Request);
      requests.answerUnsent(answerOp, "s-2", "the answer is too large");
      const err2 = await unanswered.catch((e: unknown) => e);
      expect(err2).toBeInstanceOf(errorClass);
      expect((err2 as Error).message).toBe(`${method}: the answer is too large`);
    },
  );

  it("leaves messages that are not its requests to others, even one named like an object's own property", () => {
    const { requests } = setup();
    const err = new Error("too large");
    expect(requests.unsent({ op: "update-graph", stimulusId: "s-1" }, err)).toBe(false);
    expect(requests.unsent({ op: "constructor", stimulusId: "s-1" }, err)).toBe(false);
    expect(requests.unsent(null, err)).toBe(false);
  });

  it("fails a request whose answer of an unknown op could not be sent with the reason alone", async () => {
    const { requests } = setup();
    const asked = requests.ask({ op: "replicate", stimulusId: "s-1" } as Request);
    requests.answerUnsent("constructor", "s-1", "the answer is too large");
    const err = await asked.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ReplicateError);
    expect(err).toEqual(new Error("the answer is too large"));
    // A known answer to it is not taken after that.
    expect(requests.answer("s-1", { op: "replicated", stimulusId: "s-1" } as ReplicatedMsg)).toBe(
      false,
    );
  });
});
