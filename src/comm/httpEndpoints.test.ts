import { connect, createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  HttpEndpoints,
  healthRoute,
  jsonReply,
  metricsRoute,
  parseHttpAddress,
} from "./httpEndpoints.ts";

const started: HttpEndpoints[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function serve(...args: Parameters<typeof HttpEndpoints.start>): Promise<HttpEndpoints> {
  const s = await HttpEndpoints.start(...args);
  started.push(s);
  return s;
}

describe("parseHttpAddress", () => {
  it.each([
    [":8787", { host: "0.0.0.0", port: 8787 }],
    ["8787", { host: "0.0.0.0", port: 8787 }],
    ["127.0.0.1:0", { host: "127.0.0.1", port: 0 }],
    ["localhost:9000", { host: "localhost", port: 9000 }],
    ["http://10.1.2.3:8787", { host: "10.1.2.3", port: 8787 }],
    ["[::1]:8787", { host: "::1", port: 8787 }],
  ])("%s", (given, want) => {
    expect(parseHttpAddress(given)).toEqual(want);
  });

  it.each(["", "host", "host:", "host:port", ":70000", "::1:8787", "tcp://h:1", "a b:1"])(
    "refuses %j, saying what it takes",
    (given) => {
      expect(() => parseHttpAddress(given)).toThrow(/HTTP address must be \[host\]:port/);
    },
  );
});

describe("HttpEndpoints", () => {
  it("answers its routes, lists them at /, and says 404 and 405 otherwise", async () => {
    const s = await serve("127.0.0.1:0", {
      "/health": () => ({ contentType: "text/plain", body: "ok\n" }),
      "/json/x.json": async () => jsonReply({ a: 1 }),
    });
    expect(s.url).toBe(`http://127.0.0.1:${s.port}`);
    const health = await fetch(`${s.url}/health?verbose=1`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("ok\n");
    const json = await fetch(`${s.url}/json/x.json`);
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(await json.json()).toEqual({ a: 1 });
    const root = await fetch(`${s.url}/`);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe("routes:\n/health\n/json/x.json\n");
    const missing = await fetch(`${s.url}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toMatch(/^no route \/nope; routes:/);
    const post = await fetch(`${s.url}/health`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await fetch(`${s.url}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("3");
    expect(await head.text()).toBe("");
  });

  it("a route that throws answers 500 with the error, and is reported", async () => {
    const reported: string[] = [];
    const s = await serve(
      "127.0.0.1:0",
      {
        "/metrics": () => {
          throw new RangeError("no numbers today");
        },
      },
      (path, err) => reported.push(`${path} ${err.message}`),
    );
    const r = await fetch(`${s.url}/metrics`);
    expect(r.status).toBe(500);
    expect(await r.text()).toBe("RangeError: no numbers today\n");
    expect(reported).toEqual(["/metrics no numbers today"]);
  });

  it("takes a request target in absolute form (http://host:port/path), as HTTP/1.1 servers must", async () => {
    const s = await serve("127.0.0.1:0", {
      "/health": () => ({ contentType: "text/plain", body: "ok\n" }),
    });
    const ask = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(s.port, "127.0.0.1", () => {
          socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        });
        let got = "";
        socket.on("data", (d) => {
          got += d;
        });
        socket.on("end", () => resolve(got.split("\r\n")[0] ?? ""));
        socket.on("error", reject);
      });
    expect(await ask(`http://127.0.0.1:${s.port}/health?x=1`)).toBe("HTTP/1.1 200 OK");
    expect(await ask(`HTTP://example.org/health`)).toBe("HTTP/1.1 200 OK");
    expect(await ask("//health")).toBe("HTTP/1.1 404 Not Found");
    expect(await ask("*")).toBe("HTTP/1.1 404 Not Found");
  });

  it("closes a connection that sends no whole request in time, and still serves others", async () => {
    const s = await serve(
      "127.0.0.1:0",
      { "/health": () => ({ contentType: "text/plain", body: "ok\n" }) },
      undefined,
      { requestMs: 300 },
    );
    const closedAfter = (send: string) =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const socket = connect(s.port, "127.0.0.1", () => socket.write(send));
        socket.resume();
        socket.on("close", () => resolve(performance.now() - t0));
        socket.on("error", reject);
      });
    // Silent, and half a request head: both are dropped (the default would keep them a minute).
    const [silent, partial] = await Promise.all([
      closedAfter(""),
      closedAfter("GET /health HTTP/1.1\r\nHost: x\r\n"),
    ]);
    expect(silent).toBeGreaterThanOrEqual(250);
    expect(partial).toBeGreaterThanOrEqual(250);
    expect(Math.max(silent, partial)).toBeLessThan(5_000);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });

  it("closes a connection whose client stops reading the answer, rather than holding it and its buffered body for ever", async () => {
    // Far more than the socket buffers of both ends take: the write stalls.
    const body = "x".repeat(32 * 1024 * 1024);
    const s = await serve(
      "127.0.0.1:0",
      {
        "/big": () => ({ contentType: "text/plain", body }),
        "/health": () => ({ contentType: "text/plain", body: "ok\n" }),
      },
      undefined,
      // One connection at a time: another is served only once the stalled one is dropped.
      { requestMs: 300, maxConnections: 1 },
    );
    // The client reads the answer's first bytes, then nothing until the server has dropped
    // it, then everything it is still sent. Before, it read again after a fixed 1.5 s, which
    // a loaded host's server timer outlasted (12 busy loops: 4 runs in 4 got the whole body).
    let bytes = 0;
    let stalled!: () => void;
    const reading = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const socket = connect(s.port, "127.0.0.1", () =>
      socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"),
    );
    socket.on("data", (chunk: Buffer) => {
      if (bytes === 0) {
        socket.pause();
        stalled();
      }
      bytes += chunk.length;
    });
    const closed = new Promise<number>((resolve) => {
      socket.on("close", () => resolve(bytes));
      socket.on("error", () => resolve(bytes));
    });
    await reading;
    // Another connection's answer: none (closed at once) while the stalled one is held.
    const answer = () =>
      new Promise<string | null>((resolve) => {
        const probe = connect(s.port, "127.0.0.1", () =>
          probe.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        );
        let got = "";
        probe.on("data", (chunk: Buffer) => {
          got += chunk.toString();
        });
        probe.on("close", () => resolve(got === "" ? null : (got.split("\r\n")[0] ?? "")));
        probe.on("error", () => {});
      });
    const t0 = Date.now();
    let served = await answer();
    while (served === null && Date.now() - t0 < 10_000) served = await answer();
    // Dropped while stalled, and others served: what was not yet in the kernel's buffers never came.
    expect(served).toBe("HTTP/1.1 200 OK");
    socket.resume();
    expect(await closed).toBeLessThan(body.length);
  });

  it("holds at most maxConnections connections: a flood of idle ones cannot take every file descriptor of the process", async () => {
    const refused: number[] = [];
    const s = await serve(
      "127.0.0.1:0",
      { "/health": () => ({ contentType: "text/plain", body: "ok\n" }) },
      undefined,
      { requestMs: 5_000, maxConnections: 3, onRefused: (n) => refused.push(n) },
    );
    const sockets = Array.from({ length: 3 }, () => connect(s.port, "127.0.0.1"));
    await Promise.all(sockets.map((socket) => new Promise((ok) => socket.once("connect", ok))));
    // One more is closed at once, not after requestMs.
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const extra = connect(s.port, "127.0.0.1");
      extra.resume();
      extra.on("close", () => resolve(performance.now() - t0));
      extra.on("error", () => {});
      setTimeout(() => reject(new Error("the extra connection was kept")), 4_000).unref();
    });
    expect(closedAfter).toBeLessThan(2_000);
    // The operator hears of it: Node alone drops them without a word.
    expect(refused).toEqual([1]);
    for (const socket of sockets) socket.destroy();
    // The server hears of the closes in its own time.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });

  it("an address in use is refused with a clear error", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(HttpEndpoints.start(`127.0.0.1:${port}`, {})).rejects.toThrow(
        `cannot serve HTTP at 127.0.0.1:${port}: EADDRINUSE`,
      );
    } finally {
      taken.close();
    }
  });

  it("close stops listening, ends open connections, and may be called again", async () => {
    const s = await HttpEndpoints.start("127.0.0.1:0", {
      "/health": () => ({ contentType: "text/plain", body: "ok\n" }),
    });
    expect((await fetch(`${s.url}/health`)).status).toBe(200); // a keep-alive connection stays open
    await s.close();
    await s.close();
    await expect(fetch(`${s.url}/health`)).rejects.toThrow();
  });
});

describe("healthRoute, metricsRoute", () => {
  it("/health is ok while healthy, else 503 with the status", async () => {
    let status = "running";
    const route = healthRoute(
      () => status === "running",
      () => status,
    );
    expect(await route()).toEqual({ contentType: "text/plain; charset=utf-8", body: "ok\n" });
    status = "failed";
    expect(await route()).toEqual({
      status: 503,
      contentType: "text/plain; charset=utf-8",
      body: "failed\n",
    });
  });

  it("/metrics answers what the registry collects, with its content type", async () => {
    const route = metricsRoute({
      contentType: "text/plain; version=0.0.4",
      metrics: async () => "m 1\n",
    });
    expect(await route()).toEqual({ contentType: "text/plain; version=0.0.4", body: "m 1\n" });
  });
});
