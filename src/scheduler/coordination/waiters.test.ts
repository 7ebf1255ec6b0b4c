import { afterEach, describe, expect, it, vi } from "vitest";
import { replies } from "./testReplies.ts";
import { Waiters } from "./waiters.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("Waiters", () => {
  it("answers in the order of arrival, skipping those timed out", () => {
    vi.useFakeTimers();
    const { sent, reply } = replies();
    const w = new Waiters<null>(reply);
    w.add("a", 1, null, null, () => "t");
    w.add("b", 2, null, 50, () => "late");
    w.add("c", 3, null, null, () => "t");
    expect(w.size).toBe(3);
    vi.advanceTimersByTime(60);
    expect(w.size).toBe(2);
    expect(w.answerFirst("x")).toBe(true);
    expect(w.peek()?.client).toBe("c");
    expect(w.answerFirst("y")).toBe(true);
    expect(w.answerFirst("z")).toBe(false);
    expect(sent).toEqual(['b#2="late"', 'a#1="x"', 'c#3="y"']);
  });

  it("keeps its count and order through many timeouts, the front one waiting on", () => {
    // Two in three time out: enough for the queue to be rebuilt without them.
    vi.useFakeTimers();
    const { sent, reply } = replies();
    const w = new Waiters<null>(reply);
    w.add("first", 0, null, null, () => "t");
    for (let i = 1; i <= 3000; i++) w.add("c", i, null, i % 3 === 0 ? null : 10, () => "t");
    vi.advanceTimersByTime(20);
    expect(w.size).toBe(1001);
    sent.length = 0;
    w.answerAll("ok");
    expect(sent.length).toBe(1001);
    expect(sent.slice(0, 3)).toEqual(['first#0="ok"', 'c#3="ok"', 'c#6="ok"']);
    expect(w.size).toBe(0);
  });

  it("drops a client's waiters, giving back what they asked in order, not those timed out", () => {
    vi.useFakeTimers();
    const { sent, reply } = replies();
    const w = new Waiters<string>(reply);
    w.add("a", 1, "a1", null, () => "t");
    w.add("b", 2, "b1", 10, () => "t");
    w.add("b", 3, "b2", null, () => "t");
    w.add("a", 4, "a2", null, () => "t");
    w.add("b", 5, "b3", 100, () => "t");
    vi.advanceTimersByTime(20);
    expect(w.dropClient("b")).toEqual(["b2", "b3"]);
    expect(w.size).toBe(2);
    vi.advanceTimersByTime(200);
    w.answerAll("ok");
    expect(sent).toEqual(['b#2="t"', 'a#1="ok"', 'a#4="ok"']);
  });
});
