/** The conformance runner: replays vector files and reports every divergence. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { canonical, parseVector, readMaybeGzip, replayVector } from "../protocol/conformance.ts";

/** Every vector file under the given files and directories, sorted. */
export function collectVectorFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const name of readdirSync(p).sort()) walk(join(p, name));
    } else if (/\.json(\.gz)?$/.test(p)) {
      out.push(p);
    }
  };
  for (const p of paths) walk(p);
  return out;
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
  let files: string[];
  try {
    files = collectVectorFiles(paths);
  } catch (err) {
    (opts.log ?? ((line: string) => console.error(line)))(`conformance: ${(err as Error).message}`);
    return 2;
  }
  for (const file of files) {
    let vector: ReturnType<typeof parseVector>;
    try {
      vector = parseVector(readMaybeGzip(file), file);
    } catch (err) {
      failed++;
      log(`FAIL ${file}: broken vector file: ${(err as Error).message}`);
      continue;
    }
    if (vector.orderSensitive) {
      skipped++;
      if (opts.verbose) log(`SKIP ${vector.name} (order-sensitive)`);
      continue;
    }
    let mismatch: ReturnType<typeof replayVector>;
    try {
      mismatch = replayVector(vector);
    } catch (err) {
      failed++;
      log(`FAIL ${vector.name} (${file}): ${(err as Error).message}`);
      continue;
    }
    if (mismatch === null) {
      passed++;
      if (opts.verbose) log(`ok   ${vector.name}`);
      continue;
    }
    failed++;
    log(`FAIL ${vector.name} (${file})`);
    log(`  first divergence at step ${mismatch.step} (${mismatch.what})`);
    log(`  event: ${canonical(mismatch.event).slice(0, 400)}`);
    for (const line of mismatch.details) log(`    ${line.slice(0, 400)}`);
  }
  log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 || passed + failed + skipped === 0 ? 1 : 0;
}
