import pino from "pino";
import { describe, expect, it } from "vitest";
import { MemoryMonitor, type MemoryThresholds, memoryVerdict } from "./memoryMonitor.ts";

const DASK: MemoryThresholds = { target: 0.6, spill: 0.7, pause: 0.8, terminate: 0.95 };

/** A monitor of a 1000-byte limit whose memory the test sets, with a store of `values` bytes each. */
function monitor(values: number[] | null, thresholds: MemoryThresholds = DASK) {
  const log: string[] = [];
  const calls: string[] = [];
  let memory = 0;
  const fast = values === null ? null : [...values];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => log.push(JSON.parse(line).msg as string) },
  );
  const m = new MemoryMonitor(1000, thresholds, {
    measure: () => memory,
    evictOne:
      fast === null
        ? null
        : () => {
            const bytes = fast.shift();
            if (bytes === undefined) return -1;
            calls.push(`evict ${bytes}`);
            return bytes;
          },
    collectGarbage: () => calls.push("gc"),
    setPaused: (paused) => calls.push(paused ? "pause" : "resume"),
    terminate: (why) => calls.push(`terminate: ${why}`),
    measureName: "process memory",
    logger,
  });
  return {
    m,
    log,
    calls,
    fast,
    at(bytes: number) {
      memory = bytes;
      return m.check();
    },
  };
}

describe("memoryVerdict", () => {
  it("acts only strictly beyond each share, as Dask's", () => {
    expect(memoryVerdict(800, 1000, DASK)).toEqual({
      fraction: 0.8,
      pause: false,
      terminate: false,
      spillBytes: 200,
    });
    expect(memoryVerdict(700, 1000, DASK).spillBytes).toBe(0);
    expect(memoryVerdict(701, 1000, DASK)).toMatchObject({ pause: false, spillBytes: 101 });
    expect(memoryVerdict(801, 1000, DASK)).toMatchObject({ pause: true, terminate: false });
    expect(memoryVerdict(951, 1000, DASK)).toMatchObject({ pause: true, terminate: true });
    const off = { target: 0.6, spill: false, pause: false, terminate: false } as const;
    expect(memoryVerdict(5000, 1000, off)).toEqual({
      fraction: 5,
      pause: false,
      terminate: false,
      spillBytes: 0,
    });
  });
});

describe("MemoryMonitor", () => {
  it("pauses beyond the pause share and resumes at or below it, once each", () => {
    const t = monitor(null);
    t.at(500);
    t.at(850);
    t.at(900);
    expect(t.m.isPaused).toBe(true);
    t.at(800);
    t.at(100);
    // While paused it collects garbage at each look (the hook throttles).
    expect(t.calls).toEqual(["pause", "gc", "gc", "resume"]);
    expect(t.log).toEqual([
      "Worker is at 85% memory usage. Pausing worker. Process memory: 850 B -- Worker memory limit: 0.98 kiB",
      "Worker is at 80% memory usage. Resuming worker. Process memory: 800 B -- Worker memory limit: 0.98 kiB",
    ]);
  });

  it("spills least recently used values until it expects to be back at the target", () => {
    const t = monitor([50, 100, 30, 400]);
    t.at(700); // not beyond the spill share
    expect(t.calls).toEqual([]);
    t.at(780); // 180 bytes to spill: 50 + 100 + 30, then collect what they held
    expect(t.calls).toEqual(["evict 50", "evict 100", "evict 30", "gc"]);
    expect(t.log).toContain("moved values to disk: memory use is high");
  });

  it("warns once an episode when nothing is left to spill (memory it does not manage)", () => {
    const t = monitor([100]);
    t.at(800);
    t.at(790);
    const warning = t.log.filter((l) => l.startsWith("Unmanaged memory use is high"));
    expect(t.calls).toEqual(["evict 100", "gc"]);
    expect(warning).toHaveLength(1);
    t.at(600); // the episode ends
    t.at(750);
    expect(t.log.filter((l) => l.startsWith("Unmanaged memory use is high"))).toHaveLength(2);
  });

  it("stops at a failed write without a warning of unmanaged memory, and tries again", () => {
    let failing = true;
    const evicted: number[] = [];
    const log: string[] = [];
    const m = new MemoryMonitor(1000, DASK, {
      measure: () => 780,
      evictOne: () => {
        if (failing) return -2;
        evicted.push(100);
        return 100;
      },
      collectGarbage: null,
      setPaused: () => {},
      terminate: () => {},
      measureName: "managed memory",
      logger: pino({}, { write: (line: string) => log.push(JSON.parse(line).msg as string) }),
    });
    m.check();
    expect(log).toEqual([]);
    expect(evicted).toEqual([]);
    failing = false; // the disk takes them again
    m.check();
    expect(evicted).toEqual([100, 100]);
  });

  it("leaves spilling to the store when it has no evictOne", () => {
    const t = monitor(null);
    expect(t.at(790)?.spillBytes).toBe(190);
    expect(t.calls).toEqual([]);
    expect(t.log).toEqual([]);
  });

  it("terminates once beyond the terminate share, and does nothing after", () => {
    const t = monitor([100]);
    t.at(960);
    expect(t.calls).toEqual([
      "terminate: its process memory (0.94 kiB) exceeded 95% of its limit (0.98 kiB)",
    ]);
    expect(t.at(990)).toBeNull();
    expect(t.at(10)).toBeNull();
    expect(t.calls).toHaveLength(1);
  });

  it("a share set to false never acts", () => {
    const t = monitor([100], { target: 0.6, spill: false, pause: false, terminate: false });
    t.at(5000);
    expect(t.calls).toEqual([]);
  });

  it("a measure that throws or gives no byte count is logged once, and skipped", () => {
    const log: string[] = [];
    const logger = pino({}, { write: (line: string) => log.push(JSON.parse(line).msg as string) });
    const readings: unknown[] = [Number.NaN, "lots", -1, 900, 900];
    let calls = 0;
    const m = new MemoryMonitor(1000, DASK, {
      measure: () => {
        calls++;
        if (calls === 1) throw new Error("no /proc");
        return readings[calls - 2] as number;
      },
      evictOne: null,
      collectGarbage: null,
      setPaused: () => {},
      terminate: () => {},
      measureName: "memory",
      logger,
    });
    for (let i = 0; i < 4; i++) expect(m.check()).toBeNull();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/the memory measure failed or gave no byte count/);
    expect(m.check()?.pause).toBe(true);
    expect(m.look()).toMatchObject({ memory: 900 });
  });

  it("takes an infinite measure for a failed one", () => {
    const t = monitor(null);
    expect(t.at(Number.POSITIVE_INFINITY)).toBeNull();
    expect(t.calls).toEqual([]);
    expect(t.m.memory).toBeNull();
  });

  it("does not terminate at exactly the terminate share", () => {
    const t = monitor(null);
    expect(t.at(950)?.terminate).toBe(false);
    expect(t.calls.some((c) => c.startsWith("terminate"))).toBe(false);
    expect(t.at(951)?.terminate).toBe(true);
  });
});
