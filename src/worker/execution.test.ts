import { describe, expect, it } from "vitest";
import { Execution, SpareThreads } from "./execution.ts";
import { SlotGate } from "./slotGate.ts";

async function setup() {
  const gate = new SlotGate(1);
  await gate.acquire();
  const seceded: number[] = [];
  const ex = new Execution(gate, (d) => seceded.push(d), new AbortController().signal);
  return { gate, seceded, ex };
}

describe("Execution", () => {
  it("secede gives the slot back and is reported once, in a microtask", async () => {
    const { gate, seceded, ex } = await setup();
    ex.secede(0.5);
    ex.secede(0.7);
    expect(gate.available).toBe(1);
    expect(seceded).toEqual([]);
    await Promise.resolve();
    expect(seceded).toEqual([0.5]);
    ex.finish(0.5);
    expect(seceded).toEqual([0.5]);
    expect(gate.available).toBe(1);
  });

  it("a secession known only from the outcome is reported before finishing", async () => {
    const { gate, seceded, ex } = await setup();
    ex.finish(0.25);
    expect(seceded).toEqual([0.25]);
    expect(gate.available).toBe(1);
    ex.secede(1); // late news: ignored
    await Promise.resolve();
    expect(seceded).toEqual([0.25]);
  });

  it("rejoin takes a slot again; finishing gives it back", async () => {
    const { gate, ex } = await setup();
    ex.secede(0);
    await gate.acquire(); // another task takes the slot
    let rejoined = false;
    const r = ex.rejoin().then(() => {
      rejoined = true;
    });
    await Promise.resolve();
    expect(rejoined).toBe(false);
    gate.release(); // the other task ends
    await r;
    expect(gate.available).toBe(0);
    ex.finish(0);
    expect(gate.available).toBe(1);
  });

  it("a run seceding when no spare thread is left keeps its slot (no task gets a slot without a thread)", async () => {
    const gate = new SlotGate(1);
    const spare = new SpareThreads(1);
    const seceded: number[] = [];
    const signal = new AbortController().signal;
    await gate.acquire();
    const first = new Execution(gate, (d) => seceded.push(d), signal, spare);
    first.secede(0.1); // takes the one spare thread, gives the slot back
    expect(gate.available).toBe(1);
    await gate.acquire();
    const second = new Execution(gate, (d) => seceded.push(d), signal, spare);
    second.secede(0.2); // no spare thread: keeps the slot, still reported
    expect(gate.available).toBe(0);
    await Promise.resolve();
    expect(seceded).toEqual([0.1, 0.2]);
    await second.rejoin(); // holds its slot already
    // The first one's rejoin waits for the slot, which the second gives back as it ends.
    const rejoined = first.rejoin();
    second.finish(0.2);
    await rejoined;
    expect(spare.taken).toBe(0);
    expect(gate.available).toBe(0);
    first.finish(0.1);
    expect(gate.available).toBe(1);
  });
});
