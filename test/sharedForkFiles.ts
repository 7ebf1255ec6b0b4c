/**
 * Test files outside the directories `vitest.config.ts` shares a fork for whose
 * modules also keep no state between calls, listed one by one: nothing they
 * import (transitively) holds a process-wide registry (task functions,
 * in-process listeners, the task context, the dialer, the wire codec's
 * buffers, the upload directory, signal handlers), and the files themselves
 * mock nothing, fake no timers and set no environment variables (a child
 * process some start, as bench/pairedSides.test.ts does, shares nothing with
 * the fork). Nor do they measure the process itself: src/bench/memoryCost.test.ts
 * keeps its own fork, as a buffer it takes for fresh memory may be memory the
 * files before it freed (the allocator keeps it once they freed large buffers),
 * touched with no page fault. A file not listed keeps its own fork: the safe
 * default for a new one.
 */
export const SHARED_FORK_FILES: readonly string[] = [
  "bench/pairedSides.test.ts",
  "bench/simScale.test.ts",
  "bench/stateAb.test.ts",
  "src/bench/benchOptions.test.ts",
  "src/bench/graphNames.test.ts",
  "src/bench/stateBench.test.ts",
  "src/bench/stats.test.ts",
  "src/bench/streamFile.test.ts",
  "src/cli/commands/childExit.test.ts",
  "src/cli/commands/childLookup.test.ts",
  "src/cli/commands/contactAddress.test.ts",
  "src/cli/commands/context.test.ts",
  "src/cli/commands/millisecondsOption.test.ts",
  "src/cli/commands/nannyChildExit.test.ts",
  "src/cli/commands/optionFlags.test.ts",
  "src/cli/commands/stdoutDiversion.test.ts",
  "src/cli/commands/testProcesses.test.ts",
  "src/cli/conformance.test.ts",
  "src/cli/conformanceRunner.test.ts",
  "src/cli/testBuiltCommand.test.ts",
  "src/client/argChecks.test.ts",
  "src/client/cancels.test.ts",
  "src/client/clientDatasets.test.ts",
  "src/client/clientOptions.test.ts",
  "src/client/errors.test.ts",
  "src/client/future.test.ts",
  "src/client/futureSearch.test.ts",
  "src/client/gatherer.test.ts",
  "src/client/keyRecord.test.ts",
  "src/client/keyRecords.test.ts",
  "src/client/pendingRegistrations.test.ts",
  "src/client/results.test.ts",
  "src/client/schedulerMessages.test.ts",
  "src/client/submissions.test.ts",
  "src/client/wireCopy.test.ts",
  "src/client/writablePath.test.ts",
  "src/comm/framing.test.ts",
  "src/comm/httpEndpoints.test.ts",
  "src/comm/messageLayout.test.ts",
  "src/comm/ownedDeserialize.test.ts",
  "src/comm/peerLimit.test.ts",
  "src/comm/replyLimit.test.ts",
  "src/comm/throttledRoute.test.ts",
  "src/scheduler/askedWorkers.test.ts",
  "src/scheduler/events.test.ts",
  "src/scheduler/idleWatch.test.ts",
  "src/scheduler/pubsub.test.ts",
  "src/scheduler/statusCharts.test.ts",
  "src/scheduler/statusPage.test.ts",
  "src/scheduler/taskStream.test.ts",
  "src/scheduler/unsentToClient.test.ts",
  "src/scheduler/unsentToWorker.test.ts",
  "src/scheduler/uploadRecord.test.ts",
  "src/worker/actorHandleGuard.test.ts",
  "src/worker/baseWorker.test.ts",
  "src/worker/dataServer.test.ts",
  "src/worker/execution.test.ts",
  "src/worker/executor.test.ts",
  "src/worker/gatherDep.test.ts",
  "src/worker/getDataParts.test.ts",
  "src/worker/httpEndpoints.test.ts",
  "src/worker/lostSpills.test.ts",
  "src/worker/memoryMonitor.test.ts",
  "src/worker/memoryOrder.test.ts",
  "src/worker/pauseReasons.test.ts",
  "src/worker/raceSignal.test.ts",
  "src/worker/resolveArgs.test.ts",
  "src/worker/schedulerEvents.test.ts",
  "src/worker/schedulerMessage.test.ts",
  "src/worker/slotGate.test.ts",
  "src/worker/statusPage.test.ts",
  "src/worker/threadPlacement.test.ts",
  "src/worker/throttledGc.test.ts",
  "src/worker/unsentToScheduler.test.ts",
  "src/worker/updateData.test.ts",
  "src/worker/workerPlugins.test.ts",
  "test/apiDocs.test.ts",
  "test/sharedForkFiles.test.ts",
  "tools/oracle/chaos.test.ts",
  "tools/oracle/coverage.test.ts",
];

