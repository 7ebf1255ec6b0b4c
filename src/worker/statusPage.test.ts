import { describe, expect, it } from "vitest";
import { newWs } from "./state/testing.ts";
import {
  renderWorkerStatusPage,
  type WorkerStatusSnapshot,
  type WorkerView,
  workerStatusSnapshot,
} from "./statusPage.ts";

const SNAPSHOT: WorkerStatusSnapshot = {
  address: "tcp://10.0.0.2:4000",
  name: "gpu-<1>",
  status: "running",
  scheduler: "tcp://10.0.0.1:8786",
  nthreads: 2,
  executor: "piscina",
  now: 100,
  memory: { results: 2048, spilled: 1024, rss: 900 * 1024 ** 2, limit: 1024 ** 3 },
  prefixes: [{ prefix: "inc", counts: { executing: 2, memory: 5, flight: 1 } }],
  executing: [
    { key: "inc-1", state: "executing" },
    { key: "inc-2", state: "long-running" },
  ],
  executingCount: 40,
  incoming: [{ peer: "tcp://10.0.0.3:4000", keys: ["a", "b", "c", "d", "e"], keyCount: 7 }],
  incomingBytes: 3 * 1024 ** 2,
  outgoingCount: 1,
  outgoingBytes: 512,
  transitions: [
    { key: "inc-1", start: "ready", finish: "executing", stimulusId: "compute-1", time: 99.5 },
  ],
};

describe("a worker's /status page", () => {
  it("shows its memory, tasks by prefix and state, what executes, transfers and transitions", () => {
    const html = renderWorkerStatusPage(SNAPSHOT);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<meta http-equiv="refresh" content="2">');
    expect(html).toContain("<title>weft worker tcp://10.0.0.2:4000 (gpu-&#60;1&#62;)</title>");
    expect(html).not.toContain("<1>");
    expect(html).toContain(
      "<td>2.00 kiB</td><td>1.00 kiB</td><td>900.00 MiB</td><td>1.00 GiB</td>",
    );
    // 900 MiB of 1 GiB: past 80%, orange.
    expect(html).toContain("width:87.89%;background:#ff7f0e");
    // released, waiting, ready, constrained, executing, long-running, fetch, flight, missing, memory
    expect(html).toContain(
      "<tr><td>inc</td><td>0</td><td>0</td><td>0</td><td>0</td><td>2</td><td>0</td><td>0</td><td>1</td><td>0</td><td>5</td>",
    );
    expect(html).toContain("<h2>Executing (40)</h2>");
    expect(html).toContain("<tr><td>inc-2</td><td>long-running</td></tr>");
    expect(html).toContain('<p class="note">and 38 more</p>');
    expect(html).toContain("fetching 3.00 MiB from 1 peers; serving 1 transfers (512 B) to peers");
    expect(html).toContain("<td>tcp://10.0.0.3:4000</td><td>a, b, c, d, e, … (7)</td>");
    expect(html).toContain(
      "<tr><td>inc-1</td><td>ready</td><td>executing</td><td>compute-1</td><td>0.500</td></tr>",
    );
  });

  it("wraps a long key or prefix anywhere, cut with all of it on hover", () => {
    const key = `${"k".repeat(500)}-1`;
    const html = renderWorkerStatusPage({
      ...SNAPSHOT,
      prefixes: [{ prefix: "p".repeat(50), counts: { executing: 1 } }],
      executing: [{ key, state: "executing" }],
      incoming: [{ peer: "tcp://10.0.0.3:4000", keys: [key], keyCount: 1 }],
      transitions: [{ ...SNAPSHOT.transitions[0], key }],
    });
    // A key has no spaces to wrap at: unwrapped, it widened the tables past the window.
    const cell = `<td class="chart"><span style="overflow-wrap:anywhere" title="${key}">${"k".repeat(200)}…</span></td>`;
    expect(html).toContain(`<tr>${cell}<td>executing</td></tr>`);
    expect(html).toContain(`<tr>${cell}<td>ready</td>`);
    expect(html).toContain(`<td>tcp://10.0.0.3:4000</td>${cell}`);
    expect(html).toContain(
      `<tr><td class="chart"><span style="overflow-wrap:anywhere">${"p".repeat(50)}</span></td>`,
    );
  });

  it("stays small with many prefixes and peers: the top of each table, saying how many more", () => {
    const prefixes: WorkerStatusSnapshot["prefixes"][number][] = Array.from(
      { length: 5_000 },
      (_, i) => ({ prefix: `prefix<${i}>`, counts: { memory: 3 } }),
    );
    prefixes[4_321] = { prefix: "prefix<4321>", counts: { error: 1 } };
    prefixes[2_222] = { prefix: "prefix<2222>", counts: { ready: 50 } };
    const incoming = Array.from({ length: 200 }, (_, i) => ({
      peer: `tcp://10.0.1.${i}:4000`,
      keys: ["a", "b", "c", "d", "e"],
      keyCount: i === 150 ? 5_000 : 1_000,
    }));
    const html = renderWorkerStatusPage({ ...SNAPSHOT, prefixes, incoming });
    // 5,000 prefixes made a page of over a megabyte, fetched again every 2 s.
    expect(html.length).toBeLessThan(40_000);
    expect(html.match(/<tr><td>prefix&#60;/g)).toHaveLength(50);
    expect(html).toContain("<tr><td>prefix&#60;4321&#62;</td>");
    expect(html).toContain("<tr><td>prefix&#60;2222&#62;</td>");
    expect(html).toContain(
      '<p class="note">and 4950 more prefixes, not shown: those with tasks erred or missing first, then those with the most tasks not yet in memory, then the most tasks</p>',
    );
    expect(html).toContain("fetching 3.00 MiB from 200 peers");
    expect(html.match(/<tr><td>tcp:\/\/10\.0\.1\./g)).toHaveLength(30);
    expect(html).toContain("<td>tcp://10.0.1.150:4000</td><td>a, b, c, d, e, … (5000)</td>");
    expect(html).toContain(
      '<p class="note">and 170 more peers, not shown: those listed are asked for the most keys</p>',
    );
  });

  it("reads the first keys fetched from each peer, and how many, not all of them", () => {
    const state = newWs();
    state.inFlightWorkers.set(
      "tcp://10.0.0.3:4000",
      new Set(Array.from({ length: 1_000 }, (_, i) => `x-${i}`)),
    );
    const w = {
      address: SNAPSHOT.address,
      options: {
        name: null,
        scheduler: SNAPSHOT.scheduler,
        executor: "piscina",
        memoryLimit: null,
      },
      status: "running",
      state,
      spillStats: null,
      dataServer: { outgoingCount: 0, outgoingBytes: 0 },
    } as unknown as WorkerView;
    expect(workerStatusSnapshot(w).incoming).toEqual([
      { peer: "tcp://10.0.0.3:4000", keys: ["x-0", "x-1", "x-2", "x-3", "x-4"], keyCount: 1_000 },
    ]);
  });

  it("says none where there is nothing, and no bar without a memory limit", () => {
    const html = renderWorkerStatusPage({
      ...SNAPSHOT,
      name: null,
      memory: { ...SNAPSHOT.memory, limit: null },
      prefixes: [],
      executing: [],
      executingCount: 0,
      incoming: [],
      transitions: [],
    });
    expect(html).toContain("<title>weft worker tcp://10.0.0.2:4000</title>");
    expect(html.match(/<td colspan="\d+">none<\/td>/g)).toHaveLength(4);
    expect(html).toContain('<td>none</td><td class="chart"></td>');
    expect(html).not.toContain("more</p>");
  });
});
