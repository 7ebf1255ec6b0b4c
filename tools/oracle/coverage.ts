/**
 * Which stimuli a set of conformance vectors holds, and in which task states: each
 * stimulus is replayed through the port (as the conformance runner replays it, store
 * failures included, but comparing nothing) and counted by class and the state of the task it names; for the
 * keys of acquire-replicas, refresh-who-has, remove-replicas, free-keys and
 * update-data, the dependencies of compute-task and the keys in flight from a peer
 * whose transfer ends, each key's state is counted as well. A cancelled or resumed task
 * counts with its `previous` and `next`. Every transition of the table is counted too,
 * with the task's state after it and the stimulus that caused it.
 *
 * With `--against DIR`, lists the combinations the vectors of DIR hold that the given
 * ones do not (exit code 1 if any): did the oracle's streams meet everything the
 * published vectors do?
 *
 *   npx tsx tools/oracle/coverage.ts /tmp/oracle [--against ../shared/conformance]
 */
import { Command } from "commander";
import { collectVectorInputs } from "../../src/cli/conformanceRunner.ts";
import { parseVector, readMaybeGzip, replayVector } from "../../src/protocol/conformance.ts";
import { isEntryPoint } from "../../src/util/entryPoint.ts";
import { stateLabel, stimulusCombinations } from "../../src/worker/state/fuzz/stimulusCoverage.ts";
import type { TaskState } from "../../src/worker/state/taskState.ts";

/**
 * A transition of the table as counted: `start -> finish`, the task's state after it
 * (`forgotten` once it left `tasks`) and the stimulus that caused it.
 */
export function transitionCombination(
  start: string,
  finish: string,
  after: TaskState | undefined,
  stimulus: string,
): string {
  const state = after === undefined ? "forgotten" : stateLabel(after);
  return `transition ${start} -> ${finish} => ${state} (${stimulus})`;
}

/** What {@link coverageOf} found. */
export interface Coverage {
  /** Occurrences of each combination. */
  readonly combinations: Map<string, number>;
  /** Vector files read. */
  readonly vectors: number;
  /** Files that are not valid vectors, with why. */
  readonly unreadable: string[];
  /** Vectors whose replay raised where the recording did not (counted up to there). */
  readonly diverged: string[];
}

/** Replay every vector under `paths` (files or directories) and count its stimuli. */
export function coverageOf(paths: readonly string[]): Coverage {
  const combinations = new Map<string, number>();
  const unreadable: string[] = [];
  const diverged: string[] = [];
  let vectors = 0;
  for (const { file, problem } of collectVectorInputs(paths)) {
    if (problem !== undefined) {
      unreadable.push(`${file}: ${problem}`);
      continue;
    }
    let vector: ReturnType<typeof parseVector>;
    try {
      vector = parseVector(readMaybeGzip(file), file);
    } catch (err) {
      unreadable.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    vectors++;
    const count = (c: string) => combinations.set(c, (combinations.get(c) ?? 0) + 1);
    let stimulus = "";
    const mismatch = replayVector(vector, {
      compare: false,
      beforeStep: (ws, ev, i) => {
        for (const c of stimulusCombinations(ws, ev)) count(c);
        stimulus = ev.cls;
        if (i === 0) {
          ws.plugins.set("oracle-coverage", {
            transition: (key, start, finish) =>
              count(transitionCombination(start, finish, ws.tasks.get(key), stimulus)),
          });
        }
      },
    });
    if (mismatch !== null) diverged.push(`${file}: step ${mismatch.step} (${mismatch.what})`);
  }
  return { combinations, vectors, unreadable, diverged };
}

function main(argv: readonly string[]): void {
  new Command()
    .name("oracle-coverage")
    .description(
      "count the stimuli of conformance vectors by class and task state; with --against, list what other vectors hold that these do not",
    )
    .argument("<path...>", "vector files or directories")
    .option("--against <path...>", "vectors whose combinations the given ones should all hold")
    .action((paths: string[], o: { against?: string[] }) => {
      const mine = coverageOf(paths);
      for (const u of mine.unreadable) console.error(`unreadable: ${u}`);
      for (const d of mine.diverged) console.error(`raised (counted up to there): ${d}`);
      if (o.against === undefined) {
        for (const [c, n] of [...mine.combinations].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
          console.log(`${String(n).padStart(8)}  ${c}`);
        }
        console.log(`${mine.combinations.size} combinations in ${mine.vectors} vectors`);
        return;
      }
      const theirs = coverageOf(o.against);
      const missing = [...theirs.combinations.keys()].filter((c) => !mine.combinations.has(c));
      for (const c of missing.sort()) {
        console.log(`missing  ${c}  (${theirs.combinations.get(c)} in ${o.against.join(" ")})`);
      }
      console.log(
        `${mine.combinations.size} combinations in ${mine.vectors} vectors; ${theirs.combinations.size} in ${theirs.vectors} vectors against; ${missing.length} of those missing`,
      );
      if (missing.length > 0) process.exitCode = 1;
    })
    .parse(argv as string[]);
}

if (isEntryPoint(import.meta.url)) main(process.argv);
