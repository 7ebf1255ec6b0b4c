import { describe, expect, it } from "vitest";
import { checkDialAddress } from "./connect.ts";

describe("checkDialAddress", () => {
  it("takes the addresses a client or worker can dial", () => {
    for (const ok of ["tcp://10.0.0.1:8786", "tls://[::1]:8786", "10.0.0.1:8786", "inproc://s/1"]) {
      expect(() => checkDialAddress(ok), ok).not.toThrow();
    }
  });

  it("refuses port 0, a listener's any free port, which was dialled and refused until a timeout", () => {
    for (const zero of ["tcp://127.0.0.1:0", "tls://[::1]:0", "127.0.0.1:0"]) {
      expect(() => checkDialAddress(zero), zero).toThrow(
        `port 0 in address ${JSON.stringify(zero)} cannot be connected to (it means any free port to a listener): give the port the server listens on`,
      );
    }
  });
});
