import { describe, expect, it } from "vitest";
import { startTask } from "./runTask.ts";
import { trackTaskMessage } from "./taskContext.ts";
import { defineTask } from "./taskRegistry.ts";

const hooks = {
  secede: () => {},
  rejoin: async () => {},
  client: () => Promise.reject(new Error("no client in this test")),
};

/** A message a task sends, settled by the test. */
function message(): { sent: Promise<void>; arrive: () => void } {
  let arrive!: () => void;
  const sent = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  return { sent, arrive };
}

describe("a task's result waits for the messages it sent (print)", () => {
  for (const kind of ["synchronous", "async"] as const) {
    it(`${kind}: reported once they have settled, with its own timing`, async () => {
      const m = message();
      const name = `runTask.sends.${kind}`;
      defineTask(
        name,
        kind === "synchronous"
          ? () => {
              trackTaskMessage(m.sent);
              return 5;
            }
          : async () => {
              trackTaskMessage(m.sent);
              return 5;
            },
      );
      const out = startTask({ key: "k", fn: name, args: [] }, hooks);
      expect(out).toBeInstanceOf(Promise);
      let done = false;
      void (out as Promise<unknown>).then(() => {
        done = true;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(done).toBe(false);
      m.arrive();
      const outcome = await out;
      expect(outcome).toMatchObject({ status: "ok", value: 5 });
      // Its compute time does not include the wait.
      expect(outcome.stop - outcome.start).toBeLessThan(0.15);
    });
  }

  it("a task that sends nothing costs nothing: a synchronous one's outcome comes at once", () => {
    defineTask("runTask.silent", () => 1);
    const out = startTask({ key: "k", fn: "runTask.silent", args: [] }, hooks);
    expect(out).not.toBeInstanceOf(Promise);
    expect(out).toMatchObject({ status: "ok", value: 1 });
  });
});
