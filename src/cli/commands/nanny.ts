/**
 * `weft worker --nanny`: the worker runs in a child process that this one
 * watches, as Dask's nanny does, and a new one starts when it stops on a
 * fault (exit 1: it lost its scheduler, its state machine failed, or its
 * memory passed `--memory-terminate`): a fresh process, so memory a task
 * leaked is gone. At most `--max-restarts` times in a row without a minute of
 * running between; a child that cannot start (exit 2) or stops by itself (exit
 * 0: retired, even if its close is then cut short) is not started again, and
 * its exit code is the nanny's. A child
 * the scheduler restarts (exit 3: `client.restart()`, `client.restartWorkers()`)
 * is started again at once, which counts as no fault.
 *
 * The nanny also runs the cluster's nanny plugins (`client.registerNannyPlugin`),
 * which its worker hands it over their IPC channel (src/worker/nannyLink.ts):
 * it makes them with the worker's own `--tasks` modules, which it imports
 * when a plugin first needs them, keeps them across its workers, and starts
 * each worker with the environment they set (`nanny.env`). A worker a plugin
 * restarts exits 3 too.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { asError } from "../../util/asError.ts";
import { CloseBudget, DEFAULT_CLOSE_TIMEOUT_S } from "../../util/closeBudget.ts";
import { importModule } from "../../util/importModule.ts";
import { BUILT_IN_NANNY_PLUGINS } from "../../worker/environ.ts";
import { type CloseNotice, serveNannyLink } from "../../worker/nannyLink.ts";
import {
  NANNY_PLUGIN_SETUP_TIMEOUT_MS,
  type NannyPluginFactories,
  NannyPlugins,
} from "../../worker/nannyPlugins.ts";
import { getTaskFunction } from "../../worker/taskRegistry.ts";
import { moduleUrl } from "../../worker/workerOptions.ts";
import { childExit } from "./childExit.ts";
import { CHILD_STOP_GRACE_MS, killAfter, terminateWithin } from "./childStop.ts";
import type { CliContext } from "./context.ts";

/** The `weft` command of this package (sources through tsx in a checkout, else the build). */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/** Set in a child's environment: it was started by a nanny, over an IPC channel. */
const NANNY_CHILD = "WEFT_NANNY_CHILD";

/** Set in a child's environment: its nanny's process id, which it watches (see nannyChildExit.ts). */
const NANNY_PID = "WEFT_NANNY_PID";

/** The exit code of a nanny's child the scheduler restarts: start another. */
export const EXIT_RESTART = 3;

/**
 * The exit code of a nanny's child that stopped on a SIGTERM: the nanny sends one
 * to stop it, and knows when it did; any other (someone's `kill` of the worker
 * process) is an exit the nanny did not ask for, and it starts another, as Dask's
 * nanny does.
 */
export const EXIT_SIGTERM = 4;

/** What a nanny prints when its worker exits to be restarted (`EXIT_RESTART`). */
export const RESTARTING_LINE =
  "weft worker: nanny: the worker is restarted (by the scheduler, at the end of its --lifetime, or for a nanny plugin); starting a new one";

/** True in a worker process a nanny started (and still watches). */
export function underNanny(): boolean {
  return process.env[NANNY_CHILD] === "1" && process.channel !== undefined;
}

