/**
 * Prometheus metrics read at scrape time, on prom-client: each metric asks its
 * server for the value when `/metrics` is fetched, so the servers keep no
 * metric objects up to date as they run. The process's own metrics (CPU, heap,
 * event-loop delay, garbage collection: prom-client's defaults, as Dask's
 * expose `python_*` and `process_*`) are collected once per process and shared.
 */

import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

let processRegistry: Registry | null = null;

/** The process's own metrics, made on first use. */
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The label set of a metric without labels. */
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/** A label set and its value. */
export type Sample = readonly [labels: Readonly<Record<string, string>>, value: number];

/** Builds one server's registry: its metrics, then the process's. */
export class ScrapedMetrics {
  private readonly own = new Registry();

  constructor(
    /** `weft_scheduler`, `weft_worker`: every name starts with it. */
    private readonly prefix: string,
  ) {}

  /** A gauge: `value()` at each scrape. */
  gauge(name: string, help: string, value: () => number): this {
    return this.labelledGauge(name, help, [], () => [[NO_LABELS, value()]]);
  }

  /** A gauge with labels: one sample per label set `samples()` gives, at each scrape. */
  labelledGauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    samples: () => Iterable<Sample>,
  ): this {
    new Gauge({
      ...this.config(name, help, labelNames),
      collect() {
        this.reset();
        for (const [labels, v] of samples()) this.set(labels, v);
      },
    });
    return this;
  }

  /** A counter (`name` ends in `_total`): the running total `value()` gives at each scrape. */
  counter(name: string, help: string, value: () => number): this {
    return this.labelledCounter(name, help, [], () => [[NO_LABELS, value()]]);
  }

  /** A counter with labels, as {@link labelledGauge}: each sample the running total of its label set. */
  labelledCounter(
    name: string,
    help: string,
    labelNames: readonly string[],
    samples: () => Iterable<Sample>,
  ): this {
    new Counter({
      ...this.config(name, help, labelNames),
      collect() {
        this.reset();
        for (const [labels, v] of samples()) this.inc(labels, v);
      },
    });
    return this;
  }

  private config(name: string, help: string, labelNames: readonly string[]) {
    return { name: `${this.prefix}_${name}`, help, labelNames, registers: [this.own] };
  }

  /** The registry to scrape: these metrics and the process's. */
  registry(): Registry {
    return Registry.merge([this.own, processMetrics()]);
  }
}
