/**
 * Run before each test file of the `shared-cluster` project (`vitest.config.ts`),
 * whose files share a process and its loaded modules: the client's test tasks
 * start each file as a fresh process has them, whatever the file before left.
 */
import { countingPlugins } from "../src/client/schedulerTestTasks.ts";
import { resetTestTaskState } from "../src/client/testTasks.ts";

resetTestTaskState();
countingPlugins.clear();
