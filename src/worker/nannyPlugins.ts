/**
 * Nanny plugins (Dask's `NannyPlugin`) as a nanny (`weft worker --nanny`)
 * keeps them: objects a task function makes in the nanny's process, set up as
 * they are added, torn down as they are removed or replaced and as the nanny
 * stops. One with `restart` has the worker started again once it is set up, so
 * that a fresh process gets what its setup changed (`nanny.env`).
 *
 * The nanny has no scheduler connection: its worker hands it the cluster's
 * nanny plugins (see nannyLink.ts), as it registers and as clients add them.
 * The plugins outlive the worker processes, so each new worker hands over the
 * same ones again: a plugin given again as it was (the same name, task
 * function, arguments and `restart`) is there already, and is neither set up
 * again nor restarts the worker again; given otherwise, it replaces the one
 * of its name.
 *
 * ```ts
 * // tasks.ts (the worker's --tasks module: its nanny imports it too)
 * export const tmpDir = defineTask("tmpDir", (dir: string): NannyPluginHooks => ({
 *   restart: true,
 *   setup(nanny) { nanny.env.TMPDIR = dir; },
 * }));
 * ```
 */

import type { NannyPluginSpec } from "../protocol/messagesSession.ts";
import { hooksProblem } from "../util/hooksProblem.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS, timeoutProblem } from "../util/timers.ts";
import { PluginRegistry } from "./pluginRegistry.ts";

/**
 * How long a nanny plugin's making may take, and then its `setup`, and its
 * `teardown` as it is removed or replaced (5 minutes each): long
 * enough for one that installs packages, but a setup that never ends must not
 * keep a client's `registerNannyPlugin`, and the nanny's later adds and
 * removals, waiting for good (Dask's nanny waits on it with no bound).
 */
export const NANNY_PLUGIN_SETUP_TIMEOUT_MS = 300_000;

/** The steps of an add, each within the setup timeout: making the plugin, tearing down the one it replaces, setting it up. */
const REQUEST_STEPS = 3;

/**
 * How long one add or removal may take at the nanny from the moment the
 * worker asked (15 minutes, an add's three steps): its wait behind the adds and
 * removals asked before it, then its own steps. One not begun by then is not
 * carried out, and a step still running then is given up on as at the setup
 * timeout: the worker waits a little longer for the answer
 * (`NANNY_ANSWER_TIMEOUT_MS`), so that the nanny never carries out a request
 * the worker (and the client) took as failed.
 */
export const NANNY_REQUEST_TIMEOUT_MS = REQUEST_STEPS * NANNY_PLUGIN_SETUP_TIMEOUT_MS;

/** What a nanny plugin's `setup` and `teardown` are given: the nanny (Dask's `Nanny`). */
export interface Nanny {
  /**
   * Environment variables of the worker processes the nanny starts from now
   * on, on top of its own environment (Dask's `Nanny.env`): a plugin's setup
   * changes it, and restarts the worker (`restart`) for it to take effect.
   */
  readonly env: Record<string, string>;
  /** The address of the worker it runs now, as that worker last said; null before any said. */
  readonly workerAddress: string | null;
}

/** A nanny plugin: each hook optional; `setup` and `teardown` may return promises. */
export interface NannyPluginHooks {
  /** Called once the plugin is added to the nanny (not again when a new worker hands it over). */
  setup?(nanny: Nanny): unknown;
  /** Called when the plugin is removed or replaced, and when the nanny stops. */
  teardown?(nanny: Nanny): unknown;
  /**
   * Restart the worker once the plugin is set up (Dask's `NannyPlugin.restart`),
   * unless the registration says otherwise (`registerNannyPlugin`'s `restart`).
   * Default false.
   */
  readonly restart?: boolean;
}

const HOOKS = ["setup", "teardown"] as const;

/** Why `v` is not a nanny plugin, or null. */
export function nannyPluginProblem(v: unknown): string | null {
  const problem = hooksProblem(v, HOOKS, "an object with setup or teardown methods");
  if (problem !== null) return problem;
  const plugin = v as Record<string, unknown>;
  if (HOOKS.every((hook) => plugin[hook] === undefined)) {
    return "it has neither a setup nor a teardown method";
  }
  if (plugin.restart !== undefined && typeof plugin.restart !== "boolean") {
    return `its restart is not true or false (${showValue(plugin.restart)})`;
  }
  return null;
}

/** What {@link NannyPlugins.add} did. */
export interface NannyPluginAdded {
  /** False when the same plugin was there already: nothing was done. */
  readonly setUp: boolean;
  /** The worker is to be restarted: the plugin was set up, and restarts it. */
  readonly restart: boolean;
}