/** In a worker a nanny started: its nanny's process id; else null. */
export function nannyPid(): number | null {
  if (process.env[NANNY_CHILD] !== "1") return null;
  const pid = Number(process.env[NANNY_PID]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/**
 * In a worker a nanny started: resolves when the nanny is gone (its end of the
 * IPC channel closed, as when it is SIGKILLed), so that the worker does not
 * live on without it; never otherwise. The channel does not keep the process up.
 */
export function nannyGone(): Promise<void> {
  if (process.env[NANNY_CHILD] !== "1") return new Promise(() => {});
  const channel = process.channel;
  // Gone already, while this process was loading: its disconnect came before anyone listened.
  if (channel === undefined || !process.connected) return Promise.resolve();
  channel.unref();
  return new Promise((resolve) => process.once("disconnect", () => resolve()));
}

/**
 * A child that ran this long was healthy: the restarts before it are forgotten, so
 * that the count is of faults in a row (a crash loop), never of a nanny's lifetime.
 */
export const HEALTHY_MS = 60_000;

/**
 * The command line of `cmd` as the user gave it, but the options in `drop`:
 * each option set on the command line (not a default), with its value.
 */
export function givenArgs(
  cmd: Command,
  positional: readonly string[],
  drop: readonly string[],
): string[] {
  const out = [...positional];
  const values = cmd.opts<Record<string, unknown>>();
  for (const option of cmd.options) {
    const name = option.attributeName();
    if (option.long === undefined || drop.includes(option.long)) continue;
    if (cmd.getOptionValueSource(name) !== "cli") continue;
    const value = values[name];
    if (value === true) out.push(option.long);
    else if (Array.isArray(value)) for (const v of value) out.push(option.long, String(v));
    else if (value !== undefined && value !== false) out.push(option.long, String(value));
  }
  return out;
}

/**
 * How a child that is to be started again ended: on a fault (exit 1), or
 * killed by a signal, which it could not say itself. SIGKILL is most often the
 * kernel's out-of-memory killer.
 */
function stopDescription(signal: NodeJS.Signals | null): string {
  if (signal === null) return "stopped on a fault";
  if (signal === "SIGKILL") {
    return "was killed (SIGKILL: out of memory? the system's log says; --memory-limit keeps a worker within one)";
  }
  if (signal === "SIGTERM") return "was stopped by a SIGTERM the nanny did not send";
  return `was killed (${signal})`;
}

/**
 * The factories of nanny plugins in a nanny: the built-in ones, then the task
 * functions of the worker's own task modules (`taskModules`, its `--tasks`),
 * then those of the modules clients loaded into the cluster that the worker
 * names with the plugin (`loadTaskModules`, uploaded task modules), each
 * imported into the nanny's process when first needed.
 */
export function nannyPluginFactories(taskModules: readonly string[]): NannyPluginFactories {
  let own: Promise<void> | null = null;
  /** The cluster's modules imported so far (or being imported), by specifier. */
  const cluster = new Map<string, Promise<unknown>>();
  return async (fn, modules) => {
    const builtIn = BUILT_IN_NANNY_PLUGINS.get(fn);
    if (builtIn !== undefined) return builtIn;
    own ??= (async () => {
      for (const m of taskModules) await importModule(moduleUrl(m));
    })();
    try {
      await own;
    } catch (err) {
      throw new Error(
        `the nanny cannot import the worker's task modules (${taskModules.join(", ")}): ${asError(err).message}`,
        { cause: err },
      );
    }
    if (getTaskFunction(fn) === undefined) {
      // In the order the worker imported them, as a module may use an earlier one's tasks.
      for (const m of modules) {
        if (taskModules.includes(m)) continue;
        let done = cluster.get(m);
        if (done === undefined) {
          done = importModule(moduleUrl(m));
          cluster.set(m, done);
        }
        try {
          await done;
        } catch (err) {
          cluster.delete(m);
          throw new Error(
            `the nanny cannot import ${m}, a task module loaded into the cluster: ${asError(err).message}`,
            { cause: err },
          );
        }
      }
    }
    const found = getTaskFunction(fn);
    if (found === undefined) {
      const where = [...taskModules, ...modules.filter((m) => !taskModules.includes(m))];
      throw new Error(
        `the nanny has no task function ${JSON.stringify(fn)}: it makes nanny plugins with the worker's own --tasks modules and those loaded into the cluster (${where.length > 0 ? where.join(", ") : "none"})`,
      );
    }
    return found as (...args: readonly unknown[]) => unknown;
  };
}

/** Options of {@link runNanny}. */
export interface NannyOptions {
  /** The arguments of `weft worker` for each child. */
  readonly args: readonly string[];
  readonly maxRestarts: number;
  /**
   * Resolves when the nanny is to stop (a signal): the child is sent SIGTERM,
   * and SIGKILL if it has not exited `stopGraceMs` later.
   */
  readonly stop: Promise<unknown>;
  /** Default {@link CHILD_STOP_GRACE_MS}: what a worker's close may take. */
  readonly stopGraceMs?: number;
  /** The worker's `--tasks` modules: the nanny makes nanny plugins with them. Default none. */
  readonly taskModules?: readonly string[];
  /** How long making a nanny plugin and its setup may take (ms). Default {@link NANNY_PLUGIN_SETUP_TIMEOUT_MS}. */
  readonly pluginSetupTimeoutMs?: number;
  /** Default {@link HEALTHY_MS}: a child that ran this long resets the count of restarts in a row. */
  readonly healthyMs?: number;
  /**
   * How long the nanny, stopping, waits on its plugins' teardowns, and on a setup
   * still running past its timeout (it is torn down if it ends), in ms. Default
   * {@link DEFAULT_CLOSE_TIMEOUT_S} seconds, a worker's close's.
   */
  readonly closeTimeoutMs?: number;
}

/**
 * Run `weft worker` children one after another, as the module's comment says;
 * the nanny plugins are torn down at the end.
 */
export async function runNanny(o: NannyOptions, ctx: CliContext): Promise<void> {
  const nanny = { env: {} as Record<string, string>, workerAddress: null as string | null };
  const teardownFailed = (name: string, err: unknown) => {
    ctx.stderr.write(
      `weft worker: nanny: the teardown of nanny plugin ${JSON.stringify(name)} failed: ${asError(err).message}\n`,
    );
  };
  const plugins = new NannyPlugins(
    nanny,
    nannyPluginFactories(o.taskModules ?? []),
    teardownFailed,
    o.pluginSetupTimeoutMs,
  );
  try {
    await runChildren(o, ctx, plugins, nanny);
  } finally {
    // A teardown that never ends must not keep the nanny from stopping.
    const seconds = (o.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_S * 1000) / 1000;
    const budget = new CloseBudget(seconds);
    await plugins.removeAll(teardownFailed, budget, (name, hook) =>
      ctx.stderr.write(
        `weft worker: nanny: the ${hook} of nanny plugin ${JSON.stringify(name)} did not finish within ${seconds} s: no longer waited on\n`,
      ),
    );
    budget.clear();
  }
}

/**
 * Where the worker process writes: the nanny's own stdout and stderr when `ctx` has
 * them (`weft worker --nanny`), so that what the worker says once its nanny is gone
 * (SIGKILLed, the OOM killer's pick) still reaches the log: through pipes the nanny
 * read, its last lines (`its nanny is gone; closing`, `worker closed`, the watcher's
 * `killing its process`) went nowhere. Else (a test's context) pipes, passed on to `ctx`.
 */
function childOutput(ctx: CliContext): ["inherit" | "pipe", "inherit" | "pipe"] {
  return [
    ctx.stdout === process.stdout ? "inherit" : "pipe",
    ctx.stderr === process.stderr ? "inherit" : "pipe",
  ];
}

/** Tell `ctx` what the nanny's plugins did. */
function linkEvents(ctx: CliContext, nanny: { workerAddress: string | null }) {
  const say = (line: string) => ctx.stderr.write(`weft worker: nanny: ${line}\n`);
  return {
    worker(address: string) {
      nanny.workerAddress = address;
    },
    added(name: string, restart: boolean) {
      say(
        `nanny plugin ${JSON.stringify(name)} set up${restart ? "; it restarts the worker" : ""}`,
      );
    },
    removed(name: string, had: boolean) {
      if (had) say(`nanny plugin ${JSON.stringify(name)} removed`);
    },
    failed(name: string, why: string) {
      say(`nanny plugin ${JSON.stringify(name)} failed: ${why}`);
    },
  };
}

async function runChildren(
  o: NannyOptions,
  ctx: CliContext,
  plugins: NannyPlugins,
  nanny: { readonly env: Record<string, string>; workerAddress: string | null },
): Promise<void> {
  let stopping = false;
  let child: ChildProcess | null = null;
  let callOffKill = () => {};
  const graceMs = o.stopGraceMs ?? CHILD_STOP_GRACE_MS;
  void o.stop.then(() => {
    stopping = true;
    if (child === null) return;
    callOffKill = terminateWithin(child, graceMs, () =>
      ctx.stderr.write(
        `weft worker: nanny: the worker did not exit within ${graceMs / 1000} s of the nanny's SIGTERM (its event loop blocked, or its close stuck): killed it (SIGKILL)\n`,
      ),
    );
  });
  let restarts = 0;
  for (;;) {
    const started = Date.now();
    // The IPC channel tells the child when the nanny is gone, killed or not (see nannyGone).
    let running: ChildProcess;
    try {
      running = spawn(process.execPath, [WEFT_BIN, "worker", ...o.args], {
        stdio: ["ignore", ...childOutput(ctx), "ipc"],
        // What the nanny plugins set (environ) comes on top of the nanny's own.
        env: { ...process.env, ...nanny.env, [NANNY_CHILD]: "1", [NANNY_PID]: String(process.pid) },
      });
    } catch (err) {
      // Thrown, not emitted: an environment a plugin's setup made that no process
      // can have (a NUL in a value, say). Not a crash of the nanny: a failed start.
      ctx.stderr.write(
        `weft worker: nanny: cannot start a worker process: ${asError(err).message}\n`,
      );
      ctx.exitCode = 2;
      return;
    }
    child = running;
    // The worker says when it begins to close on its own, and how to take its exit: a
    // close that never ends is SIGKILLed past the grace, as on a stop.
    let notice: CloseNotice | null = null;
    let killedClosing = false;
    let callOffClosingKill = () => {};
    const unlink = serveNannyLink(running, plugins, {
      ...linkEvents(ctx, nanny),
      closing(how) {
        if (notice !== null) return;
        notice = how;
        callOffClosingKill = killAfter(running, graceMs, () => {
          killedClosing = true;
          ctx.stderr.write(
            `weft worker: nanny: the worker did not exit within ${graceMs / 1000} s of beginning to close (its event loop blocked, or its close stuck): killed it (SIGKILL)\n`,
          );
        });
      },
    });
    // Piped (childOutput): passed on.
    running.stdout?.on("data", (d: Buffer) => ctx.stdout.write(d.toString()));
    running.stderr?.on("data", (d: Buffer) => ctx.stderr.write(d.toString()));
    const end = await childExit(running, (line) =>
      ctx.stderr.write(`weft worker: nanny: ${line}\n`),
    );
    let { code } = end;
    let killedBy = end.signal;
    child = null;
    callOffKill();
    callOffClosingKill();
    unlink();
    nanny.workerAddress = null;
    if (stopping) {
      // Stopped is the nanny's exit however its worker ended: killed by the stop's signal
      // (while it was still loading, say), or on a fault of its own met just before the stop
      // reached it (its scheduler gone with it, as at the end of a batch job), which would
      // only have had another started. The worker's own line says what it met.
      ctx.exitCode = 0;
      return;
    }
    const said = notice as CloseNotice | null;
    // A close the worker began on its own and that was then cut short (SIGKILLed past
    // its grace, another's SIGTERM, a kill) is taken as the exit it was closing towards,
    // however it was cut: Dask's nanny, once its worker closes gracefully (retired), does
    // not start another whatever becomes of the process.
    const cutShort = killedClosing || killedBy !== null || code === EXIT_SIGTERM;
    if (said !== null && cutShort && (killedClosing || !said.fault)) {
      // One closing on a fault is started again all the same: its signal says more.
      killedBy = null;
      code = said.restart ? EXIT_RESTART : said.fault ? 1 : said.startFailed === true ? 2 : 0;
    }
    if (code === EXIT_RESTART) {
      restarts = 0;
      ctx.stderr.write(`${RESTARTING_LINE}\n`);
      continue;
    }
    if (code === EXIT_SIGTERM) killedBy = "SIGTERM";
    else if (code !== 1) {
      ctx.exitCode = code;
      return;
    }
    const healthyMs = o.healthyMs ?? HEALTHY_MS;
    if (Date.now() - started >= healthyMs) restarts = 0;
    if (restarts >= o.maxRestarts) {
      // A guard against a crash loop, not a lifetime count: the user must see which.
      ctx.stderr.write(
        `weft worker: nanny: the worker stopped on a fault ${restarts + 1} times in a row, none of them running ${healthyMs / 1000} s; giving up, as a worker that cannot run would only be started again and again (--max-restarts, now ${o.maxRestarts}, sets how many restarts in a row are allowed; a worker that runs ${healthyMs / 1000} s resets the count)\n`,
      );
      ctx.exitCode = 1;
      return;
    }
    restarts++;
    ctx.stderr.write(
      `weft worker: nanny: the worker ${stopDescription(killedBy)}; starting another (${restarts} of at most ${o.maxRestarts} in a row)\n`,
    );
  }
}
