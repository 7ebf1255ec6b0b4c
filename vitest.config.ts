import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { buildIsCurrent, RUN_BUILD_VARIABLE } from "./src/cli/testBuiltCommand.ts";
import { SHARED_CLUSTER_FILES, SHARED_FORK_FILES } from "./test/sharedForkFiles.ts";
import { StallWatchdog } from "./test/stallWatchdog.ts";

/**
 * Longer than any test's own timeout (the longest: 300 s, a property test that
 * takes 5 s here): a file this quiet is stuck.
 */
const STALL_MS = Number(process.env.WEFT_TEST_STALL_MS ?? 360_000);

/** Every test file. */
const ALL_TESTS = [
  "src/**/*.test.ts",
  "test/**/*.test.ts",
  "examples/**/*.test.ts",
  "bench/**/*.test.ts",
  "tools/**/*.test.ts",
];

/**
 * Test files of code that keeps no state of its own between calls: the state
 * machines, the wire formats, the utilities, the simulator. They share one fork
 * per worker and its loaded modules (`isolate: false`), which saves the second
 * or so each file otherwise spends starting a fork and loading the same modules
 * again (68 files: 104 s isolated, 38 s shared). The rest keeps a fork per file:
 * their modules hold process-wide registries (task functions, in-process
 * listeners, the task context) that one file must not leave to the next.
 */
const SHARED_FORK_TESTS = [
  "src/worker/state/**/*.test.ts",
  "src/scheduler/state/**/*.test.ts",
  "src/scheduler/coordination/**/*.test.ts",
  "src/protocol/**/*.test.ts",
  // Not wholeFile.test.ts: it mocks node:fs/promises, which a shared fork's
  // module cache may have loaded for wholeFile.ts already (a file before it
  // imported it), so that its renames were real and its tests vacuous or failing.
  "src/util/!(wholeFile).test.ts",
  "src/sim/**/*.test.ts",
  // The replay modules read files and run the worker state machine, nothing
  // more (14 files: import 9-11 s isolated, 5 s shared). Not cli.test.ts: it
  // runs `weft replay`, whose modules are the CLI's.
  "src/replay/!(cli).test.ts",
  // And single files of the other directories (64: 59-78 s run alone
  // isolated, 33-35 s shared, on a loaded host; 11 more later: 11-12 s of wall
  // isolated, 4 s shared).
  ...SHARED_FORK_FILES,
];

/**
 * Three files at a time even on two cores (vitest's default there is one): much
 * test time is spent waiting on sockets, child processes and timers, not on the
 * CPU, so another file runs in that time. Two forks left a fifth of both cores
 * idle: a fresh-clone `npm test` took 9 m 45 s with two, 8 m 57 s with three
 * (same commit, quiet host; each file's tests some 30% slower, in step with the
 * load every test of the suite is written to bear).
 */
const MAX_WORKERS = Math.max(3, availableParallelism() - 1);

/**
 * The `weft` processes tests start run the build when it is current (as it
 * always is in `npm test`, which builds first): through tsx, each one's start
 * cost about 0.9 s more CPU (2.1 s against 1.2 s for a `weft run`), some 60 s
 * of CPU over the suite, on two cores that run it CPU-bound. A run after an
 * edit without `npm run build` runs the sources, so tests never run stale code.
 * A plain `.mjs` task module such a process imports must then import the
 * build's modules, not the sources' (`weftModuleUrl`).
 */
const SPAWNED_WEFT_ENV: Record<string, string> = buildIsCurrent()
  ? { [RUN_BUILD_VARIABLE]: "1" }
  : {};

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: MAX_WORKERS,
    env: SPAWNED_WEFT_ENV,
    reporters: ["default", new StallWatchdog(STALL_MS)],
    projects: [
      {
        extends: true,
        test: { name: "shared-fork", include: SHARED_FORK_TESTS, isolate: false },
      },
      {
        // Cluster tests sharing forks among themselves (never with the files
        // above, whose forks are their project's): see SHARED_CLUSTER_FILES.
        // Vitest queues the projects in the order of their names, so these run
        // after own-fork and before shared-fork, whose many short files then
        // fill the cores as the long ones end.
        extends: true,
        test: {
          name: "shared-cluster",
          include: [...SHARED_CLUSTER_FILES],
          isolate: false,
          setupFiles: ["test/sharedClusterSetup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "own-fork",
          include: ALL_TESTS,
          exclude: [...SHARED_FORK_TESTS, ...SHARED_CLUSTER_FILES],
        },
      },
    ],
  },
});
