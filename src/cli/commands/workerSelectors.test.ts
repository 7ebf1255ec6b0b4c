import { describe, expect, it } from "vitest";
import { runWeft } from "../testContext.ts";
import { WORKER_SELECTOR } from "./workerSelectors.ts";

/** `weft COMMAND --help` with its line wrapping undone. */
async function help(command: string): Promise<string> {
  const r = await runWeft([command, "--help"]);
  expect(r.code).toBe(0);
  return r.out.replace(/\s+/g, " ");
}

describe("worker selectors", () => {
  it.each(["logs", "profile", "retire", "restart"])(
    "weft %s --help says a worker is given by address, host or name",
    async (command) => {
      expect(WORKER_SELECTOR).toMatch(/address.*host.*name/);
      expect(await help(command)).toContain(WORKER_SELECTOR);
    },
  );

  it("weft replay --help says its --worker is an address in the dump", async () => {
    expect(await help("replay")).toContain("by its address in the dump");
  });

  it("weft retire with no worker named says workers go by address, host or name", async () => {
    const r = await runWeft(["retire", "tcp://127.0.0.1:1"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "weft retire: name the workers to retire (addresses, hosts or names), or give --n or --idle\n",
    );
  });
});
