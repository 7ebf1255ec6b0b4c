import { describe, expect, it } from "vitest";
import { runWeft } from "../testContext.ts";
import { checkListenAddress } from "./listenAddress.ts";

describe("--listen given a port alone", () => {
  it("is refused, with the addresses meant, before anything listens", () => {
    expect(() => checkListenAddress("--listen", "8786")).toThrow(
      "--listen 8786: a port alone is read as a host; give tcp://0.0.0.0:8786 (every interface) or tcp://127.0.0.1:8786",
    );
    expect(() => checkListenAddress("--listen", "tls://8786")).toThrow(
      /give tls:\/\/0\.0\.0\.0:8786/,
    );
    for (const fine of [
      "tcp://127.0.0.1:8786",
      ":8786",
      "127.0.0.1",
      "tcp://0.0.0.0:0",
      "[::]:1",
    ]) {
      expect(() => checkListenAddress("--listen", fine), fine).not.toThrow();
    }
  });

  it("names the flag of a host:port that does not parse", () => {
    expect(() => checkListenAddress("--listen", "tcp://:x")).toThrow(
      '--listen: invalid port "x" in address ":x"',
    );
    expect(() => checkListenAddress("--listen", "tls://127.0.0.1:99999")).toThrow(
      '--listen: port 99999 out of range 0-65535 in address "127.0.0.1:99999"',
    );
    expect(() => checkListenAddress("--listen", "tcp://[::1")).toThrow(
      /^--listen: invalid address/,
    );
    expect(() => checkListenAddress("--listen", "inproc://anything:x")).not.toThrow();
  });

  it("weft scheduler and weft worker say so in one line, exit 2", async () => {
    // Read as a host, 18799 was the IPv4 address 0.0.73.111: "listen EADDRNOTAVAIL".
    const scheduler = await runWeft(["scheduler", "--listen", "18799", "--log-level", "silent"]);
    expect(scheduler.code).toBe(2);
    expect(scheduler.err).toBe(
      "weft scheduler: cannot start: --listen 18799: a port alone is read as a host; give tcp://0.0.0.0:18799 (every interface) or tcp://127.0.0.1:18799\n",
    );
    const worker = await runWeft([
      "worker",
      "tcp://127.0.0.1:1",
      "--listen",
      "18799",
      "--log-level",
      "silent",
    ]);
    expect(worker.code).toBe(2);
    expect(worker.err).toMatch(/^weft worker: cannot start: --listen 18799: a port alone /);
  });
});
