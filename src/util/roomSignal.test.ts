import { describe, expect, it } from "vitest";
import { RoomSignal } from "./roomSignal.ts";

describe("RoomSignal", () => {
  it("lets every wait so far go at open, and the next wait waits for the next open", async () => {
    const room = new RoomSignal();
    expect(room.waiting).toBe(false);
    let let1 = 0;
    const a = room.wait().then(() => let1++);
    const b = room.wait().then(() => let1++);
    expect(room.waiting).toBe(true);
    room.open();
    await Promise.all([a, b]);
    expect(let1).toBe(2);
    expect(room.waiting).toBe(false);
    let later = false;
    const c = room.wait().then(() => {
      later = true;
    });
    await Promise.resolve();
    expect(later).toBe(false);
    room.open();
    await c;
    expect(later).toBe(true);
  });

  it("an open with nobody waiting lets no later wait go", async () => {
    const room = new RoomSignal();
    room.open();
    let gone = false;
    void room.wait().then(() => {
      gone = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(gone).toBe(false);
    room.open();
    await new Promise((r) => setTimeout(r, 0));
    expect(gone).toBe(true);
  });
});
