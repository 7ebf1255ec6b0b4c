import { describe, expect, it } from "vitest";
import { NO_WORKERS, SharedHolders, type TaskState } from "./taskState.ts";
import { ADDR, compute, gathered, networkFailure, newWs, W2, W3 } from "./testing.ts";

/** Inputs `a` (held by W2 alone), `b` (W2 and W3) and `c` (W2 alone) of task `x`. */
function withInputs() {
  const ws = newWs({ nthreads: 1 });
  ws.handleStimulus(
    compute("x", "s1", {
      whoHas: { a: [W2], b: [W2, W3, ADDR], c: [W2, ADDR] },
      nbytes: { a: 1, b: 1, c: 1 },
    }),
  );
  const task = (key: string) => ws.tasks.get(key) as TaskState;
  return { ws, a: task("a"), b: task("b"), c: task("c") };
}

describe("the holders of a task's data (whoHas)", () => {
  it("is one shared set per peer for the tasks that peer alone holds", () => {
    const { a, b, c } = withInputs();
    expect(a.whoHas).toBeInstanceOf(SharedHolders);
    // This worker in the list does not count as a holder.
    expect(c.whoHas).toBe(a.whoHas);
    expect([...a.whoHas]).toEqual([W2]);
    expect(b.whoHas).not.toBeInstanceOf(SharedHolders);
    expect([...b.whoHas]).toEqual([W2, W3]);
  });

  it("refuses to be changed in place", () => {
    const { a } = withInputs();
    expect(() => a.whoHas.add(W3)).toThrow(/shared set of holders/);
    expect(() => a.whoHas.delete(W2)).toThrow(/shared set of holders/);
    expect(() => a.whoHas.clear()).toThrow(/shared set of holders/);
    expect([...a.whoHas]).toEqual([W2]);
  });

  it("is replaced, not changed, when the peer turns out not to have a key", () => {
    const { ws, a, b, c } = withInputs();
    const shared = a.whoHas;
    // W2 was asked for all three and sent only c.
    ws.handleStimulus(gathered(W2, { c: 1 }, "s2"));
    expect(a.whoHas).toBe(NO_WORKERS);
    expect([...b.whoHas]).toEqual([W3]);
    expect(c.state).toBe("memory");
    expect([...shared]).toEqual([W2]);
    ws.validateState();
  });

  it("is replaced, not changed, when the peer is forgotten after a network failure", () => {
    const { ws, a, b } = withInputs();
    const shared = a.whoHas;
    ws.handleStimulus(networkFailure(W2, "s2"));
    expect(a.whoHas).toBe(NO_WORKERS);
    expect(a.state).toBe("missing");
    expect([...b.whoHas]).toEqual([W3]);
    expect([...shared]).toEqual([W2]);
    ws.validateState();
  });
});
