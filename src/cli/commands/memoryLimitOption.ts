/**
 * `--memory-limit` of `weft worker` and `weft run`: a size or `auto`. Dask's
 * `parse_memory_limit` reads a bare number up to 1 as a share of the machine's
 * memory (`0.5`: half of it, `1`: all of it) and 0 as no limit; here a bare number
 * is bytes, so a job script's `--memory-limit 1` was a 1-byte budget that failed
 * every task with a MemoryError, and `0` or `0.5` was refused as no size at all.
 */

import { byteSize } from "./serveUntil.ts";

/** The memory limit `text` gives, in bytes, or "auto"; what Dask reads as a share is refused, saying so. */
export function memoryLimitOption(text: string): number | "auto" {
  if (text === "auto") return text;
  const bare = Number(text.trim());
  if (text.trim() !== "" && Number.isFinite(bare) && bare >= 0 && bare <= 1) {
    throw new Error(
      `--memory-limit ${text}: a bare number is bytes here, where Dask reads one up to 1 as a share of the machine's memory (0: no limit): give a size such as 4GiB, or auto; no limit is the default (leave the option out)`,
    );
  }
  return byteSize("--memory-limit", text);
}
