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

  it("a counted address skips one taken exactly: no listener takes another's connections", async () => {
    // The counter is process-wide: the next few numbers are where it goes next.
    const probe = await listen("inproc://skip", () => {});
    await probe.close();
    const next = Number(probe.address.split("/").pop());
    const taken: import("./comm.ts").Listener[] = [];
    const accepted: string[] = [];
    for (let n = next + 1; n <= next + 3; n++) {
      taken.push(await listen(`inproc://skip/${n}`, () => accepted.push(`exact ${n}`)));
    }
    const counted = await listen("inproc://skip", () => accepted.push("counted"));
    expect(taken.map((l) => l.address)).not.toContain(counted.address);
    expect(Number(counted.address.split("/").pop())).toBeGreaterThan(next + 3);
    const comm = await connect(`inproc://skip/${next + 2}`);
    await new Promise((r) => setTimeout(r, 0));
    expect(accepted).toEqual([`exact ${next + 2}`]);
    await comm.close();
    for (const l of [...taken, counted]) await l.close();
  });

  it("gives each dialling end a fresh inproc://local/N address, the peer address of the accepted end", async () => {
    const accepted: import("./comm.ts").Comm[] = [];
    const l = await listen("inproc://dialled", (c) => accepted.push(c));
    const a = await connect(l.address);
    const b = await connect(l.address);
    await new Promise((r) => setTimeout(r, 0));
    for (const c of [a, b]) {
      expect(c.localAddress).toMatch(/^inproc:\/\/local\/\d+$/);
      expect(c.peerAddress).toBe(l.address);
    }
    expect(a.localAddress).not.toBe(b.localAddress);
    expect(accepted.map((c) => c.peerAddress)).toEqual([a.localAddress, b.localAddress]);
    expect(accepted.map((c) => c.localAddress)).toEqual([l.address, l.address]);
    await a.close();
    await b.close();
    await l.close();
  });

  it("sends what TCP would refuse (a function, a cycle), as it is", async () => {
    let server: import("./comm.ts").Comm | undefined;
    const l = await listen("inproc://", (c) => {
      server = c;
    });
    const client = await connect(l.address);
    const fn = () => 42;
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    await client.send({ fn, cycle });
    await new Promise((r) => setTimeout(r, 0));
    const got = (await server?.recv()) as { fn: () => number; cycle: { self: unknown } };
    expect(got.fn).toBe(fn);
    expect(got.cycle.self).toBe(got.cycle);
    await client.close();
    await l.close();
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
