/**
 * `--memory-limit` of `weft worker` and `weft run`: a size, `auto`, or, as Dask's
 * `parse_memory_limit` reads a bare number up to 1, `0` (no limit) or a share of
 * the machine's memory (`0.5`: half of it, `1`: all of it), which the worker
 * resolves as its `memoryLimit` option does. A larger bare number is bytes.
 */

import { memoryShare } from "../../util/memoryShare.ts";
import { byteSize } from "./serveUntil.ts";

/** The memory limit `text` gives: bytes, a share of the machine's memory (0 for none), or "auto". */
export function memoryLimitOption(text: string): number | "auto" {
  if (text === "auto") return text;
  return memoryShare(text) ?? byteSize("--memory-limit", text);
}

/** Whether `text` is Dask's `--memory-limit 0`, no limit: as if the option were left out. */
export function noMemoryLimit(text: string | undefined): boolean {
  return text === undefined || memoryShare(text) === 0;
}
