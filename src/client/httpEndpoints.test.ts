import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { add, inc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** `/metrics` as `{"name{labels}": value}`, without the comments. */
async function scrape(url: string): Promise<Map<string, number>> {
  const r = await fetch(`${url}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const out = new Map<string, number>();
  for (const line of (await r.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const cut = line.lastIndexOf(" ");
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

describe("HTTP endpoints of the scheduler and the workers", () => {
  it("serve health, Prometheus metrics of the work done, and identities", async () => {
    const { cluster, client } = await testCluster({
      // Without the active memory manager: every 2 s it drops the copy of y on the first
      // worker that no task needs any more, which the counts below include; on a loaded host
      // a round ran before they were read (12 busy loops: 4 runs in 4).
      scheduler: { httpAddress: "127.0.0.1:0", activeMemoryManager: false },
      worker: { httpAddress: "127.0.0.1:0" },
    });
    const schedulerUrl = cluster.scheduler.httpUrl as string;
    const [w0, w1] = cluster.workers as [Worker, Worker];
    const urls = [w0.httpUrl, w1.httpUrl] as [string, string];
    expect(schedulerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new Set([schedulerUrl, ...urls]).size).toBe(3);

    // One input on each worker, summed on the first: one transfer from the second.
    const x = client.submitWith({ workers: w0.address }, inc, 1);
    const y = client.submitWith({ workers: w1.address }, inc, 2);
    const z = client.submitWith({ workers: w0.address }, add, x, y);
    expect(await z).toBe(5);

    const s = await scrape(schedulerUrl);
    expect(s.get("weft_scheduler_clients")).toBeGreaterThanOrEqual(1);
    expect(s.get('weft_scheduler_tasks{state="memory"}')).toBe(3);
    expect(s.get('weft_scheduler_tasks{state="processing"}')).toBe(0);
    expect(s.get('weft_scheduler_workers{state="idle"}')).toBe(2);
    expect(s.get('weft_scheduler_workers{state="busy"}')).toBe(0);
    expect(s.get("weft_scheduler_tasks_done_total")).toBe(3);
    expect(s.get("weft_scheduler_tasks_done_erred_total")).toBe(0);
    expect(s.get("weft_scheduler_tasks_finished_total")).toBe(3);
    expect(s.get("weft_scheduler_keys_transferred_total")).toBe(1);
    // Present; how many depends on when rounds of work stealing ran.
    const requested = s.get("weft_scheduler_steals_requested_total");
    expect(requested).toBeTypeOf("number");
    expect(requested).toBeGreaterThanOrEqual(s.get("weft_scheduler_steals_confirmed_total") ?? -1);
    expect(s.get("weft_scheduler_replicas_dropped_total")).toBeTypeOf("number");
    expect(s.get('weft_scheduler_tasks_output_bytes{task_prefix_name="inc"}')).toBeGreaterThan(0);
    expect(s.get("weft_scheduler_desired_workers")).toBeGreaterThanOrEqual(0);
    // the process's own, from prom-client's defaults
    expect(s.get("process_cpu_seconds_total")).toBeGreaterThan(0);

    const [m0, m1] = await Promise.all(urls.map(scrape));
    expect(m0?.get('weft_worker_tasks{state="memory"}')).toBe(3); // x, z and the copy of y
    expect(m1?.get('weft_worker_tasks{state="memory"}')).toBe(1);
    expect(m0?.get("weft_worker_threads")).toBe(1);
    expect(m0?.get("weft_worker_transfer_incoming_count_total")).toBe(1);
    expect(m0?.get("weft_worker_transfer_incoming_count")).toBe(0);
    expect(m1?.get("weft_worker_transfer_outgoing_count_total")).toBe(1);
    expect(m1?.get("weft_worker_transfer_outgoing_bytes_total")).toBeGreaterThan(0);
    expect(m0?.get('weft_worker_memory_bytes{type="managed"}')).toBeGreaterThan(0);
    expect(m0?.get('weft_worker_memory_bytes{type="spilled"}')).toBe(0);

    for (const url of [schedulerUrl, ...urls]) {
      const health = await fetch(`${url}/health`);
      expect([health.status, await health.text()]).toEqual([200, "ok\n"]);
    }
    const identity = (await (await fetch(`${schedulerUrl}/json/identity.json`)).json()) as {
      workers: Record<string, unknown>;
    };
    expect(identity).toMatchObject({ type: "Scheduler", address: cluster.address });
    expect(Object.keys(identity.workers).sort()).toEqual([w0.address, w1.address].sort());
    expect(identity.workers[w0.address]).toMatchObject({ name: w0.options.name, nthreads: 1 });
    const counts = await (await fetch(`${schedulerUrl}/json/counts.json`)).json();
    expect(counts).toMatchObject({ tasksDone: 3, workers: 2 });
    const page = await fetch(`${schedulerUrl}/status`);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain(
      `<td>${w0.address}</td><td>${w0.options.name}</td><td>running</td><td>1</td>`,
    );
    // 2 inc in memory, the progress bar full
    expect(html).toMatch(
      /<td>inc<\/td><td class="chart">.*2 \/ 2<\/td>(<td>0<\/td>){5}<td>2<\/td>/,
    );
    expect(html).toMatch(/<svg class="stream"[^>]*><text x="0" y="\d+" font-size="10">inproc:/);
    expect(html).toContain(`<td>${z.key}</td><td>${w0.address}</td><td>OK</td>`);
    const worker = await (await fetch(`${urls[0]}/json/identity.json`)).json();
    expect(worker).toMatchObject({
      type: "Worker",
      address: w0.address,
      name: w0.options.name,
      nthreads: 1,
    });
    // The worker's own page: what it holds (x, z and the copy of y: inc 2, add 1), and how
    // they got there.
    const workerPage = await fetch(`${urls[0]}/status`);
    expect(workerPage.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const wHtml = await workerPage.text();
    expect(wHtml).toContain(`<title>weft worker ${w0.address} (0)</title>`);
    // prefix, then released, waiting, ready, constrained, executing, long-running, fetch,
    // flight, missing, memory
    expect(wHtml).toMatch(/<tr><td>inc<\/td>(<td>0<\/td>){9}<td>2<\/td>/);
    expect(wHtml).toMatch(/<tr><td>add<\/td>(<td>0<\/td>){9}<td>1<\/td>/);
    expect(wHtml).toContain(`<td>${z.key}</td><td>executing</td><td>memory</td>`);
    expect(wHtml).toContain(`<td>${y.key}</td><td>flight</td><td>memory</td>`);

    await cluster.close();
    for (const url of [schedulerUrl, ...urls]) {
      await expect(fetch(`${url}/health`)).rejects.toThrow();
    }
  });

  it("count the tasks done by erring, as weft status and progress do", async () => {
    const { cluster, client } = await testCluster({ scheduler: { httpAddress: "127.0.0.1:0" } });
    // b errs as its input a did; c is computed.
    const futures = client.compute(
      { a: ["boom", "no"], b: ["inc", "a"], c: ["inc", 1] },
      { keys: ["b", "c"] },
    );
    await expect(futures.b).rejects.toThrow("no");
    expect(await futures.c).toBe(2);
    const s = await scrape(cluster.scheduler.httpUrl as string);
    expect(s.get("weft_scheduler_tasks_done_total")).toBe(3);
    expect(s.get("weft_scheduler_tasks_done_erred_total")).toBe(2);
    expect(s.get("weft_scheduler_tasks_erred_total")).toBe(1);
  });

  it("a closing scheduler's /health says so with 503", async () => {
    const s = await Scheduler.start({ httpAddress: "127.0.0.1:0", logger: silent() });
    const url = s.httpUrl as string;
    const closing = s.close();
    const r = await fetch(`${url}/health`).catch(() => null);
    // Either the answer came while it closed, or it had stopped listening already.
    if (r !== null) expect([r.status, await r.text()]).toEqual([503, "closing\n"]);
    await closing;
  });

  it("the metrics' namespace is an option (Dask's is dask)", async () => {
    const s = await Scheduler.start({
      httpAddress: "127.0.0.1:0",
      metricsNamespace: "dask",
      logger: silent(),
    });
    try {
      const m = await scrape(s.httpUrl as string);
      expect(m.get("dask_scheduler_clients")).toBe(0);
      expect([...m.keys()].some((k) => k.startsWith("weft_"))).toBe(false);
    } finally {
      await s.close();
    }
  });

  it("bad options are refused at once, naming them; no address, no server", async () => {
    expect(() => new Scheduler({ httpAddress: "8787:host" })).toThrow(
      /Scheduler option httpAddress: HTTP address must be \[host\]:port/,
    );
    expect(() => new Scheduler({ metricsNamespace: "my-cluster" })).toThrow(
      /Scheduler option metricsNamespace must be a Prometheus name/,
    );
    expect(() => new Worker({ scheduler: "tcp://127.0.0.1:1", httpAddress: "x" })).toThrow(
      /Worker option httpAddress: HTTP address must be/,
    );
    const s = await Scheduler.start({ logger: silent() });
    expect(s.httpUrl).toBeNull();
    await s.close();
  });

  it("a scheduler whose HTTP address is taken does not start, and frees its own address", async () => {
    const first = await Scheduler.start({ httpAddress: "127.0.0.1:0", logger: silent() });
    try {
      const port = new URL(first.httpUrl as string).port;
      const second = new Scheduler({ httpAddress: `127.0.0.1:${port}`, logger: silent() });
      await expect(second.listen()).rejects.toThrow(
        `cannot serve HTTP at 127.0.0.1:${port}: EADDRINUSE`,
      );
      expect(() => second.address).toThrow(/not listening/);
    } finally {
      await first.close();
    }
  });
});

function silent() {
  return pino({ level: "silent" });
}
