import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { machine } from "../../util/testMachine.ts";
import { httpUrlShown, reachableHttpUrl } from "./httpUrlShown.ts";

vi.mock("node:os", async (importOriginal) => {
  const os = await importOriginal<typeof import("node:os")>();
  return { ...os, networkInterfaces: vi.fn(os.networkInterfaces) };
});
afterEach(() => {
  vi.mocked(networkInterfaces).mockReset();
});

describe("httpUrlShown", () => {
  it.each([
    ["http://0.0.0.0:8787", "http://10.0.0.5:8787 (listening on http://0.0.0.0:8787)"],
    ["http://[::]:8787", "http://[2001:db8::5]:8787 (listening on http://[::]:8787)"],
    // HTTP's own port, which a URL parser drops as the default: still printed, not a crash.
    ["http://0.0.0.0:80", "http://10.0.0.5:80 (listening on http://0.0.0.0:80)"],
    ["http://[::]:80", "http://[2001:db8::5]:80 (listening on http://[::]:80)"],
    ["http://127.0.0.1:80", "http://127.0.0.1:80"],
    ["http://[::1]:8787", "http://[::1]:8787"],
  ])("%s: %s", (url, shown) => {
    machine("10.0.0.5", "2001:db8::5");
    expect(httpUrlShown(url)).toBe(shown);
  });

  it("a machine without a network: the address listened on alone", () => {
    machine();
    expect(httpUrlShown("http://0.0.0.0:80")).toBe("http://0.0.0.0:80");
    expect(reachableHttpUrl("http://0.0.0.0:80")).toBeNull();
  });
});
