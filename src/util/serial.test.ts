import { describe, expect, it } from "vitest";
import { Serial } from "./serial.ts";

describe("Serial", () => {
  it("runs jobs one at a time in order, a rejection not stopping the next", async () => {
    const serial = new Serial();
    const log: string[] = [];
    const job =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 5));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      serial.run(job("a")),
      serial.run(job("b", true)),
      serial.run(job("c")),
    ]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  });
});
