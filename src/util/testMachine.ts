/**
 * This machine's network interfaces as a test makes them, for the code that picks an
 * address others can reach. The test file must mock `node:os` itself (vi.mock is
 * hoisted into the file that calls it):
 *
 *     vi.mock("node:os", async (importOriginal) => {
 *       const os = await importOriginal<typeof import("node:os")>();
 *       return { ...os, networkInterfaces: vi.fn(os.networkInterfaces) };
 *     });
 */

import { type NetworkInterfaceInfo, networkInterfaces } from "node:os";
import { vi } from "vitest";

/** An interface address as `os.networkInterfaces()` lists it (link-local IPv6 scoped). */
export function nic(address: string, internal = false): NetworkInterfaceInfo {
  const common = { address, netmask: "", mac: "00:00:00:00:00:00", internal, cidr: null };
  return address.includes(":")
    ? { ...common, family: "IPv6", scopeid: address.startsWith("fe80") ? 2 : 0 }
    : { ...common, family: "IPv4" };
}

/** This machine has these interfaces, as far as the code under test sees. */
export function machineWithInterfaces(interfaces: Record<string, NetworkInterfaceInfo[]>): void {
  vi.mocked(networkInterfaces).mockReturnValue(interfaces);
}

/** This machine: loopback, and `eth0` with `addresses` (none: loopback alone). */
export function machine(...addresses: string[]): void {
  machineWithInterfaces({
    lo: [nic("127.0.0.1", true), nic("::1", true)],
    ...(addresses.length > 0 ? { eth0: addresses.map((a) => nic(a)) } : {}),
  });
}
