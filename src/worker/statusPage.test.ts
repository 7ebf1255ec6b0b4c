import { describe, expect, it } from "vitest";
import { renderWorkerStatusPage, type WorkerStatusSnapshot } from "./statusPage.ts";

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
  incoming: [{ peer: "tcp://10.0.0.3:4000", keys: ["a", "b", "c", "d", "e", "f", "g"] }],
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
      incoming: [{ peer: "tcp://10.0.0.3:4000", keys: [key] }],
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
