import { describe, expect, it } from "vitest";
import {
  DEFAULT_SCHEME,
  getAddressHost,
  namesWorker,
  parseAddress,
  parseHostPort,
  splitScheme,
  unparseAddress,
} from "./address.ts";

describe("getAddressHost", () => {
  it.each([
    ["tcp://1.2.3.4:80", "1.2.3.4"], // the reference's doctest
    ["tcp://127.0.0.1:8786", "127.0.0.1"],
    ["tls://10.0.0.5:9000", "10.0.0.5"],
    ["ws://example.com:80", "example.com"],
    ["127.0.0.1:1", "127.0.0.1"],
    ["[::1]:8786", "::1"],
    ["tcp://[fe80::1%eth0]:1234", "fe80::1%eth0"],
    ["tcp://:8786", ""],
    ["inproc://10.0.0.1/1234/5", "10.0.0.1"],
    ["inproc://host", "host"],
  ])("getAddressHost(%j) == %j", (address, host) => {
    expect(getAddressHost(address)).toBe(host);
  });

  it.each([
    ["tcp://127.0.0.1", /missing port number/],
    ["127.0.0.1", /missing port number/],
    ["tcp://::1:80", /IPv6 hosts must be written in brackets/],
    ["tcp://[::1", /unterminated/],
    ["tcp://[::1]80", /expected ':'/],
    ["tcp://host:http", /invalid port "http"/],
    ["tcp://host:", /invalid port ""/],
    ["tcp://host:70000", /out of range/],
    ["tcp://host:65536", /port 65536 out of range/],
    ["tcp://host:-1", /port -1 out of range/],
    ["tcp://[::1]", /missing port number/],
    ["inproc:///1/2", /invalid inproc address/],
  ])("getAddressHost(%j) throws %s", (address, message) => {
    expect(() => getAddressHost(address)).toThrow(message);
  });
});

describe("parseAddress", () => {
  it("splits scheme, host and port", () => {
    expect(parseAddress("tcp://127.0.0.1:8786")).toEqual({
      scheme: "tcp",
      host: "127.0.0.1",
      port: 8786,
    });
    expect(parseAddress("tls://[::1]:1")).toEqual({ scheme: "tls", host: "::1", port: 1 });
    expect(parseAddress("localhost:0")).toEqual({
      scheme: DEFAULT_SCHEME,
      host: "localhost",
      port: 0,
    });
  });

  it("uses the default port when the address has none", () => {
    expect(parseAddress("tcp://example.org", 8786)).toEqual({
      scheme: "tcp",
      host: "example.org",
      port: 8786,
    });
    expect(parseAddress("[::1]", 80).host).toBe("::1");
    expect(() => parseAddress("tcp://example.org")).toThrow(/missing port number/);
  });

  it("accepts Python int() port spellings", () => {
    expect(parseHostPort("h: 80 ").port).toBe(80);
    expect(parseHostPort("h:+80").port).toBe(80);
    expect(parseHostPort("h:8_0").port).toBe(80);
    expect(parseHostPort("h:-0").port).toBe(0); // int("-0") is 0, not -0
    expect(parseHostPort("h:65535").port).toBe(65535);
    // getAddressHost splits off the scheme at the last '://'; parseHostPort allows one.
    expect(() => parseHostPort("tcp://a://host:1")).toThrow(/more than one ':\/\/'/);
  });

  it("rejects inproc addresses, which have no port", () => {
    expect(() => parseAddress("inproc://10.0.0.1/1/2")).toThrow(/inproc/);
  });

  it("rejects non-strings with a clear error", () => {
    expect(() => parseAddress(42 as unknown as string)).toThrow(
      new TypeError("expected an address string, got number"),
    );
  });
});

describe("splitScheme / unparseAddress", () => {
  it("splits on the last ://", () => {
    expect(splitScheme("tcp://h:1")).toEqual({ scheme: "tcp", location: "h:1" });
    expect(splitScheme("a://b://c")).toEqual({ scheme: "a://b", location: "c" });
    expect(splitScheme("h:1")).toEqual({ scheme: "tcp", location: "h:1" });
  });

  it("strict mode requires a scheme", () => {
    expect(() => splitScheme("h:1", true)).toThrow(/Invalid url scheme/);
  });

  it("round-trips", () => {
    const { scheme, location } = splitScheme("ws://h:1");
    expect(unparseAddress(scheme, location)).toBe("ws://h:1");
  });
});

describe("namesWorker", () => {
  it("names a worker by its address, or by its host", () => {
    const names = new Set(["tcp://10.0.0.1:9000", "10.0.0.2"]);
    expect(namesWorker(names, "tcp://10.0.0.1:9000", "10.0.0.1")).toBe(true);
    expect(namesWorker(names, "tcp://10.0.0.1:9001", "10.0.0.1")).toBe(false);
    expect(namesWorker(names, "tcp://10.0.0.2:9001", "10.0.0.2")).toBe(true);
    expect(namesWorker(names, "weird", null)).toBe(false);
  });
});
