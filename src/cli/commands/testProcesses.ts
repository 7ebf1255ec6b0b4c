/**
 * Tests' view of the processes they start: whether one still runs, and its id
 * once the process itself has written it to a file.
 */

import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * `pid` itself, refused unless a positive integer: `process.kill(0, 0)` asks about
 * the caller's own process group (and a negative id about another group), which
 * answers "alive" for as long as the test runs.
 */
function processId(pid: number): number {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RangeError(`not a process id: ${pid} (0 and below name process groups)`);
  }
  return pid;
}

/** Whether the process `pid` still exists (a zombie does). */
export function alive(pid: number): boolean {
  try {
    process.kill(processId(pid), 0);
    return true;
  } catch (err) {
    if (err instanceof RangeError) throw err;
    return false;
  }
}

/**
 * Whether the process `pid` still runs, not a zombie: a worker whose nanny died is
 * reaped by whichever process adopted it, maybe never (a container's first process).
 */
export function running(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc (not Linux): as alive says
  }
}

/**
 * The process id on the first line of `file`, once a process has written that
 * line whole, newline included (within `ms`). The file exists from the moment its
 * writer opens it, empty until the write: a test that read it as soon as it
 * existed could read "" (`Number("")` is 0, the test's own process group, alive
 * for good) when the writer was preempted between the two, as on a loaded host.
 */
export async function writtenPid(file: string, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // not there yet
    }
    const line = /^([1-9]\d*)\n/.exec(text);
    if (line !== null) return Number(line[1]);
    if (Date.now() - t0 > ms) throw new Error(`${what} not written to ${file} within ${ms} ms`);
    await sleep(5);
  }
}
