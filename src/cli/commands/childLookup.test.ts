import { describe, expect, it } from "vitest";
import { lookupInChild } from "./childLookup.ts";

describe("lookupInChild", () => {
  it("gives every address a name resolves to here, as dns.lookup does (/etc/hosts included)", async () => {
    const found = await lookupInChild("localhost", new AbortController().signal);
    expect(found.map((a) => a.address)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]),
    );
  }, 20_000);

  it("rejects for a name that does not resolve", async () => {
    await expect(lookupInChild("nowhere.invalid", new AbortController().signal)).rejects.toThrow(
      "nowhere.invalid does not resolve",
    );
  }, 20_000);

  it("looks up a host that reads as an option of node, not taking it as one", async () => {
    // Before, node read it as its own option: this one printed an answer, --cpu-prof wrote
    // a profile into the worker's directory, --inspect opened a debugger's port.
    const option = `--eval=process.stdout.write('[{"address":"0.0.0.0"}]')`;
    await expect(lookupInChild(option, new AbortController().signal)).rejects.toThrow(
      `${option} does not resolve`,
    );
  }, 20_000);

  it("rejects at once when abandoned, its child killed, and does not start one when abandoned already", async () => {
    const abandon = new AbortController();
    const lookup = lookupInChild("localhost", abandon.signal);
    abandon.abort();
    await expect(lookup).rejects.toThrow("the lookup was abandoned");
    await expect(lookupInChild("localhost", abandon.signal)).rejects.toThrow(
      "the lookup was abandoned",
    );
  }, 20_000);
});
