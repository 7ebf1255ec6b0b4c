import { describe, expect, it } from "vitest";
import { runWeft } from "../testContext.ts";

const REFUSED =
  "error: option '--scheduler-file <path>' argument '' is invalid. the path is empty (an unset variable in a script?)\n";

describe("--scheduler-file given an empty path (an unset variable in a job script)", () => {
  it("is refused at once naming the option, by every command that takes it", async () => {
    for (const args of [
      // It listened, then said "cannot write the scheduler file : cannot write in … (EISDIR)".
      ["scheduler", "--listen", "tcp://127.0.0.1:0", "--log-level", "silent"],
      // It said it waited for the file, then "readSchedulerFile: the path must be …".
      ["worker", "--executor", "inline", "--nthreads", "1", "--log-level", "silent"],
      ["status"],
      ["retire", "--n", "1"],
      ["run", "graph.json"],
    ]) {
      const r = await runWeft([...args, "--scheduler-file", ""]);
      expect(r, args[0]).toMatchObject({ code: 2, out: "" });
      expect(r.err.startsWith(REFUSED), `${args[0]}: ${r.err}`).toBe(true);
    }
  });
});
