import { describe, expect, it } from "vitest";
import { getAddressHost } from "../util/address.ts";
import { connect, listen } from "./connect.ts";

describe("inproc transport", () => {
  it("names addresses inproc://name/N", async () => {
    const a = await listen("inproc://", () => {});
    const b = await listen("inproc://sched", () => {});
    expect(a.address).toMatch(/^inproc:\/\/local\/\d+$/);
    expect(b.address).toMatch(/^inproc:\/\/sched\/\d+$/);
    expect(getAddressHost(a.address)).toBe("local");
    await a.close();
    await b.close();
  });

  it("an exact address must be free", async () => {
    const a = await listen("inproc://exact/999999", () => {});
    expect(a.address).toBe("inproc://exact/999999");
    await expect(listen("inproc://exact/999999", () => {})).rejects.toThrow(/already in use/);
    await a.close();
    const again = await listen("inproc://exact/999999", () => {});
    await again.close();
  });

  it("passes messages by reference", async () => {
    let server: import("./comm.ts").Comm | undefined;
    const l = await listen("inproc://", (c) => {
      server = c;
    });
    const client = await connect(l.address);
    const msg = { payload: { big: [1, 2, 3] } };
    await client.send(msg);
    await new Promise((r) => setTimeout(r, 0));
    expect(await server?.recv()).toBe(msg);
    await client.close();
    await l.close();
  });

  it("a message sent right after connecting reaches the handler's comm", async () => {
    const got: unknown[] = [];
    const l = await listen("inproc://", (c) => {
      void c.recv().then((m) => got.push(m));
    });
    const client = await connect(l.address);
    await client.send("first");
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual(["first"]);
    await client.close();
    await l.close();
  });
});
