import { describe, expect, it } from "vitest";
import type { Client } from "../../client/client.ts";
import { runWeft } from "../testContext.ts";
import { selectorsProblem, WORKER_SELECTOR, withSchemes } from "./workerSelectors.ts";

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

describe("withSchemes", () => {
  // Only the scheduler's address and its workers' names are asked for.
  const client = {
    address: "tls://10.0.0.9:8786",
    workers: async () => [{ address: "tls://10.0.0.1:4000", name: "box:1" }],
  } as unknown as Client;

  it("reads host:port as an address of the scheduler's scheme, unless a worker is named so", async () => {
    expect(
      await withSchemes(client, [
        "10.0.0.1:4000",
        "box:1",
        "tcp://10.0.0.2:1",
        "alice",
        ":4000",
        "[::1]:5",
      ]),
    ).toEqual([
      "tls://10.0.0.1:4000",
      "box:1",
      "tcp://10.0.0.2:1",
      "alice",
      ":4000",
      "tls://[::1]:5",
    ]);
  });
});

describe("selectorsProblem", () => {
  it("refuses an empty selector, blanks too, before asking anyone", () => {
    expect(selectorsProblem(["a", "tcp://h:1"])).toBeNull();
    for (const empty of ["", " ", "\t"]) {
      expect(selectorsProblem(["a", empty]), JSON.stringify(empty)).toBe(
        `an empty worker selector names no worker: give ${WORKER_SELECTOR}`,
      );
    }
  });
});
