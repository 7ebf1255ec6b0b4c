/**
 * A thread's CPU profile with its call frames at the places in the source
 * that the thread's source maps give (see `originalPositions.ts`): what a
 * profile of a TypeScript task module reports is then the line (and column)
 * of each function in the `.ts` file, not of the code tsx made of it.
 */

import type { ScriptPosition } from "./originalPositions.ts";
import type { CpuProfile } from "./profiler.ts";

/** The key of a position, to find it again. */
function keyOf(p: ScriptPosition): string {
  return `${p.line}:${p.column}:${p.url}`;
}

/** The positions of the call frames of `profile` that a source map might move, each once. */
export function framePositions(profile: CpuProfile): ScriptPosition[] {
  const seen = new Map<string, ScriptPosition>();
  for (const { callFrame: f } of profile.nodes) {
    if (f.url === "" || f.lineNumber < 0 || f.columnNumber < 0) continue;
    const p = { url: f.url, line: f.lineNumber, column: f.columnNumber };
    seen.set(keyOf(p), p);
  }
  return [...seen.values()];
}

/**
 * `profile` with each call frame at `positions[i]` moved to `originals[i]`
 * (null: left as it is). A frame moved loses its line ticks
 * (`positionTicks`): they name lines of the code V8 ran (tsx's: all on one
 * line), which the lines of the source cannot be told from.
 */
export function withOriginalPositions(
  profile: CpuProfile,
  positions: readonly ScriptPosition[],
  originals: readonly (ScriptPosition | null)[],
): CpuProfile {
  const moved = new Map<string, ScriptPosition>();
  positions.forEach((p, i) => {
    const original = originals[i];
    if (original != null) moved.set(keyOf(p), original);
  });
  if (moved.size === 0) return profile;
  const nodes = profile.nodes.map((node) => {
    const f = node.callFrame;
    const original = moved.get(keyOf({ url: f.url, line: f.lineNumber, column: f.columnNumber }));
    if (original === undefined) return node;
    const { positionTicks: _lines, ...rest } = node;
    return {
      ...rest,
      callFrame: {
        ...f,
        url: original.url,
        lineNumber: original.line,
        columnNumber: original.column,
      },
    };
  });
  return { ...profile, nodes };
}
