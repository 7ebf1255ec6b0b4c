import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { SpillStore } from "./spillStore.ts";
import { memoryMonitorFor, spillStoreFor } from "./workerMemory.ts";
import { resolveWorkerOptions } from "./workerOptions.ts";

const stores: SpillStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

describe("memoryMonitorFor with the managed measure", () => {
  it("says that values it cannot serialise keep memory high, not unmanaged memory", () => {
    const log: string[] = [];
    const logger = pino(
      { level: "debug" },
      { write: (line: string) => log.push(JSON.parse(line).msg as string) },
    );
    const o = resolveWorkerOptions({
      scheduler: "inproc://x",
      memoryLimit: 10_000,
      memoryMeasure: "managed",
    });
    const store = spillStoreFor(o, logger) as SpillStore;
    stores.push(store);
    const monitor = memoryMonitorFor(o, store, {
      logger,
      collectThreadGarbage: () => {},
      setPaused: () => {},
      terminate: () => {},
    });
    // Values a function makes unserialisable, 8 kB of them: beyond memorySpill (0.7).
    for (let i = 0; i < 4; i++) store.set(`x${i}`, { f: () => i, pad: new Uint8Array(1900) });
    monitor?.check();
    expect(store.stats).toMatchObject({ memoryKeys: 4, spilledKeys: 0 });
    expect(log.filter((l) => l.includes("Unmanaged"))).toEqual([]);
    expect(log).toContain(
      "Memory use is high: the values left in memory cannot be serialised to be spilled. -- Managed memory: 8.08 kiB -- Worker memory limit: 9.77 kiB",
    );
  });
});
