import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { lookupInChild } from "./childLookup.ts";

const CHILD_LOOKUP = new URL("./childLookup.ts", import.meta.url).href;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

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

  it("leaves no child behind when its process is SIGKILLed (a lookup that never ends held it alive for the resolver's timeout)", async () => {
    // The parent starts a tied child that would run for good, as a lookup of a name whose
    // DNS server does not answer runs until the resolver gives up, and is SIGKILLed.
    const parent = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { spawnTiedChild } from ${JSON.stringify(CHILD_LOOKUP)};\n` +
          'const child = spawnTiedChild("setInterval(() => {}, 1000); process.stdout.write(String(process.pid));", []);\n' +
          'child.stdout.once("data", (pid) => { process.stdout.write(pid); process.kill(process.pid, "SIGKILL"); });\n',
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(parent.signal).toBe("SIGKILL");
    const pid = Number(parent.stdout);
    expect(pid).toBeGreaterThan(0);
    const t0 = Date.now();
    while (alive(pid) && Date.now() - t0 < 10_000) await sleep(50);
    const left = alive(pid);
    if (left) process.kill(pid, "SIGKILL");
    expect(left).toBe(false);
  }, 60_000);
});
