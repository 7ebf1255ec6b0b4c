import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Queues } from "./queues.ts";
import { Semaphores } from "./semaphores.ts";
import { replies } from "./testReplies.ts";
import { DEFERRED } from "./waiters.ts";

const CLIENTS = ["a", "b", "c"];

type SemaphoreOp =
  | { kind: "acquire"; client: string; wait: boolean }
  | { kind: "release"; pick: number }
  | { kind: "leave"; client: string };

const semaphoreOp: fc.Arbitrary<SemaphoreOp> = fc.oneof(
  fc.record({
    kind: fc.constant("acquire" as const),
    client: fc.constantFrom(...CLIENTS),
    wait: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("release" as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant("leave" as const), client: fc.constantFrom(...CLIENTS) }),
);

describe("Semaphores against a model", () => {
  it("never holds more than maxLeases, and grants waiters first come first served", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.array(semaphoreOp, { maxLength: 60 }),
        (max, ops) => {
          const { sent, reply } = replies();
          const s = new Semaphores(reply);
          // The model: leases held (lease → client), requests waiting in order.
          const held = new Map<string, string>();
          const waiting: { client: string; id: number; lease: string }[] = [];
          const expected: string[] = [];
          const grant = () => {
            while (held.size < max && waiting.length > 0) {
              const w = waiting.shift() as (typeof waiting)[number];
              held.set(w.lease, w.client);
              expected.push(`${w.client}#${w.id}=true`);
            }
          };
          let n = 0;
          for (const op of ops) {
            if (op.kind === "acquire") {
              const id = ++n;
              const lease = `l${id}`;
              const r = s.acquire(op.client, id, "S", max, lease, op.wait ? null : 0);
              if (held.size < max && waiting.length === 0) {
                expect(r).toBe(true);
                held.set(lease, op.client);
              } else if (!op.wait) {
                expect(r).toBe(false);
              } else {
                expect(r).toBe(DEFERRED);
                waiting.push({ client: op.client, id, lease });
              }
            } else if (op.kind === "release") {
              const leases = [...held.keys()];
              if (leases.length === 0) {
                expect(() => s.release("S", "nope")).toThrow(/is not held/);
                continue;
              }
              const lease = leases[op.pick % leases.length];
              s.release("S", lease);
              held.delete(lease);
              grant();
            } else {
              s.clientLeft(op.client);
              for (const [lease, c] of [...held]) if (c === op.client) held.delete(lease);
              for (let i = waiting.length - 1; i >= 0; i--) {
                if (waiting[i].client === op.client) waiting.splice(i, 1);
              }
              grant();
            }
            expect(s.leases("S")).toBe(held.size);
            expect(s.leases("S")).toBeLessThanOrEqual(max);
            expect(sent).toEqual(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

type QueueOp =
  | { kind: "put"; client: string; wait: boolean }
  | { kind: "get"; client: string; wait: boolean }
  | { kind: "batch"; n: number | null }
  | { kind: "leave"; client: string };

const queueOp: fc.Arbitrary<QueueOp> = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    client: fc.constantFrom(...CLIENTS),
    wait: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("get" as const),
    client: fc.constantFrom(...CLIENTS),
    wait: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("batch" as const), n: fc.option(fc.nat(3)) }),
  fc.record({ kind: fc.constant("leave" as const), client: fc.constantFrom(...CLIENTS) }),
);

describe("Queues against a model", () => {
  it("first in, first out, never beyond maxsize; waiting puts and gets served in order", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.array(queueOp, { maxLength: 60 }),
        (max, ops) => {
          const { sent, reply } = replies();
          const q = new Queues(reply);
          const items: number[] = [];
          const getters: { client: string; id: number }[] = [];
          const putters: { client: string; id: number; value: number }[] = [];
          const expected: string[] = [];
          const room = () => max === 0 || items.length < max;
          const admit = () => {
            while (putters.length > 0 && room()) {
              const p = putters.shift() as (typeof putters)[number];
              items.push(p.value);
              expected.push(`${p.client}#${p.id}=${JSON.stringify({ ok: true })}`);
            }
          };
          let n = 0;
          for (const op of ops) {
            const id = ++n;
            if (op.kind === "put") {
              const r = q.put(op.client, id, "Q", max, id, null, op.wait ? null : 0);
              if (getters.length > 0) {
                const g = getters.shift() as (typeof getters)[number];
                expected.push(`${g.client}#${g.id}=${JSON.stringify({ value: id })}`);
                expect(r).toEqual({ ok: true });
              } else if (room()) {
                items.push(id);
                expect(r).toEqual({ ok: true });
              } else if (!op.wait) {
                expect(r).toEqual({ timedOut: true });
              } else {
                expect(r).toBe(DEFERRED);
                putters.push({ client: op.client, id, value: id });
              }
            } else if (op.kind === "get") {
              const r = q.get(op.client, id, "Q", max, op.wait ? null : 0);
              if (items.length > 0) {
                expect(r).toEqual({ value: items.shift() });
                admit();
              } else if (!op.wait) {
                expect(r).toEqual({ timedOut: true });
              } else {
                expect(r).toBe(DEFERRED);
                getters.push({ client: op.client, id });
              }
            } else if (op.kind === "batch") {
              const got = q.getBatch("c", "Q", max, op.n);
              expect(got).toEqual(items.splice(0, op.n ?? items.length));
              admit();
            } else {
              q.clientLeft(op.client);
              for (const list of [getters, putters] as { client: string }[][]) {
                for (let i = list.length - 1; i >= 0; i--) {
                  if (list[i].client === op.client) list.splice(i, 1);
                }
              }
            }
            expect(q.size("Q")).toBe(items.length);
            if (max > 0) expect(q.size("Q")).toBeLessThanOrEqual(max);
            expect(sent).toEqual(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("an item goes past a waiting get whose client cannot be answered any more", () => {
    // The connection of a is gone, and the scheduler has not handled its leaving yet.
    const { sent, reply } = replies(new Set(["a"]));
    const q = new Queues(reply);
    expect(q.get("a", 1, "Q", 0, null)).toBe(DEFERRED);
    expect(q.get("b", 2, "Q", 0, null)).toBe(DEFERRED);
    expect(q.put("c", 3, "Q", 0, "x", null, null)).toEqual({ ok: true });
    expect(sent).toEqual(['b#2={"value":"x"}']);
    // With nobody left to answer, the next item stays in the queue rather than being lost.
    expect(q.get("a", 4, "Q", 0, null)).toBe(DEFERRED);
    expect(q.put("c", 5, "Q", 0, "y", null, null)).toEqual({ ok: true });
    expect(q.size("Q")).toBe(1);
    expect(q.get("b", 6, "Q", 0, null)).toEqual({ value: "y" });
  });
});
