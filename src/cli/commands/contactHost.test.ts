import { afterEach, describe, expect, it, vi } from "vitest";
import { contactHostWarning, type HostLookup } from "./contactHost.ts";

/** A resolver that knows `names` alone, and counts its lookups. */
function resolver(names: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (host: string) => {
    calls.push(host);
    const found = names[host];
    if (found === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    }
    return found.map((address) => ({ address }));
  };
  return Object.assign(lookup, { calls });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("contactHostWarning", () => {
  it("warns of a host name that resolves to a wildcard address here, whatever the scheme", async () => {
    // An /etc/hosts entry `0.0.0.0 wild.example`: the option's own check, of the text,
    // passed it, and a scheduler on this host reached the worker there.
    const lookup = resolver({
      "wild.example": ["0.0.0.0"],
      "wild6.example": ["::"],
      "mixed.example": ["10.0.0.5", "0.0.0.0"],
      "node7.example": ["10.0.0.7"],
    });
    expect(await contactHostWarning("tcp://wild.example:4000", lookup)).toBe(
      "--contact-address tcp://wild.example:4000: wild.example resolves to 0.0.0.0 on this machine, which means every interface to a listener: a peer that resolves it so dials its own machine, not this worker; give the worker's own IP, or correct the name's entry (/etc/hosts)",
    );
    expect(await contactHostWarning("tls://wild6.example:4000", lookup)).toMatch(
      /^--contact-address tls:\/\/wild6\.example:4000: wild6\.example resolves to :: on this machine/,
    );
    expect(await contactHostWarning("tcp://mixed.example:4000", lookup)).toMatch(
      /resolves to 0\.0\.0\.0 on this machine/,
    );
    expect(await contactHostWarning("tcp://node7.example:4000", lookup)).toBeNull();
  });

  it("says nothing, and looks nothing up, for an IP; nothing for a name that does not resolve", async () => {
    const lookup = resolver({});
    expect(await contactHostWarning("tcp://10.0.0.7:4000", lookup)).toBeNull();
    expect(await contactHostWarning("tcp://[fd00::7]:4000", lookup)).toBeNull();
    expect(await contactHostWarning("inproc://x", lookup)).toBeNull();
    expect(lookup.calls).toEqual([]);
    // The scheduler's check of the address says what it reaches.
    expect(await contactHostWarning("tcp://nowhere.invalid:4000", lookup)).toBeNull();
    expect(lookup.calls).toEqual(["nowhere.invalid"]);
  });

  it("does not hold the start up for a resolver that does not answer, and stops the lookup", async () => {
    vi.useFakeTimers();
    const abandoned: AbortSignal[] = [];
    const hung: HostLookup = (_host, abandon) => {
      abandoned.push(abandon);
      return new Promise(() => {});
    };
    const warning = contactHostWarning("tcp://slow.example:4000", hung);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await warning).toBeNull();
    // Left running, a lookup (getaddrinfo) held the process at exit until it gave up.
    expect(abandoned.map((s) => s.aborted)).toEqual([true]);
  });

  it("gives up at once, stopping the lookup, when told to stop", async () => {
    const abandoned: AbortSignal[] = [];
    const hung: HostLookup = (_host, abandon) => {
      abandoned.push(abandon);
      return new Promise(() => {});
    };
    const stop = new AbortController();
    const warning = contactHostWarning("tcp://slow.example:4000", hung, stop.signal);
    stop.abort();
    expect(await warning).toBeNull();
    expect(abandoned.map((s) => s.aborted)).toEqual([true]);
    const already = await contactHostWarning("tcp://slow.example:4000", hung, stop.signal);
    expect(already).toBeNull();
  });
});
