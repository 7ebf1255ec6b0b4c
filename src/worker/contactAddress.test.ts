import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { machineWithInterfaces, nic } from "../util/testMachine.ts";
import { contactAddressFor, externalIPv4, reachableAddressFor } from "./contactAddress.ts";

vi.mock("node:os", async (importOriginal) => {
  const os = await importOriginal<typeof import("node:os")>();
  return { ...os, networkInterfaces: vi.fn(os.networkInterfaces) };
});
afterEach(() => {
  vi.mocked(networkInterfaces).mockReset();
});

const LOOPBACK = [nic("127.0.0.1", true), nic("::1", true)];

describe("contactAddressFor", () => {
  it("keeps concrete addresses", () => {
    expect(contactAddressFor("tcp://127.0.0.1:4000")).toBe("tcp://127.0.0.1:4000");
    expect(contactAddressFor("inproc://local/3")).toBe("inproc://local/3");
  });
  it("replaces wildcard hosts", () => {
    expect(contactAddressFor("tcp://0.0.0.0:4000")).toBe(`tcp://${externalIPv4()}:4000`);
    expect(contactAddressFor("tls://0.0.0.0:4000")).toBe(`tls://${externalIPv4()}:4000`);
    expect(contactAddressFor("tcp://[::]:4000")).toBe(`tcp://${externalIPv4()}:4000`);
  });
  it("falls back to 127.0.0.1 on a machine without a network", () => {
    machineWithInterfaces({ lo: LOOPBACK });
    expect(contactAddressFor("tcp://0.0.0.0:4000")).toBe("tcp://127.0.0.1:4000");
  });
});

describe("reachableAddressFor", () => {
  it("is null for a concrete or non-TCP address", () => {
    machineWithInterfaces({ lo: LOOPBACK, eth0: [nic("10.0.0.5")] });
    expect(reachableAddressFor("tcp://127.0.0.1:8786")).toBeNull();
    expect(reachableAddressFor("tcp://10.0.0.5:8786")).toBeNull();
    expect(reachableAddressFor("tcp://[::1]:8786")).toBeNull();
    expect(reachableAddressFor("inproc://local/3")).toBeNull();
  });

  it("for 0.0.0.0, the first non-internal IPv4 address, on the same port", () => {
    machineWithInterfaces({
      lo: LOOPBACK,
      eth0: [nic("fe80::1"), nic("2001:db8::5"), nic("10.0.0.5")],
      eth1: [nic("192.168.1.7")],
    });
    expect(reachableAddressFor("tcp://0.0.0.0:8786")).toBe("tcp://10.0.0.5:8786");
  });

  it("for [::], the first non-internal IPv6 address that is not link-local", () => {
    machineWithInterfaces({
      lo: LOOPBACK,
      eth0: [nic("10.0.0.5"), nic("fe80::1"), nic("2001:db8::5")],
    });
    expect(reachableAddressFor("tcp://[::]:8786")).toBe("tcp://[2001:db8::5]:8786");
  });

  it("for [::] without such an IPv6 address, the IPv4 one ([::] listens on both)", () => {
    machineWithInterfaces({ lo: LOOPBACK, eth0: [nic("fe80::1"), nic("10.0.0.5")] });
    expect(reachableAddressFor("tcp://[::]:8786")).toBe("tcp://10.0.0.5:8786");
  });

  it("is null on a machine without a network", () => {
    machineWithInterfaces({ lo: LOOPBACK });
    expect(reachableAddressFor("tcp://0.0.0.0:8786")).toBeNull();
    expect(reachableAddressFor("tcp://[::]:8786")).toBeNull();
    machineWithInterfaces({ lo: LOOPBACK, eth0: [nic("fe80::1")] });
    expect(reachableAddressFor("tcp://[::]:8786")).toBeNull();
  });
});
