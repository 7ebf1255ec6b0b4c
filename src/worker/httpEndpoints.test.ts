import { describe, expect, it } from "vitest";
import { workerMetrics } from "./httpEndpoints.ts";
import type { SpillStats } from "./spillStore.ts";
import type { WorkerView } from "./statusPage.ts";

/** What the metrics read of a worker holding 3 values, 2 of them spilled. */
function spillingWorker(spillStats: SpillStats | null): WorkerView {
  const fake = {
    state: {
      taskCounter: { currentCount: () => [{ prefix: "", state: "memory", value: 3 }] },
      nthreads: 2,
      nbytes: 300,
      transferIncomingBytes: 0,
      transferIncomingCount: 0,
      transferIncomingCountTotal: 0,
    },
    dataServer: {
      outgoingBytes: 0,
      outgoingCount: 0,
      outgoingCountTotal: 0,
      outgoingBytesTotal: 0,
    },
    spillStats,
  };
  return fake as unknown as WorkerView;
}

describe("a worker's metrics", () => {
  it("with namespace dask, counts spills with Dask's label (activity), so Dask's dashboards read them", async () => {
    const stats: SpillStats = {
      memoryKeys: 1,
      memoryBytes: 100,
      spilledKeys: 2,
      spilledBytes: 200,
      spillCount: 5,
      unspillCount: 3,
      spillFailures: 0,
      lostKeys: 0,
    };
    const text = await workerMetrics(spillingWorker(stats), "dask").registry().metrics();
    expect(text).toContain('dask_worker_spill_count_total{activity="disk_write"} 5\n');
    expect(text).toContain('dask_worker_spill_count_total{activity="disk_read"} 3\n');
    expect(text).toContain('dask_worker_tasks{state="memory"} 1\n');
    expect(text).toContain('dask_worker_tasks{state="disk"} 2\n');
    expect(text).toContain('dask_worker_memory_bytes{type="spilled"} 200\n');
  });

  it("without a memory limit, no spill samples", async () => {
    const text = await workerMetrics(spillingWorker(null), "weft").registry().metrics();
    expect(text).not.toMatch(/^weft_worker_spill_count_total\{/m);
    expect(text).not.toContain('state="disk"');
  });
});
