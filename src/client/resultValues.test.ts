/**
 * Task results are data on every path: with the inline executor (kept by
 * reference) as with the thread pool (cloned between threads), in process as
 * over TCP, a result that is not data (a class instance, which a clone would
 * make a plain object without its methods, or `{}`) fails its task with the
 * same error, and data comes back the same.
 */

import { afterEach, describe, expect, it } from "vitest";
import { RemoteTaskError } from "./errors.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";
import {
  asyncVec,
  dataResult,
  makeVec,
  nestedVec,
  oddError,
  urlResult,
  VALUE_TEST_TASKS,
  vecsInMap,
  withCallback,
} from "./valueTestTasks.ts";

afterEach(closeTestClusters);

describe("task results that are not data", () => {
  for (const executor of ["inline", "threads"] as const) {
    for (const protocol of ["inproc", "tcp"] as const) {
      it(`fail their task with the value's place, the same way (${executor}, ${protocol})`, async () => {
        const { client } = await testCluster({
          executor,
          protocol,
          workers: 1,
          taskModules: [CLIENT_TEST_TASKS, VALUE_TEST_TASKS],
        });
        const cases = [
          [client.submit(makeVec, 3, 4), /result is a Vec \(an instance of a class: /],
          [client.submit(asyncVec), /result is a Vec /],
          [client.submit(nestedVec), /result\.rows\[1\]\.v is a Vec /],
          [client.submit(vecsInMap), /result <value 0> is a Vec /],
          [client.submit(urlResult), /result is a URL /],
          [client.submit(withCallback), /result\.f is a function; /],
        ] as const;
        for (const [future, where] of cases) {
          const err = await future.catch((e: unknown) => e);
          expect(err, future.key).toBeInstanceOf(RemoteTaskError);
          expect((err as RemoteTaskError).remoteName, future.key).toBe("DataCloneError");
          expect((err as Error).message, future.key).toMatch(
            new RegExp(`result of task ${future.key} cannot be cloned: `),
          );
          expect((err as Error).message, future.key).toMatch(where);
          expect((err as Error).message, future.key).toMatch(/task results must be data \(/);
        }
        // Data comes back as it was, on every path.
        expect(await client.submit(dataResult)).toEqual(dataResult.fn());
        expect(await client.submit(inc, 1)).toBe(2);
      });
    }
  }
});

describe("an error result whose message is not a string", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`comes back from the inline executor (${protocol})`, async () => {
      // Its size was NaN, which the scheduler refused in the worker's report of
      // the task's end: the task stayed processing, and the client waited forever.
      const { client } = await testCluster({
        executor: "inline",
        protocol,
        workers: 1,
        taskModules: [CLIENT_TEST_TASKS, VALUE_TEST_TASKS],
      });
      expect(await client.submit(oddError)).toBeInstanceOf(Error);
    });
  }
});
