/**
 * Property test: the task stream's query, which reads from the newest run back
 * and skips chunks that ended before `since`, answers what a filter over every
 * run kept answers (the implementation before it), whatever the order of the
 * runs' ends, the length kept and the queries.
 */

import fc from "fast-check";
import { expect, test } from "vitest";
import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import { TaskStream, type TaskStreamQuery } from "./taskStream.ts";

/** The query as it was: every run kept copied, filtered, then the last `count`. */
function filterAll(kept: readonly TaskStreamRecord[], q: TaskStreamQuery): TaskStreamRecord[] {
  const lastStop = (r: TaskStreamRecord) =>
    r.startstops.reduce((stop, ss) => Math.max(ss.stop, stop), 0);
  let out = [...kept];
  if (q.since !== undefined) out = out.filter((r) => lastStop(r) >= (q.since as number));
  return q.count === undefined ? out : out.slice(Math.max(0, out.length - q.count));
}

const time = fc.integer({ min: 0, max: 60 });
const report = fc.record({
  erred: fc.boolean(),
  // Ends in any order, as workers' clocks and queues give them; none, or several.
  stops: fc.array(fc.tuple(time, fc.integer({ min: 0, max: 5 })), { maxLength: 3 }),
});
const query = fc.record(
  { since: fc.oneof(time, fc.constant(Number.NaN)), count: fc.nat({ max: 700 }) },
  { requiredKeys: [] },
);
const step = fc.oneof(
  { weight: 5, arbitrary: report.map((r) => ({ report: r })) },
  { weight: 1, arbitrary: query.map((q) => ({ query: q })) },
  // Enough runs at once to fill and forget chunks, ending near one time: a
  // chunk that all ended before a query's window, between ones that did not.
  {
    weight: 1,
    arbitrary: fc.tuple(fc.nat({ max: 600 }), time).map(([n, at]) => ({ burst: n, at })),
  },
);

test("the query answers what filtering every run kept answers", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.nat({ max: 5 }), fc.nat({ max: 1_200 })),
      fc.array(step, { maxLength: 60 }),
      (length, steps) => {
        const stream = new TaskStream(length);
        let n = 0;
        // The last `length` runs reported, as the stream records them.
        const kept: TaskStreamRecord[] = [];
        const send = (erred: boolean, stops: readonly (readonly [number, number])[]) => {
          const record: TaskStreamRecord = {
            key: `k-${n}`,
            worker: `w${n % 3}`,
            status: erred ? "error" : "OK",
            startstops: stops.map(([stop, d]) => ({ action: "compute", start: stop - d, stop })),
            nbytes: erred ? null : 8,
          };
          n++;
          stream.observe(record.worker, {
            op: erred ? "task-erred" : "task-finished",
            key: record.key,
            startstops: record.startstops,
            nbytes: record.nbytes ?? undefined,
          });
          kept.push(record);
          if (kept.length > length) kept.shift();
        };
        for (const s of steps) {
          if ("report" in s) send(s.report.erred, s.report.stops);
          else if ("burst" in s)
            for (let i = 0; i < s.burst; i++) send(false, [[s.at + (i % 3), 1]]);
          else {
            expect(stream.query()).toEqual(kept);
            expect(stream.query(s.query)).toEqual(filterAll(kept, s.query));
          }
        }
      },
    ),
    { numRuns: Number(process.env.WEFT_PROPERTY_RUNS ?? 300) },
  );
});
