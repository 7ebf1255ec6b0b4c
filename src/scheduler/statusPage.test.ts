import { describe, expect, it } from "vitest";
import { escapeHtml, renderStatusPage, type StatusSnapshot } from "./statusPage.ts";

const SNAPSHOT: StatusSnapshot = {
  address: "tcp://10.0.0.1:8786",
  status: "running",
  clients: 1,
  workers: [
    {
      address: "tcp://10.0.0.2:4000",
      status: "running",
      nthreads: 4,
      processing: 3,
      held: 10,
      bytes: 3 * 1024 * 1024,
      memoryLimit: 8 * 1024 ** 3,
    },
  ],
  prefixes: [{ prefix: "inc<script>", counts: { memory: 7, processing: 3 }, bytes: 2048 }],
  recent: [
    {
      key: "inc-1",
      worker: "tcp://10.0.0.2:4000",
      status: "OK",
      startstops: [{ action: "compute", start: 10, stop: 10.25 }],
      nbytes: 28,
    },
  ],
  now: 10.5,
  stream: [
    {
      key: "inc-1",
      worker: "tcp://10.0.0.2:4000",
      status: "OK",
      startstops: [{ action: "compute", start: 10, stop: 10.25 }],
      nbytes: 28,
    },
  ],
};

describe("the scheduler's /status page", () => {
  it("shows the workers, the tasks by prefix and state, and the last runs, refreshing itself", () => {
    const html = renderStatusPage(SNAPSHOT);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<meta http-equiv="refresh" content="2">');
    expect(html).toContain("<title>weft scheduler tcp://10.0.0.1:8786</title>");
    expect(html).toContain(
      "<tr><td>tcp://10.0.0.2:4000</td><td>running</td><td>4</td><td>3</td><td>10</td><td>3.00 MiB</td><td>8.00 GiB</td>",
    );
    // Its memory as a bar: without a measure of the process, its results' bytes.
    expect(html).toContain('title="results 3.00 MiB of 8.00 GiB"><span style="width:0.04%');
    // The progress bar, then released, waiting, queued, no-worker, processing, memory, erred.
    expect(html).toMatch(
      /<td>inc&#60;script&#62;<\/td><td class="chart"><span class="bar">.*title="memory: 7".*<\/span> 7 \/ 10<\/td><td>0<\/td><td>0<\/td><td>0<\/td><td>0<\/td><td>3<\/td><td>7<\/td><td>0<\/td><td>2.00 kiB<\/td>/,
    );
    // The task stream of the last seconds, zoomed to its runs.
    expect(html).toContain('aria-label="task stream of the last 1 s"');
    expect(html).toContain("<title>inc-1 (OK): 0.2500 s</title>");
    expect(html).toContain(
      "<td>inc-1</td><td>tcp://10.0.0.2:4000</td><td>OK</td><td>0.2500</td><td>28</td>",
    );
    expect(html).not.toContain("<script>");
  });

  it("says none where there is nothing", () => {
    const html = renderStatusPage({
      ...SNAPSHOT,
      workers: [],
      prefixes: [],
      recent: [],
      stream: [],
    });
    expect(html.match(/<td colspan="\d+">none<\/td>/g)).toHaveLength(3);
    expect(html).toContain("<p>no task ran in the last 20 s</p>");
  });

  it("shows a worker's process memory against its limit, when its heartbeats measure it", () => {
    const [w] = SNAPSHOT.workers;
    const html = renderStatusPage({ ...SNAPSHOT, workers: [{ ...w, memory: 7 * 1024 ** 3 }] });
    expect(html).toContain(
      'title="process memory 7.00 GiB of 8.00 GiB"><span style="width:87.5%;background:#ff7f0e"',
    );
  });

  it("wraps a long key, prefix, name or address anywhere, cut with all of it on hover", () => {
    const key = `${"k".repeat(500)}-1`;
    const [w] = SNAPSHOT.workers;
    const html = renderStatusPage({
      ...SNAPSHOT,
      workers: [{ ...w, name: `n${"<".repeat(60)}` }],
      prefixes: [{ ...SNAPSHOT.prefixes[0], prefix: "p".repeat(50) }],
      recent: [{ ...SNAPSHOT.recent[0], key }],
    });
    // A key has no spaces to wrap at: unwrapped, it widened the table past the window.
    const wrapped = (escaped: string) =>
      `<td class="chart"><span style="overflow-wrap:anywhere">${escaped}</span></td>`;
    expect(html).toContain(
      `<td class="chart"><span style="overflow-wrap:anywhere" title="${key}">${"k".repeat(200)}…</span></td>`,
    );
    expect(html).toContain(wrapped("p".repeat(50)));
    expect(html).toContain(wrapped(`n${"&#60;".repeat(60)}`));
    // Short text stays plain.
    expect(html).toContain("<td>tcp://10.0.0.2:4000</td>");
  });

  it("stays small on a big cluster: the top of each table, saying how many more", () => {
    const now = 1_000;
    const [w] = SNAPSHOT.workers;
    const workers = Array.from({ length: 1_000 }, (_, i) => ({
      ...w,
      address: `tcp://10.0.${i >> 8}.${i & 255}:4000`,
      // One paused, one near its limit: shown whatever their address.
      status: i === 777 ? "paused" : "running",
      memory: i === 999 ? 7.9 * 1024 ** 3 : 1024 ** 3,
    }));
    const prefixes: StatusSnapshot["prefixes"][number][] = Array.from(
      { length: 5_000 },
      (_, i) => ({
        prefix: `prefix<${i}>`,
        counts: i === 4_321 ? { erred: 1 } : { memory: 4 },
        bytes: 1_000,
      }),
    );
    prefixes[2_222] = { ...prefixes[2_222], counts: { waiting: 100, memory: 4 } };
    // The last 2,000 runs, over 500 workers, one busier than the rest.
    const stream = Array.from({ length: 2_000 }, (_, i) => ({
      key: `inc-${i}`,
      worker: workers[i % 500].address,
      status: "OK" as const,
      startstops: [
        {
          action: "compute" as const,
          start: now - 19 + i / 200,
          stop: now - 19 + i / 200 + (i % 500 === 123 ? 0.5 : 0.01),
        },
      ],
      nbytes: 8,
    }));
    const html = renderStatusPage({ ...SNAPSHOT, workers, prefixes, now, stream, recent: stream });
    // 2.8 MB before: 5,000 prefix rows, 1,000 worker rows, lanes of 500 workers.
    expect(html.length).toBeLessThan(150_000);
    expect(html).toContain("1000 workers, 1 clients");
    expect(html.match(/<tr><td>tcp:/g)).toHaveLength(100);
    expect(html).toContain(
      '<p class="note">and 900 more workers, not shown: those paused or retiring first, then those using the most of their memory limit; /json/identity.json and weft status list them all</p>',
    );
    expect(html).toContain("<tr><td>tcp://10.0.3.9:4000</td><td>paused</td>");
    expect(html).toContain("<tr><td>tcp://10.0.3.231:4000</td>");
    expect(html.match(/<tr><td>prefix&#60;/g)).toHaveLength(50);
    expect(html).toContain(
      '<p class="note">and 4950 more prefixes, not shown: those with tasks erred or without a worker first, then those with the most tasks not yet in memory, then the most tasks</p>',
    );
    expect(html).toContain("<tr><td>prefix&#60;4321&#62;</td>");
    expect(html).toContain("<tr><td>prefix&#60;2222&#62;</td>");
    expect(html.match(/<text x="0"/g)).toHaveLength(30);
    expect(html).toContain(">tcp://10.0.0.123:4000</text>");
    expect(html).toContain(
      '<p class="note">and 470 more workers ran tasks in this window, not drawn: those drawn are the 30 busiest</p>',
    );
    expect(html.match(/<td>inc-\d+<\/td>/g)).toHaveLength(20);
  });

  it("escapes what HTML would read", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
    );
  });
});