/**
 * Cluster test files that share a fork with each other (the `shared-cluster`
 * project), though what they import holds process-wide registries: each file
 * closes the clusters, listeners and connections it opens, so that it leaves
 * those registries as it found them. Sharing saves the second or so of CPU each
 * file otherwise spends starting a fork and loading the client, scheduler and
 * worker modules again: `vitest run src/client` (98 files, these 53 among them)
 * took 145-150 s of wall and 248-257 s of CPU with a fork for each file,
 * 113-128 s and 181-216 s with these sharing (two runs each, alternated; in the
 * whole suite, 58 fewer forks and some 30-60 s less CPU). What a listed file
 * must not do, checked by `test/sharedForkFiles.test.ts`:
 * - load task functions other than the client's test tasks (`src/client/*Tasks.ts`,
 *   whose names are distinct), by import or by a task module's URL, directly or
 *   through the modules it imports: another module defining `inc` (such as
 *   `src/worker/testTasks.ts` or `src/bench/clusterTasks.ts`) would throw in a
 *   process that has loaded them;
 * - define task functions at run time (a task module it writes), mock modules,
 *   fake timers, spy, set environment variables or V8 flags (but `--expose-gc`,
 *   which only lends the contexts made after it a `gc()`), change directory, add
 *   process listeners or count the process's timers, whose effects outlive the file.
 * Nor may it assert what the process has loaded, which files before it decide
 * (`src/client/localCluster.test.ts` keeps its own fork for that). The client's
 * test tasks' gates and logs are reset before each file
 * (`test/sharedClusterSetup.ts`).
 */
export const SHARED_CLUSTER_FILES: readonly string[] = [
  "src/client/activeMemoryManager.test.ts",
  "src/client/actor.test.ts",
  "src/client/actorFrozenWorker.test.ts",
  "src/client/actorValues.test.ts",
  "src/client/actors.test.ts",
  "src/client/apiMisuse.test.ts",
  "src/client/askWorkers.test.ts",
  "src/client/brokenLogger.test.ts",
  "src/client/completion.test.ts",
  "src/client/coordination.test.ts",
  "src/client/coordinationFrozenWorker.test.ts",
  "src/client/datasets.test.ts",
  "src/client/failures.test.ts",
  "src/client/fireAndForget.test.ts",
  "src/client/graph.test.ts",
  "src/client/heldLeases.test.ts",
  "src/client/httpEndpoints.test.ts",
  "src/client/introspectionMessageLimit.test.ts",
  "src/client/keptValues.test.ts",
  "src/client/mapKeys.test.ts",
  "src/client/metadata.test.ts",
  "src/client/nullOptions.test.ts",
  "src/client/performanceReport.test.ts",
  "src/client/profile.test.ts",
  "src/client/progress.test.ts",
  "src/client/proxyContents.test.ts",
  "src/client/pubsub.test.ts",
  "src/client/readField.test.ts",
  "src/client/refusedMessages.test.ts",
  "src/client/replicate.test.ts",
  "src/client/restart.test.ts",
  "src/client/resultMessageLimit.test.ts",
  "src/client/resultValues.test.ts",
  "src/client/retry.test.ts",
  "src/client/run.test.ts",
  "src/client/runOnWorkers.test.ts",
  "src/client/scatterRegistration.test.ts",
  "src/client/scatterValues.test.ts",
  "src/client/schedulerMessageLimit.test.ts",
  "src/client/sendOrder.test.ts",
  "src/client/spill.test.ts",
  "src/client/spillLost.test.ts",
  "src/client/spillLostWaits.test.ts",
  "src/client/submitOptions.test.ts",
  "src/client/taskStream.test.ts",
  "src/client/tcpValues.test.ts",
  "src/client/threadMessageLimit.test.ts",
  "src/client/tls.test.ts",
  "src/client/tokenize.test.ts",
  "src/client/unknownOptions.test.ts",
  "src/client/waitForWorkers.test.ts",
  "src/client/workStealing.test.ts",
  "src/client/workerRestrictions.test.ts",
];
