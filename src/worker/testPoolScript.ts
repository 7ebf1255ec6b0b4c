/**
 * A script for the executor tests: starts a piscina executor with the test task
 * module, runs `inc(41)` on a pool thread (or the task and JSON arguments given:
 * `testPoolScript.ts FN ARGS`), closes the executor as soon as the outcome
 * comes, and prints the outcome as JSON. Run it under `tsx` or `node --import
 * tsx` to check that pool threads load TypeScript however the main thread was
 * started.
 */

import { PiscinaExecutor } from "./piscinaExecutor.ts";
import { TEST_TASKS } from "./testWorker.ts";

const executor = await PiscinaExecutor.start({ nthreads: 1, taskModules: [TEST_TASKS] });
const [fn = "inc", args = "[41]"] = process.argv.slice(2);
const outcome = await executor.run(
  { key: "k", fn, args: JSON.parse(args) },
  {
    secede: () => {},
    rejoin: async () => {},
    client: () => Promise.reject(new Error("no client")),
  },
  new AbortController().signal,
);
await executor.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
