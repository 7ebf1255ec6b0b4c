/**
 * A benchmark stream of one task for the tests of the state machine benchmarks: the
 * format of ../shared/bench/README.md, a task computed and finished (1 Execute and 1
 * TaskFinishedMsg, 4 transitions, 1 task held).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { eventToDict } from "../protocol/daskJson/events.ts";
import { ComputeTaskEvent } from "../worker/state/events.ts";

/** The final line the one-task stream ends with. */
export const ONE_TASK_FINAL = { events: 2, instructions: 2, transition_counter: 4, tasks: 1 };

const config = {
  nthreads: 1,
  address: "127.0.0.1:1",
  resources: {},
  transfer_incoming_count_limit: 9999,
  transfer_incoming_bytes_limit: null,
  transfer_message_bytes_limit: null,
  transfer_incoming_bytes_throttle_threshold: 10000000,
  validate: false,
  transition_counter_max: false,
};

/** Write `dir/<name>.jsonl.gz`: the one-task stream, ending with the final line `final`. */
export function writeOneTaskStream(
  dir: string,
  name: string,
  final: Record<string, number> = ONE_TASK_FINAL,
): void {
  const compute = eventToDict(
    ComputeTaskEvent.dummy("x-1", { stimulusId: "c1", runId: 1, priority: [0, 1] }),
  );
  const done = {
    cls: "ExecuteSuccessEvent",
    stimulus_id: "e1",
    key: "x-1",
    run_id: 1,
    value: 1,
    start: 0.0,
    stop: 1.0,
    nbytes: 28,
    type: "int",
  };
  const lines = [{ name, config, format_version: 2 }, compute, done, { final }];
  writeFileSync(
    join(dir, `${name}.jsonl.gz`),
    gzipSync(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`),
  );
}
