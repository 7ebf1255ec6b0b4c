/**
 * A vitest reporter that ends a run whose test file has stalled: no test of it
 * started or finished for `stallMs`. Each test has its own timeout, but a fork
 * stuck in synchronous code, or whose timers no longer fire, never reaches it,
 * and the run would wait for it until CI's own limit, saying nothing of where.
 * This names the file and fails the run.
 */

import { readdirSync, readFileSync } from "node:fs";
import type { Reporter, TestCase, TestModule, Vitest } from "vitest/node";

/** The processes descending from `pid`, children before their own (Linux's /proc; none elsewhere). */
function descendants(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (listed !== "") children.push(...listed.split(/\s+/).map(Number));
    }
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

/** A test file that stalled, for how long, and the test it last started, if any. */
export interface Stall {
  readonly file: string;
  readonly quietMs: number;
  readonly lastTest: string | null;
}

export interface StallWatchdogOptions {
  /** How often to look (default: every 10 s, or `stallMs` if shorter). */
  readonly checkEveryMs?: number;
  /** What to do about stalled files (default: say which, kill the forks, fail the run). */
  readonly onStall?: (stalls: readonly Stall[], vitest: Vitest | null) => void;
}

export class StallWatchdog implements Reporter {
  private vitest: Vitest | null = null;
  /** The test files under way: when each last moved, and the test it started last. */
  private readonly underWay = new Map<string, { at: number; lastTest: string | null }>();
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly checkEveryMs: number;
  private readonly onStall: (stalls: readonly Stall[], vitest: Vitest | null) => void;

  constructor(
    private readonly stallMs: number,
    options: StallWatchdogOptions = {},
  ) {
    this.checkEveryMs = options.checkEveryMs ?? Math.min(10_000, stallMs);
    this.onStall = options.onStall ?? ((stalls, vitest) => this.stopRun(stalls, vitest));
  }

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestModuleStart(m: TestModule): void {
    this.underWay.set(m.moduleId, { at: Date.now(), lastTest: null });
    if (this.timer === null) {
      this.timer = setInterval(() => this.check(), this.checkEveryMs);
      this.timer.unref();
    }
  }

  onTestCaseReady(t: TestCase): void {
    this.moved(t.module.moduleId, t.fullName);
  }

  onTestCaseResult(t: TestCase): void {
    this.moved(t.module.moduleId);
  }

  onTestModuleEnd(m: TestModule): void {
    this.underWay.delete(m.moduleId);
  }

  onTestRunEnd(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * `moduleId`, under way, moved now; `lastTest` is the test it started, if it
   * started one. A test's event for a file already ended (vitest may report a
   * result after the file's end) is not a file under way again: it would be
   * named as stalled once the run went on long enough (a CI run of 11 minutes
   * on a loaded host was stopped for a file that had ended 6 minutes before).
   */
  private moved(moduleId: string, lastTest?: string): void {
    const known = this.underWay.get(moduleId);
    if (known === undefined) return;
    this.underWay.set(moduleId, { at: Date.now(), lastTest: lastTest ?? known.lastTest });
  }

  private check(): void {
    if (this.stopping) return;
    const now = Date.now();
    const stalls = [...this.underWay]
      .map(([file, { at, lastTest }]) => ({ file, quietMs: now - at, lastTest }))
      .filter((s) => s.quietMs >= this.stallMs);
    if (stalls.length === 0) return;
    this.stopping = true;
    this.onStall(stalls, this.vitest);
  }

  private stopRun(stalls: readonly Stall[], vitest: Vitest | null): void {
    for (const { file, quietMs, lastTest } of stalls) {
      process.stderr.write(
        `\nstall watchdog: ${file} has neither started nor finished a test for ${Math.round(quietMs / 1000)} s` +
          ` (limit ${this.stallMs / 1000} s): it hangs` +
          (lastTest === null ? "" : `, in or after the test "${lastTest}"`) +
          ". Stopping the run.\n",
      );
    }
    process.exitCode = 1;
    // A stuck fork never answers vitest's request to close, and would outlive
    // the run; so would the processes its tests started.
    for (const pid of descendants(process.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    void vitest?.exit(true);
  }
}
