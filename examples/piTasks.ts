/**
 * The task functions of the actor example (`examples/pi.ts`): tasks that
 * throw darts at the unit square and report their hits to one `PiTally`
 * object, an actor that stays on one worker, which the client reads while
 * the tasks run.
 */

import type { Actor } from "../src/client/actor.ts";
import { defineTask } from "../src/worker/taskRegistry.ts";

/** The running count of darts thrown and of those inside the quarter circle. */
export class PiTally {
  samples = 0;
  hits = 0;
  /** The chunks counted: a chunk run again (its first worker died) counts once. */
  private readonly counted = new Set<number>();

  /** Count chunk `chunk`'s darts; false if it was counted already. */
  report(chunk: number, samples: number, hits: number): boolean {
    if (this.counted.has(chunk)) return false;
    this.counted.add(chunk);
    this.samples += samples;
    this.hits += hits;
    return true;
  }

  /** 4 × the share of darts inside: π, roughly. */
  estimate(): number {
    return this.samples === 0 ? Number.NaN : (4 * this.hits) / this.samples;
  }
}

/** Makes the {@link PiTally}: submitted with `{ actor: true }`, an actor. */
export const piTally = defineTask("pi.tally", () => new PiTally());

/**
 * How many of `samples` darts of chunk `chunk` fall inside the quarter
 * circle: the same every time, from a xorshift generator seeded by the chunk.
 */
export function hitsOfChunk(chunk: number, samples: number): number {
  let state = (chunk + 1) * 0x9e3779b1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  let hits = 0;
  for (let i = 0; i < samples; i++) {
    const x = next();
    const y = next();
    if (x * x + y * y <= 1) hits++;
  }
  return hits;
}

/** Throw chunk `chunk`'s darts and report them to the tally: the hits. */
export const piChunk = defineTask(
  "pi.chunk",
  async (tally: Actor<PiTally>, chunk: number, samples: number): Promise<number> => {
    const hits = hitsOfChunk(chunk, samples);
    await tally.call("report", chunk, samples, hits);
    return hits;
  },
);
