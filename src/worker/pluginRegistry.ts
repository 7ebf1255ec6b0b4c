/**
 * What a worker's plugins (workerPlugins.ts) and a nanny's (nannyPlugins.ts)
 * have in common: kept by name, each set up as it is installed and torn down
 * as it is removed or replaced, one add or removal at a time, in the order
 * asked, so that a plugin given again while the one before it is still being
 * set up replaces it only once that setup is over.
 */

import { CloseBudget, closeEachWithin, type Unfinished } from "../util/closeBudget.ts";
import { tellFailure } from "../util/guardedCall.ts";
import { ReentrantSerial } from "../util/reentrantSerial.ts";

/** What a close did not wait for: a plugin's `setup` or `teardown` still running at its deadline. */
export type UnfinishedStep = "setup" | "teardown";

/** Plugins by name; `E` is what is kept of each. */
export abstract class PluginRegistry<E> {
  /** Adds and removals, one at a time (those a plugin's hook asks for within one, at once). */
  private readonly serial = new ReentrantSerial();

  constructor(
    /** The plugins, in the order added. */
    protected readonly installed: Map<string, E>,
    /**
     * Told of the teardown that throws of a plugin being replaced: the new one
     * is set up all the same (as Dask's `plugin_add`, which ignores the old
     * one's error), its registration not failed by another plugin's error.
     * Also of a teardown no caller waits for (a subclass's, see NannyPlugins).
     */
    protected readonly replacedTeardownFailed: (name: string, err: unknown) => void,
  ) {}

  /** Tear down the plugin kept as `entry` (it has been taken out already). */
  protected abstract teardown(entry: E): unknown;

  /** The plugins' names, in the order added. */
  get names(): string[] {
    return [...this.installed.keys()];
  }

  /** Remove the plugin `name` and tear it down: false if there is none. Its teardown's error is rethrown. */
  remove(name: string): Promise<boolean> {
    return this.inTurn(() => this.removeNow(name));
  }

  /** Set by {@link removeAll}: adds are refused from then on. */
  private closed = false;

  /** The plugin whose setup or teardown runs now, if any (what a close may be waiting on). */
  private busy: Unfinished<UnfinishedStep> | null = null;

  /** Set by {@link inProgressStalled}: a close does not wait on the add or removal in progress. */
  private stalled = false;

  /**
   * Work of a plugin that no add or removal waits on, but a close must: a nanny
   * plugin's setup that ended past its timeout, and the teardown that undoes it
   * (see {@link linger}). Each entry says which plugin, and its step now.
   */
  private readonly lingering = new Map<Promise<void>, { name: string; step: UnfinishedStep }>();

  /**
   * The add or removal in progress waits on nothing left to run (the server's
   * start, waiting on it, stalled: see `StartWatch`): it can never end, and
   * {@link removeAll} tears its plugin down without waiting for it. Waited
   * on, it held the close for its whole timeout, and the teardowns of the
   * plugins set up before it were then not waited on at all.
   */
  inProgressStalled(): void {
    this.stalled = true;
  }

  /**
   * Remove and tear down every plugin, for good (its worker or nanny closes):
   * an add still on its way (its factory awaited) is refused rather than set
   * up after the teardown, never to be torn down. `failed` hears of each
   * teardown that throws. The add or removal in progress (unless it stalled:
   * see {@link inProgressStalled}) and then the teardowns, one at a time in the order added, are waited on until
   * `budget`'s deadline at most: `unfinished` hears of the plugin whose setup
   * or teardown is still running then, and of each later teardown that does
   * not end at once (they are still called, in order), and the close goes on.
   * Then, within the same budget, what lingers (see {@link linger}): a setup
   * that ended past its timeout queues its teardown after the close began, and
   * a close that did not wait for it would let the process exit mid-teardown.
   */
  async removeAll(
    failed: (name: string, err: unknown) => void,
    budget: CloseBudget = new CloseBudget(Number.POSITIVE_INFINITY),
    unfinished: (name: string, step: UnfinishedStep) => void = () => {},
  ): Promise<void> {
    this.closed = true;
    await closeEachWithin<string, UnfinishedStep>({
      budget,
      // Not a job of the queue: one whose setup or teardown never ends would hold it
      // for good. A plugin in its setup is torn down all the same, as Dask's close does.
      ...(this.stalled
        ? {}
        : { inProgress: { settled: this.serial.run(async () => {}), busy: () => this.busy } }),
      items: () => [...this.installed.keys()],
      nameOf: (name) => name,
      close: (name) => this.removeNow(name),
      closeStep: "teardown",
      failed,
      unfinished,
    });
    // Iterating a Map visits what is added meanwhile, and skips what has settled since.
    for (const work of this.lingering.keys()) {
      if (await budget.settles(work)) continue;
      for (const what of this.lingering.values()) {
        try {
          unfinished(what.name, what.step);
        } catch {}
      }
      return;
    }
  }

  /**
   * Have a close wait for `work` of the plugin `name`, which no add or removal
   * waits on: `step` says what it runs, and `work` may move it on (a late setup,
   * then its teardown). A rejection of `work` is for its own handler.
   */
  protected linger(name: string, work: (what: { step: UnfinishedStep }) => Promise<unknown>): void {
    const what = { name, step: "setup" as UnfinishedStep };
    const settled = work(what).then(
      () => {},
      () => {},
    );
    this.lingering.set(settled, what);
    void settled.then(() => this.lingering.delete(settled));
  }

  /** Run `job` once the adds and removals asked before are over (an add's own steps). */
  protected inTurn<T>(job: () => Promise<T>): Promise<T> {
    return this.serial.run(job);
  }

  /**
   * Within a job of {@link inTurn}: tear down the plugin `name` (a teardown
   * that throws is told of, not rethrown), keep `entry` in its place and run
   * `setup`. When the setup throws, `entry` is not kept (unless the setup
   * itself replaced it) and the error is rethrown.
   */
  protected async install(name: string, entry: E, setup: () => unknown): Promise<void> {
    if (this.closed) throw new Error(`plugin ${name} not set up: closing, its plugins torn down`);
    await this.removeNow(name).catch((err: unknown) =>
      tellFailure((e) => this.replacedTeardownFailed(name, e), err),
    );
    this.installed.set(name, entry);
    // A hook's own add or removal runs within the one in progress: that one is busy again after.
    const outer = this.busy;
    this.busy = { name, step: "setup" };
    try {
      await setup();
    } catch (err) {
      if (this.installed.get(name) === entry) this.installed.delete(name);
      throw err;
    } finally {
      this.busy = outer;
    }
  }

  /** Within a job of {@link inTurn} (or a close): remove the plugin `name` and tear it down. */
  protected async removeNow(name: string): Promise<boolean> {
    const entry = this.installed.get(name);
    if (entry === undefined) return false;
    this.installed.delete(name);
    const outer = this.busy;
    this.busy = { name, step: "teardown" };
    try {
      await this.teardown(entry);
    } finally {
      this.busy = outer;
    }
    return true;
  }
}
