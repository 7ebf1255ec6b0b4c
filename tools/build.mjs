// `npm run build`: compile src/ into dist/ (JavaScript, declarations, source
// maps; tests and test helpers left out), from scratch so that nothing of a
// removed source file lingers, plus the files tsc does not emit.
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(
    "usage: npm run build\n\nCompiles src/ into dist/ from scratch (JavaScript, declarations, source maps;\ntests left out), as prepack does before npm pack.",
  );
  process.exit(0);
}
const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", `${root}tsconfig.build.json`], { stdio: "inherit" });
copyFileSync(`${root}src/worker/threadBootstrap.mjs`, `${root}dist/worker/threadBootstrap.mjs`);
copyFileSync(`${root}src/util/uploadResolve.mjs`, `${root}dist/util/uploadResolve.mjs`);
