import { describe, expect, it } from "vitest";
import { Execution } from "./execution.ts";
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

  it("a run that ends while its rejoin waits gives the slot back once granted", async () => {
    const { gate, ex } = await setup();
    ex.secede(0);
    await gate.acquire(); // another task takes the slot
    const r = ex.rejoin();
    ex.finish(null);
    gate.release(); // the other task ends: the slot goes to the waiting rejoin
    await r;
    expect(gate.available).toBe(1);
  });

  it("a secession whose report is still queued when the run ends is not reported after it", async () => {
    const { seceded, ex } = await setup();
    ex.secede(0.5);
    ex.finish(null);
    await Promise.resolve();
    expect(seceded).toEqual([]);
  });

  it("a rejoin after the run ended waits for no slot", async () => {
    const { gate, ex } = await setup();
    ex.finish(null);
    await gate.acquire(); // another task takes the slot
    const r = ex.rejoin();
    expect(gate.waiting).toBe(0);
    await r;
    expect(gate.available).toBe(0);
  });
});

describe("Execution, a run asking for a client", () => {
  it("holds one from its first ask, on its thread or the main thread, until it finishes", async () => {
    for (const ask of ["main", "thread"] as const) {
      const { ex } = await setup();
      expect(ex.holdsClient).toBe(false);
      if (ask === "main") await expect(ex.client()).rejects.toThrow(/this run has no client/);
      else ex.usesClient();
      // Even one it could not get: the task may ask again, and then wait for others.
      expect(ex.holdsClient).toBe(true);
      ex.finish(null);
      expect(ex.holdsClient).toBe(false);
    }
  });
});
