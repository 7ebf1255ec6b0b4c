/** The conformance runner: replays vector files and reports every divergence. */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  NO_STEPS_PROBLEM,
  parseVector,
  readMaybeGzip,
  replayVector,
} from "../protocol/conformance.ts";
import { eventLine } from "../protocol/conformanceDiff.ts";
import { DaskDictError } from "../protocol/daskJson/fields.ts";
import { whyNotAVector } from "../replay/vectorReplay.ts";
import { cutText } from "../util/cutText.ts";

const VECTOR_FILE = /\.json(\.gz)?$/;

/** A vector file to run, or a path that cannot be run, and why. */
export type VectorInput =
  | { readonly file: string; readonly problem?: undefined }
  | { readonly file: string; readonly problem: string };

/** Why `err` (from stat or readdir) kept a path from being read, in words. */
function cannotRead(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "cannot read: no such file (or a dangling symlink)";
  if (code === "EACCES" || code === "EPERM") return "cannot read: permission denied";
  return `cannot read: ${(err as Error).message}`;
}

/**
 * Every vector file under the given files and directories, sorted, and every
 * path that cannot be run. A path named on the command line must be a vector
 * or a directory; inside a directory, files that are not vectors are ignored
 * (a vector directory holds READMEs and the like), but unreadable vectors and
 * subdirectories are reported.
 */
export function collectVectorInputs(paths: readonly string[]): VectorInput[] {
  const out: VectorInput[] = [];
  // Each file and directory once: a path named twice, or reached again through a
  // symbolic link (a loop, even), is not replayed again.
  const seen = new Set<string>();
  const walk = (p: string, named: boolean) => {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      if (named || VECTOR_FILE.test(p)) out.push({ file: p, problem: cannotRead(err) });
      return;
    }
    const real = realpathSync(p);
    if (seen.has(real)) return;
    seen.add(real);
    if (!isDir) {
      if (VECTOR_FILE.test(p)) out.push({ file: p });
      else if (named) out.push({ file: p, problem: "not a vector file (.json or .json.gz)" });
      return;
    }
    let names: string[];
    try {
      names = readdirSync(p).sort();
    } catch (err) {
      out.push({ file: p, problem: cannotRead(err) });
      return;
    }
    for (const name of names) walk(join(p, name), false);
  };
  for (const p of paths) walk(p, true);
  return out;
}

/** Every vector file under the given files and directories, sorted (unreadable paths left out). */
export function collectVectorFiles(paths: readonly string[]): string[] {
  return collectVectorInputs(paths)
    .filter((i) => i.problem === undefined)
    .map((i) => i.file);
}

/** Run the conformance vectors; returns the process exit code. */
export function runConformance(
  paths: readonly string[],
  opts: { verbose?: boolean; log?: (line: string) => void } = {},
): number {
  const log = opts.log ?? ((line: string) => console.log(line));
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let unusable = 0;
  for (const { file, problem } of collectVectorInputs(paths)) {
    if (problem !== undefined) {
      // Counted as failed, and the run goes on: one bad path must not hide the other vectors.
      failed++;
      unusable++;
      log(`FAIL ${file}: ${problem}`);
      continue;
    }
    let vector: ReturnType<typeof parseVector>;
    let text: string | null = null;
    try {
      text = readMaybeGzip(file);
      vector = parseVector(text, file);
    } catch (err) {
      failed++;
      unusable++;
      // What the file is when it is no vector (a stream or a dump named .json), as weft replay says.
      const notVector = text === null ? null : whyNotAVector(text, file);
      log(`FAIL ${file}: broken vector file: ${notVector ?? brokenBecause(file, err)}`);
      continue;
    }
    if (vector.steps.length === 0) {
      failed++;
      unusable++;
      log(`FAIL ${vectorName(vector.name, file)}: broken vector file: ${NO_STEPS_PROBLEM}`);
      continue;
    }
    if (vector.orderSensitive) {
      skipped++;
      if (opts.verbose) log(`SKIP ${vectorName(vector.name, file)} (order-sensitive)`);
      continue;
    }
    let mismatch: ReturnType<typeof replayVector>;
    try {
      mismatch = replayVector(vector);
    } catch (err) {
      failed++;
      // Its config, a config_before or an event that does not decode (read as it is
      // replayed): the file is no valid vector, as one that does not parse.
      if (err instanceof DaskDictError) {
        unusable++;
        log(`FAIL ${vectorName(vector.name, file)}: broken vector file: ${err.message}`);
      } else {
        log(`FAIL ${vectorName(vector.name, file)}: ${(err as Error).message}`);
      }
      continue;
    }
    if (mismatch === null) {
      passed++;
      if (opts.verbose) log(`ok   ${vectorName(vector.name, file)}`);
      continue;
    }
    failed++;
    log(`FAIL ${vectorName(vector.name, file)}`);
    log(`  first divergence at step ${mismatch.step} (${mismatch.what})`);
    log(`  event: ${eventLine(mismatch.event)}`);
    for (const line of mismatch.details) log(`    ${cutText(line, 1000)}`);
  }
  if (passed + failed + skipped === 0) log(`no vectors found in ${paths.join(", ")}`);
  log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  // A path that could not be run is unusable input (2), as a missing path always was.
  if (unusable > 0) return 2;
  return failed > 0 || passed + failed + skipped === 0 ? 1 : 0;
}

/** A vector's name and its file; the file alone when the vector has no name of its own. */
function vectorName(name: string, file: string): string {
  return name === file ? file : `${name} (${file})`;
}

/**
 * Why `file` is no vector. zlib's messages (`unexpected end of file`) do not say
 * that they are about the compression: a truncated download reads as a truncated vector.
 */
function brokenBecause(file: string, err: unknown): string {
  const message = withoutFile(file, (err as Error).message);
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === "string" && code.startsWith("Z_")
    ? `not valid gzip (${message})`
    : message;
}

/** `message` without a leading `FILE: `: the FAIL line names the file already. */
function withoutFile(file: string, message: string): string {
  return message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
}
