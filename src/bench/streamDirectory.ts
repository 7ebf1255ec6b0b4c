/**
 * The recorded streams `weft bench state` replays: the `*.jsonl.gz` files of its
 * `--dir`, or why there are none, said once. A `--dir` it could not read was said
 * twice (Node's `ENOENT: no such file or directory, scandir …`, then that it held
 * no streams), and neither line said where it had looked: the default,
 * `../shared/bench`, is relative to the current directory, right only at the root
 * of a checkout.
 */

import { readdirSync } from "node:fs";
import { resolve } from "node:path";

const GIVE_DIR = "give --dir the directory of the recorded streams";

/** `dir` as given, with the directory it names when it is relative. */
function looked(dir: string): string {
  const absolute = resolve(dir);
  return absolute === dir
    ? dir
    : `${dir} (looked in ${absolute}: --dir is relative to the current directory)`;
}

/** The names of the stream files in `dir`, sorted, or why there are none. */
export function streamFiles(dir: string): { files: string[] } | { problem: string } {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    const why =
      code === "ENOENT"
        ? "no such directory"
        : code === "ENOTDIR"
          ? "not a directory"
          : `cannot read the directory (${code ?? message})`;
    return { problem: `${why}: ${looked(dir)}; ${GIVE_DIR}` };
  }
  const files = entries.filter((f) => f.endsWith(".jsonl.gz")).sort();
  // Measuring nothing is not a result: a wrong --dir must not pass as a benchmark run.
  if (files.length === 0)
    return { problem: `no *.jsonl.gz streams in ${looked(dir)}; ${GIVE_DIR}` };
  return { files };
}
