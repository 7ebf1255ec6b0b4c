import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import { threadInspector } from "./threadInspector.ts";

const threads: Worker[] = [];
afterEach(async () => {
  for (const t of threads.splice(0)) await t.terminate();
});

function spinMs(ms: number): void {
  const t = Date.now();
  while (Date.now() - t < ms) {
    // A loop's back edge is where V8 takes interrupts, the inspector's among them.
  }
}

describe("threadInspector", () => {
  it("hands a thread's attachment to its listeners at a clean point, never inside running code", async () => {
    const inspector = threadInspector();
    await inspector.enable();
    let spinning = false;
    const seen: { threadId: number; duringSpin: boolean }[] = [];
    const stop = inspector.onAttach((threadId) => seen.push({ threadId, duringSpin: spinning }));
    try {
      spinning = true;
      const t = new Worker("setInterval(() => {}, 1000);", { eval: true });
      threads.push(t);
      // The thread starts, and its inspector attaches, while this thread is busy.
      spinMs(1_000);
      spinning = false;
      for (let i = 0; i < 200 && !seen.some((s) => s.threadId === t.threadId); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(seen).toEqual([{ threadId: t.threadId, duringSpin: false }]);
      // A timer set and cleared here still works: the timer lists are whole.
      const fired = await new Promise<boolean>((resolve) => {
        const cleared = setTimeout(() => resolve(false), 20);
        clearTimeout(cleared);
        setTimeout(() => resolve(true), 30);
      });
      expect(fired).toBe(true);
    } finally {
      stop();
    }
  });

  it("a listener that throws is a process warning; the others still hear", async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((w) => {
      warned.push(String(w));
    });
    const inspector = threadInspector();
    await inspector.enable();
    const seen: number[] = [];
    // Before, the throw (in a microtask of the inspector's event) was an uncaught exception.
    const stopThrowing = inspector.onAttach(() => {
      throw new RangeError("cannot attach");
    });
    const stop = inspector.onAttach((threadId) => seen.push(threadId));
    try {
      const t = new Worker("setInterval(() => {}, 1000);", { eval: true });
      threads.push(t);
      for (let i = 0; i < 200 && !seen.includes(t.threadId); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(seen).toEqual([t.threadId]);
      expect(warned).toEqual([
        "ThreadInspector onAttach listener failed: RangeError: cannot attach",
      ]);
    } finally {
      stopThrowing();
      stop();
      spy.mockRestore();
    }
  });
});
