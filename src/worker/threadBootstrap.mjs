// The entry file of a worker's pool threads (given to piscina).
//
// Pool threads do not inherit tsx's loader from the main thread (neither under
// `tsx`, `node --import tsx`, nor vitest), so this plain-JS file makes sure the
// thread can import TypeScript: it tries, and if Node refuses the `.ts`
// extension it registers tsx's ESM loader for this thread and imports again
// under another URL (a failed import is cached per URL).
import { workerData } from "node:worker_threads";

async function loadThreadMain() {
  try {
    return await import("./threadMain.ts");
  } catch (err) {
    if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  }
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch (err) {
    throw new Error(
      "weft pool thread: Node cannot import TypeScript here and tsx is not installed",
      { cause: err },
    );
  }
  register();
  return await import("./threadMain.ts?tsx");
}

const thread = await loadThreadMain();
await thread.init(workerData);

/** The piscina handler. */
export default thread.handle;
