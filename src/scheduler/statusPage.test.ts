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

  it("escapes what HTML would read", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
    );
  });
});
