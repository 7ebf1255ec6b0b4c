#!/usr/bin/env node
// The `weft` command: runs src/cli/weft.ts through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/weft.ts");
process.exitCode = await main(process.argv);
