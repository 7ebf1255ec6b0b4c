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
};

describe("the scheduler's /status page", () => {
  it("shows the workers, the tasks by prefix and state, and the last runs, refreshing itself", () => {
    const html = renderStatusPage(SNAPSHOT);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<meta http-equiv="refresh" content="2">');
    expect(html).toContain("<title>weft scheduler tcp://10.0.0.1:8786</title>");
    expect(html).toContain(
      "<tr><td>tcp://10.0.0.2:4000</td><td>running</td><td>4</td><td>3</td><td>10</td><td>3.00 MiB</td><td>8.00 GiB</td></tr>",
    );
    // released, waiting, queued, no-worker, processing, memory, erred
    expect(html).toContain(
      "<td>inc&#60;script&#62;</td><td>0</td><td>0</td><td>0</td><td>0</td><td>3</td><td>7</td><td>0</td><td>2.00 kiB</td>",
    );
    expect(html).toContain(
      "<td>inc-1</td><td>tcp://10.0.0.2:4000</td><td>OK</td><td>0.2500</td><td>28</td>",
    );
    expect(html).not.toContain("<script>");
  });

  it("says none where there is nothing", () => {
    const html = renderStatusPage({ ...SNAPSHOT, workers: [], prefixes: [], recent: [] });
    expect(html.match(/<td colspan="\d+">none<\/td>/g)).toHaveLength(3);
  });

  it("escapes what HTML would read", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
    );
  });
});
