import { describe, expect, it } from "vitest";
import { PendingRegistrations } from "./pendingRegistrations.ts";

describe("PendingRegistrations", () => {
  it("settled waits for the registrations of that kind and name under way, whatever their outcome", async () => {
    const pending = new PendingRegistrations();
    const log: string[] = [];
    let fail = (_err: Error) => {};
    const failing = pending.track(
      "worker",
      "p",
      new Promise<string>((_resolve, reject) => {
        fail = reject;
      }),
    );
    failing.catch(() => log.push("registration failed"));
    const waited = pending.settled("worker", "p").then(() => log.push("unregister"));
    // Another kind, another name, nothing under way: at once.
    await pending.settled("nanny", "p");
    await pending.settled("worker", "q");
    expect(log).toEqual([]);
    fail(new Error("setup threw"));
    await waited;
    expect(log).toEqual(["registration failed", "unregister"]);
    await pending.settled("worker", "p");
  });
});

describe("PendingRegistrations with several registrations of one name", () => {
  it("settled waits for each under way, not only the last: one given up on may end after a retry", async () => {
    const pending = new PendingRegistrations();
    let endFirst = () => {};
    void pending.track(
      "worker",
      "p",
      new Promise<void>((resolve) => {
        endFirst = resolve;
      }),
    );
    // Registered again (a retry after giving up on the first), which ends at once.
    await pending.track("worker", "p", Promise.resolve("OK"));
    let unregistered = false;
    const waited = pending.settled("worker", "p").then(() => {
      unregistered = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unregistered).toBe(false);
    endFirst();
    await waited;
    expect(unregistered).toBe(true);
  });
});
