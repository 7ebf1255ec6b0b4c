import { createServer, type Server } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { TEST_WORKER_ARGS, testContext } from "../testContext.ts";
import { listenFailureMessage } from "./listenFailure.ts";
import { schedulerRefusal } from "./testSchedulerRefusal.ts";
import { runWorker } from "./workerAction.ts";

/** A port taken on 127.0.0.1 for the tests' time. */
let taken: Server;
let takenPort: number;
let scheduler: Scheduler;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  takenPort = (taken.address() as { port: number }).port;
  scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
});
afterAll(async () => {
  await scheduler.close();
  await new Promise((resolve) => taken.close(resolve));
});

/** What `weft worker` with `more` said as it refused to start (exit 2). */
async function workerRefusal(more: Partial<Parameters<typeof runWorker>[1]>) {
  const ctx = testContext();
  await runWorker(scheduler.address, { ...TEST_WORKER_ARGS, ...more }, ctx, (w) => w.close());
  expect(ctx.exitCode, ctx.stderr.text).toBe(2);
  return ctx.stderr.text;
}

// Each said Node's words alone: `getaddrinfo ENOTFOUND no-such-host.invalid`,
// `listen EADDRINUSE: …`, `cannot serve HTTP at …: ENOTFOUND`, naming no flag.
describe("a place weft scheduler cannot listen at", () => {
  it("names --listen and the address whose host does not resolve", async () => {
    expect(await schedulerRefusal({ listen: "tcp://no-such-host.invalid:0" })).toMatch(
      /^weft scheduler: cannot start: --listen tcp:\/\/no-such-host\.invalid:0: cannot resolve the host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
  });

  it("names --listen and the address in use", async () => {
    const listen = `tcp://127.0.0.1:${takenPort}`;
    expect(await schedulerRefusal({ listen })).toBe(
      `weft scheduler: cannot start: --listen ${listen}: the address is in use (EADDRINUSE)\n`,
    );
  });

  it("names --http-address and its address", async () => {
    expect(await schedulerRefusal({ httpAddress: "no-such-host.invalid:0" })).toMatch(
      /^weft scheduler: cannot start: --http-address no-such-host\.invalid:0: cannot resolve the host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
    expect(await schedulerRefusal({ httpAddress: `127.0.0.1:${takenPort}` })).toBe(
      `weft scheduler: cannot start: --http-address 127.0.0.1:${takenPort}: the address is in use (EADDRINUSE)\n`,
    );
  });
});

describe("a place weft worker cannot listen at", () => {
  it("names --listen or --http-address and the address", async () => {
    expect(await workerRefusal({ listen: "tcp://no-such-host.invalid:0" })).toMatch(
      /^weft worker: cannot start: --listen tcp:\/\/no-such-host\.invalid:0: cannot resolve the host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
    expect(await workerRefusal({ listen: `tcp://127.0.0.1:${takenPort}` })).toBe(
      `weft worker: cannot start: --listen tcp://127.0.0.1:${takenPort}: the address is in use (EADDRINUSE)\n`,
    );
    expect(await workerRefusal({ httpAddress: "no-such-host.invalid:0" })).toMatch(
      /^weft worker: cannot start: --http-address no-such-host\.invalid:0: cannot resolve the host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
  });

  it("leaves a scheduler's host that does not resolve to the connection's own words", async () => {
    const ctx = testContext();
    await runWorker(
      "tcp://no-such-host.invalid:8786",
      { ...TEST_WORKER_ARGS, deathTimeout: "300" },
      ctx,
      (w) => w.close(),
    );
    // However the start ends (the lookup failing, or the death timeout first), the
    // scheduler's address is its own, not --listen's.
    expect(ctx.exitCode).toBe(2);
    expect(ctx.stderr.text).toMatch(/^weft worker: cannot start: /);
    expect(ctx.stderr.text).not.toContain("--listen");
  });
});

describe("an address of an unknown scheme", () => {
  // The scheduler's was the comm's "unknown address scheme "udp" in …", naming no flag.
  it("is refused naming --listen, by weft scheduler and weft worker alike", async () => {
    const said =
      '--listen udp://127.0.0.1:1: unknown address scheme "udp": expected one of inproc, tcp, tls\n';
    expect(await schedulerRefusal({ listen: "udp://127.0.0.1:1" })).toBe(
      `weft scheduler: cannot start: ${said}`,
    );
    expect(await workerRefusal({ listen: "udp://127.0.0.1:1" })).toBe(
      `weft worker: cannot start: ${said}`,
    );
  });
});

describe("the default address, in use", () => {
  const inUse = Object.assign(new Error("listen EADDRINUSE: address already in use 0.0.0.0:8786"), {
    code: "EADDRINUSE",
    syscall: "listen",
  });

  // It was "--listen tcp://0.0.0.0:8786: the address is in use", of a --listen not typed.
  it("is said to be the default, and --listen the way to another", () => {
    expect(
      listenFailureMessage(inUse, { listen: "tcp://0.0.0.0:8786", listenIsDefault: true }),
    ).toBe(
      "the default address tcp://0.0.0.0:8786 (no --listen given): the address is in use (EADDRINUSE): --listen chooses another",
    );
    expect(listenFailureMessage(inUse, { listen: "tcp://0.0.0.0:8786" })).toBe(
      "--listen tcp://0.0.0.0:8786: the address is in use (EADDRINUSE)",
    );
  });
});
