import { describe, expect, it } from "vitest";
import type { HttpReply } from "./httpEndpoints.ts";
import { throttledRoute } from "./throttledRoute.ts";

/** A route that takes `costMs` of the fake clock to answer, numbering its answers. */
function costlyRoute(costMs: number) {
  const clock = { t: 1_000 };
  let made = 0;
  const route = () => {
    clock.t += costMs;
    made++;
    return { contentType: "text/plain", body: `answer ${made}` };
  };
  return { clock, route, made: () => made };
}

const body = async (r: HttpReply | Promise<HttpReply>) => Buffer.from((await r).body).toString();

describe("throttledRoute", () => {
  it("gives a costly answer again until nine times its cost has passed (a tenth of the time)", async () => {
    const { clock, route, made } = costlyRoute(50);
    const throttled = throttledRoute(route, { now: () => clock.t });
    expect(await body(throttled())).toBe("answer 1");
    clock.t += 449;
    expect(await body(throttled())).toBe("answer 1");
    expect(made()).toBe(1);
    clock.t += 1;
    expect(await body(throttled())).toBe("answer 2");
    expect(made()).toBe(2);
  });

  it("one slow draw does not hold the page for nine times its length", async () => {
    const clock = { t: 1_000 };
    const costs = [10, 1_000, 10];
    let made = 0;
    const throttled = throttledRoute(
      () => {
        clock.t += costs[made++] ?? 10;
        return { contentType: "text/plain", body: `answer ${made}` };
      },
      { now: () => clock.t },
    );
    expect(await body(throttled())).toBe("answer 1");
    clock.t += 90;
    // A draw held up for a second (a GC pause, say): given again for 9 × 10 ms, not 9 s.
    expect(await body(throttled())).toBe("answer 2");
    clock.t += 90;
    expect(await body(throttled())).toBe("answer 3");
    expect(made).toBe(3);
  });

  it("answers a hammering client at most a share of the time", async () => {
    const { clock, route, made } = costlyRoute(20);
    const throttled = throttledRoute(route, { share: 0.25, now: () => clock.t });
    const start = clock.t;
    // A request every millisecond of the clock for ten seconds.
    for (let i = 0; i < 10_000; i++) {
      await throttled();
      clock.t += 1;
    }
    const busy = made() * 20;
    expect(busy / (clock.t - start)).toBeLessThanOrEqual(0.25 + 0.01);
    expect(made()).toBeGreaterThan(10);
  });

  it("a cheap answer is as good as live", async () => {
    const { clock, route, made } = costlyRoute(0);
    const throttled = throttledRoute(route, { now: () => clock.t });
    await throttled();
    await throttled();
    expect(made()).toBe(2);
  });

  it("requests that come while an answer is being made share it", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let made = 0;
    const throttled = throttledRoute(async () => {
      made++;
      await gate;
      return { contentType: "text/plain", body: "slow" };
    });
    const asked = [throttled(), throttled(), throttled()];
    release();
    expect(await Promise.all(asked.map(body))).toEqual(["slow", "slow", "slow"]);
    expect(made).toBe(1);
  });

  it("a route that throws is not remembered: the next request asks again", async () => {
    let calls = 0;
    const throttled = throttledRoute(() => {
      calls++;
      if (calls === 1) throw new Error("first fails");
      return { contentType: "text/plain", body: "second" };
    });
    await expect(throttled()).rejects.toThrow("first fails");
    expect(await body(throttled())).toBe("second");
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses share %s", (share) => {
    expect(() => throttledRoute(() => ({ contentType: "x", body: "" }), { share })).toThrow(
      /share must be in \(0, 1\]/,
    );
  });
});
