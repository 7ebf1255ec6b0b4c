/**
 * Where code this thread ran comes from, by the source maps its Node.js keeps
 * (`module.findSourceMap`): a task module written in TypeScript runs as the
 * code tsx made of it, all on one line, so that a CPU profile's call frames
 * said line 1 for each of its functions. tsx turns source maps on for the
 * thread it loads code in, and only that thread knows them: a pool thread's
 * frames are mapped there, asked through the inspector (see
 * {@link originalPositionsExpression}) when its profile is fetched, never
 * while it is sampled.
 */

import { findSourceMap, type SourceMap } from "node:module";

/** A position in a script: 0-based, as a CPU profile's call frames give it. */
export interface ScriptPosition {
  /** The script's URL (or path). */
  readonly url: string;
  /** 0-based line. */
  readonly line: number;
  /** 0-based column. */
  readonly column: number;
}

/**
 * Where each of `positions` comes from, by the source map this thread's
 * Node.js has of its script: null when it has none (JavaScript run as
 * written, Node.js's own code), or the map says nothing of that line before
 * that column. A position inside a mapped stretch of code is given that
 * stretch's start, as Chrome DevTools gives it.
 */
export function originalPositions(positions: readonly ScriptPosition[]): (ScriptPosition | null)[] {
  const maps = new Map<string, SourceMap | undefined>();
  return positions.map((p) => {
    if (!maps.has(p.url)) maps.set(p.url, sourceMapOf(p.url));
    const map = maps.get(p.url);
    if (map === undefined) return null;
    return placed(map, p);
  });
}

/** Where `map` places `p`, if it does. */
function placed(map: SourceMap, p: ScriptPosition): ScriptPosition | null {
  let entry: ReturnType<SourceMap["findEntry"]>;
  try {
    entry = map.findEntry(p.line, p.column);
  } catch {
    // A map whose mappings do not parse places nothing.
    return null;
  }
  // Without an entry of its own line, findEntry gives an earlier line's last one.
  if (!("originalSource" in entry) || entry.generatedLine !== p.line) return null;
  return {
    url: entry.originalSource === "" ? p.url : entry.originalSource,
    line: entry.originalLine,
    column: entry.originalColumn,
  };
}

/** This thread's source map of the script `url`, if it keeps one. */
function sourceMapOf(url: string): SourceMap | undefined {
  // V8's own entries ("(program)") have no URL; an eval'd thread's is "[worker eval]".
  if (url === "" || url.startsWith("node:") || url.startsWith("[")) return undefined;
  try {
    return findSourceMap(url);
  } catch {
    // A map that does not parse places nothing.
    return undefined;
  }
}

/** Where a pool thread keeps {@link originalPositions} for the inspector to call. */
const GLOBAL_KEY = "weft.originalPositions";

/** Let the inspector call {@link originalPositions} in this thread (see {@link originalPositionsExpression}). */
export function exposeOriginalPositions(): void {
  Object.defineProperty(globalThis, Symbol.for(GLOBAL_KEY), {
    value: originalPositions,
    configurable: true,
  });
}

/**
 * The expression that, evaluated by the inspector (`Runtime.evaluate`, by
 * value) in a thread that exposed {@link originalPositions}, gives them for
 * `positions`; in any other thread, it throws.
 */
export function originalPositionsExpression(positions: readonly ScriptPosition[]): string {
  return `globalThis[Symbol.for(${JSON.stringify(GLOBAL_KEY)})](${JSON.stringify(positions)})`;
}

/** Whether `v` is what {@link originalPositions} gives for `count` positions. */
export function isOriginalPositions(v: unknown, count: number): v is (ScriptPosition | null)[] {
  return (
    Array.isArray(v) &&
    v.length === count &&
    v.every(
      (p) =>
        p === null ||
        (typeof p === "object" &&
          typeof p.url === "string" &&
          Number.isInteger(p.line) &&
          p.line >= 0 &&
          Number.isInteger(p.column) &&
          p.column >= 0),
    )
  );
}
