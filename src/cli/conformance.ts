import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
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
export function runConformance(paths: readonly string[], opts: { verbose?: boolean } = {}): number {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let files: string[];
  try {
    files = collectVectorFiles(paths);
  } catch (err) {
    console.error(`conformance: ${(err as Error).message}`);
    return 2;
  }
  for (const file of files) {
    let vector: ReturnType<typeof parseVector>;
    try {
      vector = parseVector(readMaybeGzip(file), file);
    } catch (err) {
      failed++;
      console.log(`FAIL ${file}: broken vector file: ${(err as Error).message}`);
      continue;
    }
    if (vector.orderSensitive) {
      skipped++;
      if (opts.verbose) console.log(`SKIP ${vector.name} (order-sensitive)`);
      continue;
    }
    let mismatch: ReturnType<typeof replayVector>;
    try {
      mismatch = replayVector(vector);
    } catch (err) {
      failed++;
      console.log(`FAIL ${vector.name} (${file}): ${(err as Error).message}`);
      continue;
    }
    if (mismatch === null) {
      passed++;
      if (opts.verbose) console.log(`ok   ${vector.name}`);
      continue;
    }
    failed++;
    console.log(`FAIL ${vector.name} (${file})`);
    console.log(`  first divergence at step ${mismatch.step} (${mismatch.what})`);
    console.log(`  event: ${canonical(mismatch.event).slice(0, 400)}`);
    for (const line of mismatch.details) console.log(`    ${line.slice(0, 400)}`);
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 || passed + failed + skipped === 0 ? 1 : 0;
}

const program = new Command()
  .name("conformance")
  .description(
    "Replay conformance vectors recorded from Dask's worker state machine and report every divergence",
  )
  .argument("<paths...>", "vector files (.json, .json.gz) or directories holding them")
  .option("-v, --verbose", "list every vector, not only failures")
  .action((paths: string[], opts: { verbose?: boolean }) => {
    process.exitCode = runConformance(paths, opts);
  });

program.parse();
