import { defineConfig } from "vitest/config";
import { StallWatchdog } from "./test/stallWatchdog.ts";

/**
 * Longer than any test's own timeout (the longest: 300 s, a property test that
 * takes 5 s here): a file this quiet is stuck.
 */
const STALL_MS = Number(process.env.WEFT_TEST_STALL_MS ?? 360_000);

export default defineConfig({
  test: {
    include: [
      "src/**/*.test.ts",
      "test/**/*.test.ts",
      "examples/**/*.test.ts",
      "bench/**/*.test.ts",
      "tools/**/*.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", new StallWatchdog(STALL_MS)],
  },
});
