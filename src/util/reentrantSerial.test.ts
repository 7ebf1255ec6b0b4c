import { describe, expect, it } from "vitest";
import { ReentrantSerial } from "./reentrantSerial.ts";

describe("ReentrantSerial", () => {
  it("runs jobs one at a time, in the order given", async () => {
    const serial = new ReentrantSerial();
    const log: string[] = [];
    await Promise.all([
      serial.run(async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push("first");
      }),
      serial.run(async () => {
        log.push("second");
      }),
    ]);
    expect(log).toEqual(["first", "second"]);
  });

  it("runs a job given from within the running one at once, which that one may await", async () => {
    const serial = new ReentrantSerial();
    const log: string[] = [];
    const outer = serial.run(async () => {
      await Promise.resolve();
      log.push(await serial.run(async () => "inner"));
      log.push("outer");
    });
    const after = serial.run(async () => {
      log.push("after");
    });
    await Promise.all([outer, after]);
    expect(log).toEqual(["inner", "outer", "after"]);
  });

  it("a job given from within that throws as it is called rejects, the running one going on", async () => {
    const serial = new ReentrantSerial();
    const seen = await serial.run(async () =>
      serial
        .run((() => {
          throw new Error("at once");
        }) as () => Promise<never>)
        .catch((err: Error) => err.message),
    );
    expect(seen).toBe("at once");
    expect(await serial.run(async () => "next")).toBe("next");
  });
});
