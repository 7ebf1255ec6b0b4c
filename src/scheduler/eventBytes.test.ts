import { afterEach, expect, it, vi } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import { wireVersion } from "../protocol/version.ts";
import type { Scheduler } from "./scheduler.ts";
import { rawPeer, startTestScheduler } from "./testPeer.ts";

/** The values structured-cloned for sending, counted by their `marker`. */
const serialized = vi.hoisted(() => new Map<string, number>());
vi.mock("../comm/clonedBytes.ts", async (original) => {
  const actual = await original<typeof import("../comm/clonedBytes.ts")>();
  return {
    ...actual,
    clonedBytes(value: unknown) {
      const marker = (value as { marker?: unknown } | null)?.marker;
      if (typeof marker === "string") serialized.set(marker, (serialized.get(marker) ?? 0) + 1);
      return actual.clonedBytes(value);
    },
  };
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

it("structured-clones a logged event once for every get-events answer and subscriber sending it", async () => {
  const s: Scheduler = await startTestScheduler("tcp://127.0.0.1:0", (x) => open.push(x));
  const peer = async (clientId: string) =>
    rawPeer(s.address, { op: "register-client", clientId, ...wireVersion() }, (x) => open.push(x));
  const logger = await peer("logger");
  const poller = await peer("poller");
  await poller.comm.send([{ op: "subscribe-topic", requestId: 1, topic: "metrics" }]);
  await poller.waitFor((m) => m.requestId === 1);
  const event = { marker: "event-1", loss: 0.5 };
  await logger.comm.send([
    { op: "log-event", requestId: 1, topics: ["metrics"], msg: new ClonedValue(event) },
  ]);
  await logger.waitFor((m) => m.requestId === 1);
  for (const requestId of [2, 3, 4]) {
    await poller.comm.send([{ op: "get-events", requestId, topic: "metrics" }]);
    const answer = await poller.waitFor((m) => m.requestId === requestId);
    const [[, msg]] = answer.result as [number, ClonedValue][];
    expect(msg).toBeInstanceOf(ClonedValue);
    expect(msg?.value).toEqual(event);
  }
  // The client's own encoding, then the scheduler's: once (before, once more an answer).
  expect(serialized.get("event-1")).toBe(2);
});
