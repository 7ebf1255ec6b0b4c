import { describe, expect, it } from "vitest";
import type { TlsCredentials } from "../comm/tls.ts";
import {
  clusterRunOptions,
  graphNames,
  MAX_SCALE,
  nonNegativeInteger,
  positiveInteger,
} from "./benchOptions.ts";
import { clusterBenchOptions } from "./clusterBenchCommand.ts";
import { MAX_MEMORY_TASKS, stateBenchOptions } from "./stateBenchCommand.ts";

const run = { warmup: "3", saturation: "1.1", scale: "1" };

describe("the benchmarks' shared options", () => {
  it("--scale is a finite number > 0 and at most MAX_SCALE", () => {
    expect(clusterRunOptions(run)).toEqual({ warmup: 3, saturation: 1.1, scale: 1 });
    expect(clusterRunOptions({ ...run, scale: "0.02" }).scale).toBe(0.02);
    expect(clusterRunOptions({ ...run, scale: String(MAX_SCALE) }).scale).toBe(MAX_SCALE);
    // Infinity passed `scale > 0`, then each graph asked for an array of infinite length.
    for (const scale of ["Infinity", "inf", "1e400", "11", "NaN", "0", "-1", "", " ", "x"]) {
      expect(() => clusterRunOptions({ ...run, scale }), scale).toThrow(
        `--scale must be a number > 0 and at most ${MAX_SCALE}`,
      );
    }
  });

  it("spawn's scale is bounded lower, since its tasks double with each level", () => {
    expect(graphNames("spawn,map", 2)).toEqual(["spawn", "map"]);
    expect(graphNames("map,tree,shuffle,chain", MAX_SCALE)).toHaveLength(4);
    expect(() => graphNames("map, spawn", 3)).toThrow(
      "--scale 3 is too large for spawn: at most 2",
    );
    expect(() =>
      clusterBenchOptions({
        ...run,
        runs: "1",
        graphs: "spawn",
        executor: "inline",
        scale: "10",
        workStealing: true,
        protocol: "inproc",
      }),
    ).toThrow("--scale 10 is too large for spawn");
  });

  it("an empty or blank value is refused, not read as 0", () => {
    for (const value of ["", " ", "\t"]) {
      expect(() => nonNegativeInteger(value, "--warmup")).toThrow(
        "--warmup must be an integer >= 0",
      );
      expect(() => positiveInteger(value, "--runs")).toThrow("--runs must be a positive integer");
      expect(() => clusterRunOptions({ ...run, warmup: value })).toThrow("--warmup");
      expect(() => clusterRunOptions({ ...run, saturation: value })).toThrow("--saturation");
    }
    expect(nonNegativeInteger("0", "--warmup")).toBe(0);
    expect(positiveInteger("5", "--runs")).toBe(5);
    expect(() => positiveInteger("0", "--runs")).toThrow("--runs must be a positive integer");
  });

  it("numbers in another base, padded or with underscores are refused, not read as Number reads them", () => {
    for (const value of ["0x10", "0b11", "0o7", " 5 ", "1_000"]) {
      expect(() => nonNegativeInteger(value, "--warmup"), value).toThrow(
        "--warmup must be an integer >= 0",
      );
      expect(() => positiveInteger(value, "--runs"), value).toThrow(
        "--runs must be a positive integer",
      );
      expect(() => clusterRunOptions({ ...run, saturation: value }), value).toThrow("--saturation");
      expect(() => clusterRunOptions({ ...run, scale: value }), value).toThrow("--scale");
    }
    expect(positiveInteger("1e3", "--runs")).toBe(1000);
  });

  it("an integer past Number.MAX_SAFE_INTEGER is refused saying that bound", () => {
    // --runs 1e20 was taken (not the number typed, and runs for ever); --warmup said
    // "must be an integer >= 0" of it.
    for (const value of ["99999999999999999999", "1e20", "1e400"]) {
      expect(() => positiveInteger(value, "--runs"), value).toThrow(
        "--runs must be at most 9007199254740991 (Number.MAX_SAFE_INTEGER)",
      );
      expect(() => nonNegativeInteger(value, "--warmup"), value).toThrow(
        "--warmup must be at most 9007199254740991 (Number.MAX_SAFE_INTEGER)",
      );
    }
    expect(positiveInteger(String(Number.MAX_SAFE_INTEGER), "--runs")).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it("--saturation is a number > 0, or inf", () => {
    expect(clusterRunOptions({ ...run, saturation: "inf" }).saturation).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(() => clusterRunOptions({ ...run, saturation: "0" })).toThrow(
      "--saturation must be > 0 or inf",
    );
  });

  it("--graphs names only the benchmark's own graphs, at scale 1 unless told", () => {
    expect(graphNames("spawn")).toEqual(["spawn"]);
    expect(() => graphNames("toString")).toThrow('unknown graph "toString"');
  });

  it("bench state's --streams: names trimmed, empty ones dropped, and at least one", () => {
    const opts = { dir: "d", runs: "1", warmup: "0", tasks: "0", python: "python3" };
    expect(stateBenchOptions({ ...opts, streams: " tree, ,churn" }).streams).toEqual([
      "tree",
      "churn",
    ]);
    expect(stateBenchOptions(opts)).not.toHaveProperty("streams");
    expect(() => stateBenchOptions({ ...opts, streams: " , " })).toThrow(
      "--streams names no stream",
    );
  });

  it("bench state's --tasks: at most MAX_MEMORY_TASKS, which fit node's default heap", () => {
    const opts = { dir: "d", runs: "1", warmup: "0", python: "python3" };
    expect(stateBenchOptions({ ...opts, tasks: String(MAX_MEMORY_TASKS) }).tasks).toBe(
      MAX_MEMORY_TASKS,
    );
    expect(() => stateBenchOptions({ ...opts, tasks: "20000000" })).toThrow(
      "--tasks must be at most 4000000 (about 580 heap bytes a task), got 20000000",
    );
  });

  it("bench state's --python is run (--version) before anything, with --reference-here", () => {
    const opts = { dir: "d", runs: "1", warmup: "0", tasks: "0", referenceHere: true };
    expect(() => stateBenchOptions({ ...opts, python: "/no/such/python" })).toThrow(
      "--python /no/such/python: cannot run it: spawnSync /no/such/python ENOENT",
    );
    // Not run without --reference-here.
    expect(
      stateBenchOptions({ ...opts, referenceHere: false, python: "/no/such/python" }),
    ).not.toHaveProperty("referenceWith");
  });

  it("bench cluster takes TLS credentials for --protocol tls only", () => {
    const tls = { ca: "ca" } as unknown as TlsCredentials;
    const cli = { ...run, runs: "1", graphs: "map", executor: "inline", workStealing: true };
    expect(clusterBenchOptions({ ...cli, protocol: "tls" }, tls).tls).toBe(tls);
    expect(clusterBenchOptions({ ...cli, protocol: "tcp" }, tls)).not.toHaveProperty("tls");
  });
});