/**
 * The task function `fn` of the nanny, to make a plugin with, looked for also
 * in `modules` (the task modules clients loaded into the cluster, as the
 * worker imported them); throws if there is none.
 */
export type NannyPluginFactories = (
  fn: string,
  modules: readonly string[],
) => Promise<(...args: readonly unknown[]) => unknown> | ((...args: readonly unknown[]) => unknown);

/** A plugin as a nanny keeps it. */
export interface InstalledNannyPlugin {
  /** Its name, as registered: said in the error of a hook that does not finish in time. */
  readonly name: string;
  /** The spec it was made from, as JSON: a plugin given again is compared with it. */
  readonly given: string;
  /** The plugin its factory made. */
  readonly hooks: NannyPluginHooks;
}

/** The spec as compared: what makes the plugin and what it does once set up. */
function sameness(spec: NannyPluginSpec): string {
  return JSON.stringify([spec.fn, spec.args, spec.restart ?? null]);
}

/** The plugins of one nanny. Adds and removals run one at a time, in the order asked. */
export class NannyPlugins extends PluginRegistry<InstalledNannyPlugin> {
  constructor(
    /** What `setup` and `teardown` are given. */
    private readonly nanny: Nanny,
    private readonly factories: NannyPluginFactories,
    /**
     * Told of the teardown that throws of a plugin being replaced (the new one
     * is set up all the same), or of one whose setup ended past its timeout.
     */
    replacedTeardownFailed: (name: string, err: unknown) => void,
    /**
     * How long making a plugin may take (ms), and then its `setup`, and its
     * `teardown` as it is removed or replaced; see {@link NANNY_PLUGIN_SETUP_TIMEOUT_MS}.
     */
    private readonly setupTimeoutMs = NANNY_PLUGIN_SETUP_TIMEOUT_MS,
  ) {
    super(new Map(), replacedTeardownFailed);
    const problem = timeoutProblem(setupTimeoutMs);
    if (problem !== null)
      throw new RangeError(`NannyPlugins: ${problem.replace(/^timeoutMs/, "setupTimeoutMs")}`);
  }

  /**
   * Make the plugin `spec` describes and set it up, after tearing down one of
   * its name; nothing if the same one is there already. Its factory is looked
   * for also in `modules`, the task modules loaded into the cluster. A plugin
   * whose factory or setup throws is not kept, and the error is rethrown; so
   * is one not made, or not set up, within the setup timeout, the error naming
   * it (a setup still running then is torn down once it ends, if it succeeds, in turn),
   * and one not begun, or not done, within the request timeout
   * ({@link NANNY_REQUEST_TIMEOUT_MS}, from `askedAt`, a `Date.now()`: when
   * the worker asked; default now).
   */
  add(
    spec: NannyPluginSpec,
    modules: readonly string[] = [],
    askedAt: number = Date.now(),
  ): Promise<NannyPluginAdded> {
    const request = this.asked(spec.name, "added", askedAt);
    return this.inTurn(() => this.asRequest(request, () => this.addNow(spec, modules)));
  }

  /**
   * Remove the plugin `name` and tear it down: false if there is none. Its
   * teardown's error is rethrown; so is the error of a removal not begun, or
   * not done, within the request timeout from `askedAt` (see {@link add}).
   */
  override remove(name: string, askedAt: number = Date.now()): Promise<boolean> {
    const request = this.asked(name, "removed", askedAt);
    return this.inTurn(() => this.asRequest(request, () => this.removeNow(name)));
  }

  /** The request running, its own bound (see {@link NANNY_REQUEST_TIMEOUT_MS}); null between requests. */
  private request: RequestDeadline | null = null;

  /** What a request may take here: {@link NANNY_REQUEST_TIMEOUT_MS}, of this nanny's setup timeout. */
  private get requestTimeoutMs(): number {
    return REQUEST_STEPS * this.setupTimeoutMs;
  }

  /** A request about the plugin `name`, asked at `askedAt` (a `Date.now()`): what it may take in all. */
  private asked(name: string, then: string, askedAt: number): RequestDeadline {
    return { name, then, by: askedAt + this.requestTimeoutMs };
  }

  /** Within its turn: `job`, unless `request` waited past its bound, each step bound by it too. */
  private async asRequest<T>(request: RequestDeadline, job: () => Promise<T>): Promise<T> {
    if (Date.now() >= request.by) {
      throw new Error(
        `nanny plugin ${JSON.stringify(request.name)}: not begun within ${this.requestTimeoutMs / 1000} s of being asked (the nanny busy meanwhile, with those asked before it): not ${request.then}`,
      );
    }
    this.request = request;
    try {
      return await job();
    } finally {
      this.request = null;
    }
  }

