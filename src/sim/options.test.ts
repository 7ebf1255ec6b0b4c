/** The limits resolveSimOptions puts on a run's options, at their edges. */

import { expect, test } from "vitest";
import { MAX_SIM_TASKS, resolveSimOptions } from "./options.ts";

test("the most tasks a workload may build is allowed, one more is not", () => {
  // A map of n builds about 2n tasks.
  expect(resolveSimOptions({ seed: 1, workload: "map", tasks: MAX_SIM_TASKS / 2 }).tasks).toBe(
    MAX_SIM_TASKS / 2,
  );
  expect(() =>
    resolveSimOptions({ seed: 1, workload: "map", tasks: MAX_SIM_TASKS / 2 + 1 }),
  ).toThrow(/^tasks: a map workload of 2000001 builds about 4000002 tasks; at most 4000000 /);
});

test("a heartbeat timeout no longer than the interval is refused", () => {
  expect(() => resolveSimOptions({ seed: 1, heartbeatInterval: 1, heartbeatTimeout: 1 })).toThrow(
    "heartbeatTimeout must exceed heartbeatInterval",
  );
  expect(
    resolveSimOptions({ seed: 1, heartbeatInterval: 1, heartbeatTimeout: 1.5 }).heartbeatTimeout,
  ).toBe(1.5);
});

test("a latency above a thirtieth of the stall timeout is refused, even when heartbeats allow it", () => {
  // 0.5 s is at most half of the 2 s heartbeat timeout, but the no-progress window of
  // 10 s would close on messages still in flight.
  expect(() => resolveSimOptions({ seed: 1, latency: 0.5, stallTimeout: 10 })).toThrow(
    /^latency must be at most stallTimeout \/ 30 \(0\.333\d* s\), got 0\.5: /,
  );
  expect(resolveSimOptions({ seed: 1, latency: 0.5, stallTimeout: 15 }).latency).toBe(0.5);
});
