import { describe, expect, it } from "vitest";
import { metricsNamespaceProblem } from "./metricsName.ts";
import { type Sample, ScrapedMetrics } from "./promRegistry.ts";

describe("metricsNamespaceProblem", () => {
  it("takes Prometheus names only", () => {
    expect(metricsNamespaceProblem("weft_x:y")).toBeNull();
    for (const bad of ["1abc", "a-b", "", null, 5]) {
      expect(metricsNamespaceProblem(bad), String(bad)).toMatch(/^metricsNamespace must be/);
    }
    // JSON.stringify threw on a BigInt and printed NaN as null.
    expect(metricsNamespaceProblem(5n)).toMatch(/, got "5n"$/);
    expect(metricsNamespaceProblem(Number.NaN)).toMatch(/, got NaN$/);
  });
});

describe("ScrapedMetrics", () => {
  it("gives at each scrape what its sources say then, not what they said before", async () => {
    let samples: Sample[] = [
      [{ worker: "a" }, 1],
      [{ worker: "b" }, 2],
    ];
    let total = 5;
    const m = new ScrapedMetrics("weft_unit")
      .labelledGauge("held", "held per worker", ["worker"], () => samples)
      .counter("events_total", "events", () => total);
    const scrape = async () => {
      const text = await m.registry().metrics();
      return text.split("\n").filter((l) => l.startsWith("weft_unit_"));
    };
    expect(await scrape()).toEqual([
      'weft_unit_held{worker="a"} 1',
      'weft_unit_held{worker="b"} 2',
      "weft_unit_events_total 5",
    ]);
    samples = [[{ worker: "b" }, 3]]; // a left
    total = 7;
    expect(await scrape()).toEqual(['weft_unit_held{worker="b"} 3', "weft_unit_events_total 7"]);
  });
});