  /** Within its turn: the add itself (see {@link add}). */
  private async addNow(
    spec: NannyPluginSpec,
    modules: readonly string[],
  ): Promise<NannyPluginAdded> {
    const given = sameness(spec);
    if (this.installed.get(spec.name)?.given === given) return { setUp: false, restart: false };
    const plugin: unknown = await this.within(
      spec.name,
      (async () => (await this.factories(spec.fn, modules))(...spec.args))(),
      "making it",
      "not kept",
    );
    const problem = nannyPluginProblem(plugin);
    if (problem !== null) {
      throw new TypeError(`nanny plugin ${JSON.stringify(spec.name)}: ${problem}`);
    }
    const hooks = plugin as NannyPluginHooks;
    const entry: InstalledNannyPlugin = { name: spec.name, given, hooks };
    await this.install(spec.name, entry, () =>
      // Past the deadline it is no longer kept: what a late setup did is undone.
      this.within(
        spec.name,
        (async () => hooks.setup?.(this.nanny))(),
        "its setup",
        "not kept",
        // In turn, as a removal: it must not run beside a later add or removal of its name.
        // No add or removal waits for it (its error is told, as a replaced plugin's is),
        // but the nanny's close does: it lingers from the deadline on.
        (late) =>
          this.linger(spec.name, (what) =>
            late.then(() => {
              what.step = "teardown";
              return this.inTurn(() => this.teardown(entry)).catch((err: unknown) =>
                this.replacedTeardownFailed(spec.name, err),
              );
            }),
          ),
      ),
    );
    return { setUp: true, restart: spec.restart ?? hooks.restart === true };
  }

  /** `work` of the plugin `name`, within the timeout (see {@link HookDeadline.race}). */
  private async within<T>(
    name: string,
    work: Promise<T>,
    step: string,
    then: string,
    late?: (work: Promise<T>) => void,
  ): Promise<T> {
    // What is left of the request's own bound, if that comes first.
    const left = this.request === null ? Number.POSITIVE_INFINITY : this.request.by - Date.now();
    const deadline =
      left < this.setupTimeoutMs
        ? new HookDeadline(
            name,
            Math.max(0, left),
            `, what was left of the ${this.requestTimeoutMs / 1000} s an add or removal may take from being asked`,
          )
        : new HookDeadline(name, this.setupTimeoutMs);
    try {
      return await deadline.race(work, step, then, late);
    } finally {
      deadline.clear();
    }
  }

  /**
   * Bounded as a setup is: one that never ends would hold every later add and
   * removal of the nanny (a removal's or replacement's; a close has its own bound).
   */
  protected teardown(plugin: InstalledNannyPlugin): Promise<unknown> {
    return this.within(
      plugin.name,
      (async () => plugin.hooks.teardown?.(this.nanny))(),
      "its teardown",
      "no longer waited on",
    );
  }
}

/** An add or removal asked of the nanny: the plugin's name, what it is not if it fails, and its bound (a time of `Date.now()`). */
interface RequestDeadline {
  readonly name: string;
  readonly then: string;
  readonly by: number;
}

/** The time one of a plugin's hooks (or its making) may take. */
class HookDeadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly reached: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly ms: number,
    /** Said after the time, in the error: where a bound shorter than the timeout comes from. */
    private readonly why = "",
  ) {
    this.reached = new Promise((resolve) => {
      if (ms <= MAX_TIMER_MS) {
        // Unref'd: whoever awaits the hook (a worker's request, over the child process a
        // nanny holds) keeps the process alive; a nanny whose close gave up on a hook at
        // its budget must not stay up for the rest of these minutes.
        this.timer = setTimeout(resolve, ms);
        this.timer.unref();
      }
    });
  }

  /**
   * `work`, unless the deadline comes first: then a rejection naming the plugin,
   * `step` and what `then` became of it, and `late` is given `work`, still
   * running, to see to (its rejection included).
   */
  race<T>(
    work: Promise<T>,
    step: string,
    then: string,
    late?: (work: Promise<T>) => void,
  ): Promise<T> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    const expired = this.reached.then((): never => {
      if (late !== undefined) late(done);
      void done.catch(() => {});
      throw new Error(
        `nanny plugin ${JSON.stringify(this.name)}: ${step} did not finish within ${Math.round(this.ms / 100) / 10} s${this.why}: ${then}`,
      );
    });
    return Promise.race([done, expired]).finally(() => {
      // The losing side's rejection is handled: nobody awaits it.
      if (settled) void expired.catch(() => {});
    });
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
