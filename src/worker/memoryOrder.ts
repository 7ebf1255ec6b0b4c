/**
 * Memory thresholds given in an order that defeats one of them: a spill share
 * below the target, or a pause or spill share above the terminate one. Dask
 * takes `distributed.worker.memory.target/spill/pause/terminate` in any order,
 * and so does weft, but says so once as the worker starts, since such a worker
 * never does what the option names (a pause above terminate: the worker is
 * closed before it pauses). The target at or above the pause or terminate share
 * is refused instead (`workerOptions.ts`): values kept up to the target would
 * pause the worker, or have it closed, for good.
 */

/** The shares as the worker resolved them; false: off. */
export interface MemoryShares {
  readonly memoryTarget: number;
  readonly memorySpill: number | false;
  readonly memoryPause: number | false;
  readonly memoryTerminate: number | false;
}

/** What each threshold out of order means, one sentence each; empty when in order. */
export function memoryOrderProblems(o: MemoryShares): string[] {
  const { memoryTarget: target, memorySpill: spill, memoryPause: pause } = o;
  const terminate = o.memoryTerminate;
  const problems: string[] = [];
  if (spill !== false && spill < target) {
    problems.push(
      `memory spill ${spill} is below target ${target}: spilling starts only beyond the target, as it spills down to it`,
    );
  }
  if (spill !== false && pause !== false && spill > pause) {
    problems.push(
      `memory spill ${spill} is above pause ${pause}: the worker pauses before it spills, and stays paused until its memory falls by itself`,
    );
  }
  if (spill !== false && terminate !== false && spill > terminate) {
    problems.push(
      `memory spill ${spill} is above terminate ${terminate}: the worker is closed before it spills`,
    );
  }
  if (pause !== false && terminate !== false && pause > terminate) {
    problems.push(
      `memory pause ${pause} is above terminate ${terminate}: the worker is closed before it pauses`,
    );
  }
  return problems;
}
