/**
 * Task functions for the worker tests (a task module: imported by every pool
 * thread and, for the inline executor, by the main thread).
 */

import { appendFileSync, createWriteStream } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { getHeapStatistics } from "node:v8";
import { BroadcastChannel, threadId } from "node:worker_threads";
import { Reschedule, rejoin, secede } from "./taskContext.ts";
import { defineTask } from "./taskRegistry.ts";

/** An error class of the task module's own. */
class ValueError extends Error {
  override name = "ValueError";
}

defineTask("inc", (x: number) => x + 1);
defineTask("add", (...xs: number[]) => xs.reduce((a, b) => a + b, 0));
defineTask("identity", (x: unknown) => x);
defineTask("boom", (message: string) => {
  throw new ValueError(message);
});
defineTask("boomAfterAwait", async (message: string) => {
  await sleep(1);
  throw new ValueError(message);
});
/** Rejects with an error of no frames: none of the task's own. */
defineTask("frameless", async () => {
  const err = new Error("frameless");
  err.stack = "Error: frameless";
  throw err;
});
defineTask("uncloneable", () => ({ callback: () => 1 }));
/** Data when checked, a function when cloned (its getter's second read): only the clone fails. */
defineTask("fickle", () => {
  let reads = 0;
  return {
    get x(): unknown {
      return reads++ === 0 ? 1 : () => 1;
    },
  };
});
defineTask("sleep", async (ms: number, value: unknown) => {
  await sleep(ms);
  return value;
});
defineTask("threadId", () => threadId);
/** Leaves a timer that throws outside any task: on a pool thread, it ends the thread. */
defineTask("throwLater", (ms: number) => {
  setTimeout(() => {
    throw new Error("uncaught in a timer");
  }, ms);
  return "returned";
});
/** Returns at once, leaving a timer that appends `text` to `file` after `ms`. */
defineTask("appendLater", (file: string, text: string, ms: number) => {
  setTimeout(() => appendFileSync(file, text), ms);
  return "returned";
});
/** Returns as soon as it has written `text` to `file` through a stream: the write is still on its way. */
defineTask("appendThroughStream", (file: string, text: string) => {
  createWriteStream(file, { flags: "a" }).end(text);
  return "returned";
});
/** Writes `n` numbered lines to the thread's stdout with `console.log`, and returns `n`. */
defineTask("logLines", (n: number) => {
  for (let i = 0; i < n; i++) console.log(`line ${i}`);
  return n;
});
defineTask("reschedule", () => {
  throw new Reschedule();
});
defineTask("makeMap", (n: number) => new Map(Array.from({ length: n }, (_, i) => [`k${i}`, i])));

/** Secede, wait for a message on the BroadcastChannel `name`, rejoin; returns when it rejoined (ms). */
defineTask("secedeAndWait", async (name: string) => {
  const channel = new BroadcastChannel(name);
  const got = new Promise<unknown>((resolve) => {
    channel.onmessage = (ev: unknown) => resolve((ev as { data: unknown }).data);
  });
  secede();
  const message = await got;
  channel.close();
  await rejoin();
  return { message, rejoinedAt: Date.now() };
});

/** A synchronous task that secedes and returns at once (its secession is reported as it ends). */
defineTask("secedeThenReturn", (x: number) => {
  secede();
  return x * 10;
});

/** Post `message` on the BroadcastChannel `name`, then stay busy `ms`; returns when it ended (ms). */
defineTask("signal", (name: string, message: unknown, ms: number) => {
  const channel = new BroadcastChannel(name);
  channel.postMessage(message);
  channel.close();
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // keep the thread slot
  }
  return Date.now();
});

/**
 * Meets another task on `channel`: resolves `met: true` once a task on another thread
 * has answered, or `met: false` after `timeoutMs` (the two never ran at the same time).
 */
defineTask("meet", (channel: string, timeoutMs: number) => {
  const bc = new BroadcastChannel(channel);
  return new Promise<{ threadId: number; met: boolean }>((resolve) => {
    const timer = setTimeout(() => {
      bc.close();
      resolve({ threadId, met: false });
    }, timeoutMs);
    bc.onmessage = (ev: MessageEvent) => {
      if (ev.data === threadId) return;
      clearTimeout(timer);
      bc.postMessage(threadId);
      bc.close();
      resolve({ threadId, met: true });
    };
    bc.postMessage(threadId);
  });
});

/** Stay busy `ms`; returns when it started and ended (ms) and on which thread. */
defineTask("busySpan", (ms: number) => {
  const start = Date.now();
  while (Date.now() < start + ms) {
    // keep the thread
  }
  return { start, end: Date.now(), threadId };
});

// Garbage: a million small objects let go of at once, and the thread's heap in use.
defineTask("makeGarbage", () => Array.from({ length: 1_000_000 }, (_, i) => ({ i })).length);
defineTask("heapUsed", () => getHeapStatistics().used_heap_size);

/** The byte length of the buffer behind each typed array of `arrays`, as the task sees them. */
defineTask("bufferLengths", (arrays: Record<string, ArrayBufferView>) =>
  Object.fromEntries(Object.entries(arrays).map(([k, a]) => [k, a.buffer.byteLength])),
);
