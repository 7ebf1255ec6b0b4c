#!/usr/bin/env node
// The `weft` command. In an installed package it runs the build (`dist/`); in a
// checkout, where the TypeScript sources are, it runs them through tsx (no
// build step needed while developing).
import { existsSync } from "node:fs";

// A worker a nanny started (`weft worker --nanny`) is stopped by its nanny's
// SIGTERM. A Ctrl-C reaches the whole process group, the worker too: ignored
// here, from the start (its sources still loading), it neither kills the worker
// nor starts a close that the nanny's SIGTERM would then cut short.
if (process.env.WEFT_NANNY_CHILD === "1") process.on("SIGINT", () => {});

const sources = new URL("../src/cli/weft.ts", import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import("../dist/cli/weft.js"));
}
process.exitCode = await main(process.argv);
