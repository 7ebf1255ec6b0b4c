#!/usr/bin/env node
// The `weft` command. In an installed package it runs the build (`dist/`); in a
// checkout, where the TypeScript sources are, it runs them through tsx (no
// build step needed while developing).
import { existsSync } from "node:fs";

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
