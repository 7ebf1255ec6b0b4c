/**
 * A cluster dump someone wrote as JSON (json.dump of dump_cluster_state's dict),
 * named `.json`: JSON is YAML, and the dump reader takes YAML, so it is told the
 * name that reads it rather than that it is no dump.
 */

import { readMaybeGzip } from "../protocol/conformance.ts";

/** Whether `data`, parsed JSON, has a cluster dump's top: its scheduler, workers and versions. */
export function isDumpObject(data: unknown): boolean {
  return (
    typeof data === "object" &&
    data !== null &&
    !Array.isArray(data) &&
    ["scheduler", "workers", "versions"].every((k) => Object.hasOwn(data, k))
  );
}

/** What to name a dump written as JSON, named `file` (`.yaml`, or `.yaml.gz` for a `.gz`). */
export function jsonDumpAdvice(file: string): string {
  const gz = file.endsWith(".gz") ? ".gz" : "";
  return `a cluster dump written as JSON, which weft reads as YAML (JSON is YAML): name it .yaml${gz}`;
}

/** {@link jsonDumpAdvice} for `file` if it is a dump written as JSON, else null (also when it cannot be read). */
export function jsonDumpAdviceFor(file: string): string | null {
  try {
    return isDumpObject(JSON.parse(readMaybeGzip(file))) ? jsonDumpAdvice(file) : null;
  } catch {
    return null;
  }
}
