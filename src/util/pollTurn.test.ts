import { readFile } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { pollTurn } from "./pollTurn.ts";

let seen = 0;
const onSignal = (): void => {
  seen++;
};
afterEach(() => {
  process.off("SIGUSR2", onSignal);
});

/** Resolves from a poll-phase callback: an fs read's completion. */
function fromPollPhase(): Promise<void> {
  return new Promise((resolve, reject) =>
    readFile(new URL(import.meta.url), (err) => (err ? reject(err) : resolve())),
  );
}

it("lets a signal that came during work run from a poll-phase callback be seen", async () => {
  process.on("SIGUSR2", onSignal);
  await fromPollPhase();
  process.kill(process.pid, "SIGUSR2");
  await pollTurn();
  expect(seen).toBe(1);
});

it("lets one be seen after work run from the check phase too", async () => {
  process.on("SIGUSR2", onSignal);
  seen = 0;
  await new Promise<void>((resolve) => setImmediate(resolve));
  process.kill(process.pid, "SIGUSR2");
  await pollTurn();
  expect(seen).toBe(1);
});
