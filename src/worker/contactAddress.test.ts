import { describe, expect, it } from "vitest";
import { contactAddressFor, externalIPv4 } from "./contactAddress.ts";

describe("contactAddressFor", () => {
  it("keeps concrete addresses", () => {
    expect(contactAddressFor("tcp://127.0.0.1:4000")).toBe("tcp://127.0.0.1:4000");
    expect(contactAddressFor("inproc://local/3")).toBe("inproc://local/3");
  });
  it("replaces wildcard hosts", () => {
    expect(contactAddressFor("tcp://0.0.0.0:4000")).toBe(`tcp://${externalIPv4()}:4000`);
    expect(contactAddressFor("tcp://[::]:4000")).toBe(`tcp://${externalIPv4()}:4000`);
  });
});
