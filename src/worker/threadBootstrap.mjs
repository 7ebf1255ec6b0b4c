// The entry file of a worker's pool threads (given to piscina).
//
// Plain JavaScript, so that it runs both beside weft's TypeScript sources (a
// checkout) and in its build (`dist/`, an installed package; the build copies
// this file there). Pool threads do not inherit a loader registered in the
// main thread by tsx's API (only `--import tsx` on node's command line), so
// this file registers tsx's ESM loader for the thread when it must import
// TypeScript: weft's own sources, or task modules written in TypeScript.
import { existsSync } from "node:fs";
import { workerData } from "node:worker_threads";

const TYPESCRIPT = /\.(?:[mc]?ts|tsx)(?:[?#].*)?$/;

const built = new URL("./threadMain.js", import.meta.url);
const threadMain = existsSync(built)
  ? built.href
  : new URL("./threadMain.ts", import.meta.url).href;
const taskModules = Array.isArray(workerData?.taskModules) ? workerData.taskModules : [];

let registered = false;
async function registerTsx() {
  if (registered) return;
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch (err) {
    throw new Error(
      "weft pool thread: importing TypeScript needs tsx, which cannot be loaded here " +
        "(install it, or give task modules compiled to JavaScript)",
      { cause: err },
    );
  }
  register();
  registered = true;
}

// Node.js 20 cannot import TypeScript at all; 22 strips some of it, with errors of
// its own for what it cannot strip (or files under node_modules): tsx handles all.
if (TYPESCRIPT.test(threadMain) || taskModules.some((url) => TYPESCRIPT.test(String(url)))) {
  await registerTsx();
}

const thread = await import(threadMain);
await thread.init(workerData);

/** The piscina handler. */
export default thread.handle;
