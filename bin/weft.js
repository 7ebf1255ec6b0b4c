#!/usr/bin/env node
// The `weft` command. In an installed package it runs the build (`dist/`); in a
// checkout, where the TypeScript sources are, it runs them through tsx (no
// build step needed while developing).
import { existsSync } from "node:fs";

// A worker a nanny started (`weft worker --nanny`) is stopped by its nanny's
// SIGTERM. A Ctrl-C reaches the whole process group, the worker too: ignored
// here, from the start (its sources still loading), it neither kills the worker
// nor starts a close that the nanny's SIGTERM would then cut short.
const nannyChild = process.env.WEFT_NANNY_CHILD === "1";
if (nannyChild) process.on("SIGINT", () => {});

// `weft worker` and `weft scheduler` close on SIGINT or SIGTERM with exit 0, but
// listen only once their modules are loaded (about 1 s through tsx): one that
// comes before is recorded here, for the command to honour as it starts listening
// (src/cli/commands/earlySignal.ts). A second one ends the process at once, and
// one left unclaimed (the command never listened) is raised again at the end, as
// if nothing had caught it: other commands, and these ones' other paths, keep
// their usual behaviour.
const early = ["worker", "scheduler"].includes(process.argv[2]) ? recordEarlySignals() : null;

const sources = new URL("../src/cli/weft.ts", import.meta.url);
// WEFT_RUN_BUILD=1 runs the build in a checkout too: tests that start many weft
// processes set it once they have checked that the build is current
// (src/cli/testBuiltCommand.ts), as tsx costs each start about 0.8 s more CPU.
const runBuild = process.env.WEFT_RUN_BUILD === "1";
let main;
if (existsSync(sources) && !runBuild) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import("../dist/cli/weft.js"));
}
process.exitCode = await main(process.argv);
early?.unclaimed();
// `weft worker` and `weft scheduler` have closed (or never started): their process ends,
// whatever a preload, a plugin or a task left running in it (a connection still being
// made, a timer), as Dask's ends with its event loop. Left, such a connection kept a
// server stopped by SIGTERM alive for as long as it lasted, for good without a timeout.
// A second for what is still being written out (stdout, stderr, their logs).
if (early !== null) setTimeout(exitOnceWritten, 1_000).unref();

// Not before stdout and stderr are written, though: to a pipe they are written as the
// reader takes them, and process.exit() dropped what they still held (a task's or a
// teardown's last lines, all but 64 KiB of them for a reader a second behind).
function exitOnceWritten() {
  const held = [process.stdout, process.stderr].some((s) => !s.destroyed && s.writableLength > 0);
  if (!held) process.exit();
  setTimeout(exitOnceWritten, 50).unref();
}

function recordEarlySignals() {
  const signals = nannyChild ? ["SIGTERM"] : ["SIGINT", "SIGTERM"];
  let received = null;
  let claimed = false;
  const stopRecording = () => {
    for (const s of signals) process.removeListener(s, record);
  };
  function record(signal) {
    if (received === null) {
      received = signal;
      return;
    }
    stopRecording();
    process.kill(process.pid, signal);
  }
  for (const s of signals) process.on(s, record);
  globalThis[Symbol.for("weft.earlySignals")] = {
    claim() {
      claimed = true;
      stopRecording();
      return received;
    },
  };
  return {
    unclaimed() {
      if (claimed) return;
      claimed = true;
      delete globalThis[Symbol.for("weft.earlySignals")];
      stopRecording();
      if (received !== null) process.kill(process.pid, received);
    },
  };
}
