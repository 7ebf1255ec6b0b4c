import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { protocolMismatch, WIRE_PROTOCOL_VERSION, weftVersion } from "./version.ts";

describe("the wire protocol version", () => {
  it("weft's version is package.json's", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(weftVersion()).toBe(pkg.version);
  });

  it("a peer of the same protocol version is no mismatch, whatever weft version it names", () => {
    const same = { protocolVersion: WIRE_PROTOCOL_VERSION, weftVersion: "0.0.0-other" };
    expect(protocolMismatch("the client", "this scheduler", same)).toBeNull();
  });

  it("a version of another type is a mismatch, described briefly", () => {
    const ours = `wire protocol ${WIRE_PROTOCOL_VERSION} (weft ${weftVersion()})`;
    const advice = "run the same weft version on the scheduler, workers and clients";
    expect(
      protocolMismatch("the worker", "this scheduler", {
        protocolVersion: String(WIRE_PROTOCOL_VERSION),
        weftVersion: "x".repeat(1_000),
      }),
    ).toBe(
      `the worker speaks wire protocol "${WIRE_PROTOCOL_VERSION}" (weft ${"x".repeat(40)}) and this scheduler ${ours}: ${advice}`,
    );
    expect(
      protocolMismatch("the worker", "this scheduler", {
        protocolVersion: { v: 1 },
        weftVersion: 7,
      }),
    ).toBe(
      `the worker speaks wire protocol of type object (weft unknown) and this scheduler ${ours}: ${advice}`,
    );
  });
});
