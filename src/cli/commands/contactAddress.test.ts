import { connect, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { parseHostPort, splitScheme } from "../../util/address.ts";
import { workerAddresses } from "./contactAddress.ts";

/** Whether a server listening at `listen` accepts a connection to `contact`. */
async function reachable(listen: string, contact: string): Promise<boolean> {
  const at = parseHostPort(splitScheme(listen).location);
  const to = parseHostPort(splitScheme(contact).location);
  const server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen({ host: at.host, port: at.port }, r));
  try {
    return await new Promise<boolean>((resolve) => {
      const socket = connect({ host: to.host, port: to.port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe("workerAddresses", () => {
  it("keeps a concrete listening address, advertised as it is", async () => {
    expect(await workerAddresses("tcp://127.0.0.1:4000", "tcp://127.0.0.1:8786")).toEqual({
      listen: "tcp://127.0.0.1:4000",
      contact: null,
    });
  });

  it("on every interface, advertises the route to an IPv4 scheduler", async () => {
    const a = await workerAddresses("tcp://0.0.0.0:0", "tcp://127.0.0.1:8786");
    expect(a.listen).toMatch(/^tcp:\/\/0\.0\.0\.0:\d+$/);
    expect(a.contact).toBe(`tcp://127.0.0.1:${a.listen.split(":").at(-1)}`);
    expect(await reachable(a.listen, a.contact as string)).toBe(true);
  });

  it("toward a scheduler whose name does not resolve (yet), leaves the contact address to the Worker, never 0.0.0.0", async () => {
    const a = await workerAddresses("tcp://0.0.0.0:0", "tcp://no-such-host.invalid:8786");
    expect(a).toEqual({ listen: "tcp://0.0.0.0:0", contact: null });
  });

  it("keeps the tls:// scheme of a worker listening on every interface", async () => {
    const a = await workerAddresses("tls://0.0.0.0:0", "tls://127.0.0.1:8786");
    expect(a.listen).toMatch(/^tls:\/\/0\.0\.0\.0:\d+$/);
    expect(a.contact).toBe(`tls://127.0.0.1:${a.listen.split(":").at(-1)}`);
  });

  it("on every interface, listens on IPv6 too when the scheduler is reached over IPv6", async () => {
    // The default --listen tcp://0.0.0.0:0 with the scheduler at [::1]: the worker
    // advertised [::1] but listened on IPv4 only, and the scheduler refused it.
    const a = await workerAddresses("tcp://0.0.0.0:0", "tcp://[::1]:8786");
    expect(a.contact).toMatch(/^tcp:\/\/\[::1\]:\d+$/);
    expect(await reachable(a.listen, a.contact as string)).toBe(true);
  });

  it("leaves a scheduler address of another scheme to the connection, which names the problem", async () => {
    expect(await workerAddresses("tcp://0.0.0.0:0", "foo://x")).toEqual({
      listen: "tcp://0.0.0.0:0",
      contact: null,
    });
    // Not one to wait --connect-timeout for: it cannot exist in this process.
    await expect(workerAddresses("tcp://0.0.0.0:0", "inproc://x/1")).rejects.toThrow(
      /inproc:\/\/ scheduler lives in another process's memory; give its tcp:\/\/host:port/,
    );
  });
});

describe("workerAddresses, more", () => {
  it("keeps a port asked for on every interface, and advertises it", async () => {
    expect(await workerAddresses("tcp://0.0.0.0:4321", "tcp://127.0.0.1:8786")).toEqual({
      listen: "tcp://0.0.0.0:4321",
      contact: "tcp://127.0.0.1:4321",
    });
  });

  it("takes [::] for every interface too", async () => {
    expect(await workerAddresses("tcp://[::]:4322", "tcp://127.0.0.1:8786")).toEqual({
      listen: "tcp://[::]:4322",
      contact: "tcp://127.0.0.1:4322",
    });
  });
});
