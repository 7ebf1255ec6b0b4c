import { describe, expect, it } from "vitest";
import { wildcardOf } from "./wildcardHost.ts";

describe("wildcardOf", () => {
  it("finds the wildcard address in each form the resolver reads as one", () => {
    for (const host of ["0.0.0.0", "0", "0.0", "000.000.000.000", "0x0", "::ffff:0.0.0.0"]) {
      expect(wildcardOf(host), host).toBe("0.0.0.0");
    }
    for (const host of ["::", "0:0:0:0:0:0:0:0", "::0"]) expect(wildcardOf(host), host).toBe("::");
  });

  it("finds none in a host name or another IP", () => {
    for (const host of [
      "10.0.0.1",
      "0.0.0.1",
      "127.0.0.1",
      "::1",
      "host-0",
      "example.com",
      "",
      "a b",
    ]) {
      expect(wildcardOf(host), host).toBeNull();
    }
  });
});
