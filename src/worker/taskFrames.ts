/**
 * A task error's traceback without weft's own frames below the task: what
 * calls the task function (`runTask.ts`, `taskContext.ts`) and what runs
 * that (the executor, piscina, Node's internals). Dask shows the remote
 * frames of the task only; these were most of every traceback.
 */

import { findSourceMap } from "node:module";
import { fileURLToPath } from "node:url";

/**
 * How a stack names the modules (their `import.meta.url`s) whose frames run
 * the task: by URL (Node, for ES modules) or by path (tsx, vitest), and, where
 * the module was loaded with source maps enabled (`node --enable-source-maps`,
 * a program run through tsx), by the sources its map names: the build's
 * `dist/worker/runTask.js` then appears in stacks as `src/worker/runTask.ts`,
 * and its frames were left in every traceback.
 */
export function frameLocations(moduleUrls: readonly string[]): string[] {
  const out: string[] = [];
  const add = (url: string) => {
    out.push(`${url}:`);
    if (url.startsWith("file:")) out.push(`${fileURLToPath(url)}:`);
  };
  for (const url of moduleUrls) {
    add(url);
    for (const source of mappedSources(url)) add(source);
  }
  return out;
}

/** The sources (absolute URLs) of the source map Node holds for `url`, if any. */
function mappedSources(url: string): string[] {
  if (!url.startsWith("file:")) return [];
  try {
    const sources = findSourceMap(fileURLToPath(url))?.payload.sources ?? [];
    return sources.filter((source) => source.startsWith("file:"));
  } catch {
    return [];
  }
}

/**
 * `text` (a stack, or a traceback: its frames, `    at …` lines) cut at the
 * first frame at one of `runner` ({@link frameLocations}) that comes below a
 * frame of the task's own, so that weft's APIs the task called (above it)
 * remain; with no frame of the task's own, at the first frame of `runner`:
 * the error arose around the task, none of its frames are the task's.
 * Unchanged if no frame is the runner's.
 */
export function withoutRunnerFrames(text: string, runner: readonly string[]): string {
  const lines = text.split("\n");
  const isRunners = (line: string) =>
    /^\s*at /.test(line) && runner.some((location) => line.includes(location));
  let firstRunners = -1;
  let ownSeen = false;
  for (let i = 0; i < lines.length; i++) {
    if (isRunners(lines[i])) {
      if (ownSeen) return lines.slice(0, i).join("\n");
      if (firstRunners < 0) firstRunners = i;
    } else if (/^\s*at /.test(lines[i])) {
      ownSeen = true;
    }
  }
  return firstRunners < 0 ? text : lines.slice(0, firstRunners).join("\n");
}

/**
 * `text` (a stack, or a traceback) without any frame: for an error weft raised
 * before the task ran (its function unknown), every frame is weft's own
 * (`taskRegistry`, `runTask`, the pool thread, piscina), none the task's.
 */
export function withoutFrames(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*at /.test(line))
    .join("\n");
}
