/**
 * The check of a metrics namespace (the first word of every metric's name), apart
 * from the metrics themselves: options are checked in every process, while
 * prom-client (some 0.1 s of CPU to load) is loaded only by one serving `/metrics`.
 */

import { showValue } from "./showValue.ts";

/** Metric names: `[a-zA-Z_:][a-zA-Z0-9_:]*` (Prometheus'). */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** The namespace option's check: a clear error for a name Prometheus refuses. */
export function metricsNamespaceProblem(namespace: unknown): string | null {
  if (typeof namespace !== "string" || !METRIC_NAME.test(namespace)) {
    return `metricsNamespace must be a Prometheus name ([a-zA-Z_:][a-zA-Z0-9_:]*), got ${showValue(namespace)}`;
  }
  return null;
}
