/**
 * The code clients load into the cluster's workers: files they upload
 * (`uploadFile`), task modules already on the workers' machines
 * (`loadTaskModules`), worker plugins (`registerWorkerPlugin`) and the nanny
 * plugins a worker hands its nanny (`registerNannyPlugin`). A worker takes
 * what was loaded before it came from the scheduler's register reply
 * (failing to start if it cannot), and what is loaded later from the
 * clients' rpcs (`upload_file`, `load_task_modules`, `plugin_add`,
 * `plugin_remove`, `nanny_plugin_add`, `nanny_plugin_remove`), each answered
 * with an error the client sees.
 *
 * Apart from the worker because it is one concern (what runs here besides
 * the worker's own task modules, and how it gets here) with its own checks.
 */

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import type { RpcContext } from "../comm/rpc.ts";
import {
  type NannyPluginSpec,
  nannyPluginSpecProblem,
  type WorkerPluginSpec,
  workerPluginSpecProblem,
} from "../protocol/messagesSession.ts";
import {
  type UploadedFile,
  uploadedFileProblem,
  uploadedFilesProblem,
} from "../protocol/uploads.ts";
import { asError } from "../util/asError.ts";
import { showValue } from "../util/showValue.ts";
import { LoadedModuleDigests } from "./changedModules.ts";
import type { NannyLink } from "./nannyLink.ts";
import type { RegisterWorkerReply } from "./registration.ts";
import { warningIfSlow } from "./slowImportWarning.ts";
import type { TaskExecutors } from "./taskExecutors.ts";
import { lookupTaskFunction } from "./taskRegistry.ts";
import { processUploadDirectory } from "./uploadDirectory.ts";
import type { WorkerStatus } from "./worker.ts";
import type { WorkerPlugins } from "./workerPlugins.ts";

/** What the cluster's code needs of its worker. */
export interface ClusterCodeHost {
  /** The `acceptUploads` option. */
  readonly acceptUploads: boolean;
  readonly logger: Logger;
  readonly executors: TaskExecutors;
  readonly plugins: Pick<WorkerPlugins<unknown>, "add" | "remove">;
  /** The way to the worker's nanny, for nanny plugins (the `nannyLink` option), or null. */
  readonly nannyLink: NannyLink | null;
  /** Where the worker is in its life: loading is refused once it is closing. */
  status(): WorkerStatus;
  /** The worker's address, which its nanny is told. */
  address(): string;
  /** Close for the nanny to start the worker again: the nanny plugin `plugin` asks it to. */
  restartForNanny(plugin: string): void;
}

/** Loads the cluster's uploads, task modules and plugins into one worker. */
export class ClusterCode {
  /** Where the files clients uploaded into the cluster are saved (`acceptUploads`): the process's. */
  private readonly uploads = processUploadDirectory();

  /**
   * The first nanny plugin of the register reply that restarts the worker,
   * once its nanny set it up: the worker restarts once running. Null: none.
   */
  private nannyRestart: string | null = null;

  /**
   * The task modules clients loaded into the cluster, as this worker imported
   * them (`loadTaskModules`, uploaded modules), in that order: its nanny makes
   * nanny plugins with them too.
   */
  private readonly loadedModules: string[] = [];

  /** The bytes of the task modules loaded, to refuse loading one changed since (`loadTaskModules`). */
  private readonly digests = new LoadedModuleDigests(
    () => this.host.executors.main?.kind === "inline",
  );

  /**
   * Settles once the register reply is taken, or the worker closes first:
   * the clients' requests wait on it. The reply gives what was loaded into the
   * cluster when the worker registered, and the worker is asked for what
   * clients load from then on as soon as the scheduler lists it: a request
   * carried out first would then be undone by the reply, a plugin replaced
   * since set up again in its recorded version, one removed since set up
   * again (never to be removed: the scheduler records neither), a module
   * imported before the uploads it imports are saved.
   */
  private readonly replyTaken: Promise<void>;
  /** Settles {@link replyTaken}. */
  private replyDone: () => void = () => {};

  constructor(private readonly host: ClusterCodeHost) {
    this.replyTaken = new Promise<void>((resolve) => {
      this.replyDone = resolve;
    });
  }

  /** The worker closes: a request waiting for the register reply goes on now (and is refused). */
  workerClosing(): void {
    this.replyDone();
  }

  private loaded(modules: readonly string[]): void {
    for (const m of modules) if (!this.loadedModules.includes(m)) this.loadedModules.push(m);
  }

  /**
   * The executor imported the worker's own task modules (`weft worker --tasks`,
   * the `taskModules` option): their bytes are noted as those loaded through
   * clients are, so that a client's load of one edited since is refused too
   * (the old code would go on running, silently).
   */
  startModulesImported(urls: readonly string[]): void {
    this.digests.note(urls);
  }

  /** The nanny plugin of the register reply that restarts the worker (see `takeRegisterReply`), or null. */
  get restartDue(): string | null {
    return this.nannyRestart;
  }

  /**
   * Take what was loaded into the cluster before this worker came, from the
   * scheduler's register reply: the uploads, then the task modules, then the
   * plugins, then the nanny plugins, handed to the nanny (one that restarts
   * the worker sets {@link restartDue}). Throws if an upload or a module
   * cannot be taken. `doing` hears what it does, step by step (what a start
   * that times out says it was still doing).
   */
  async takeRegisterReply(
    reply: Partial<RegisterWorkerReply>,
    doing: (what: string) => void = () => {},
  ): Promise<void> {
    try {
      doing("saving and importing the files uploaded into the cluster");
      await this.saveClusterUploads(reply.uploads);
      doing("importing the task modules loaded into the cluster");
      await this.importClusterModules(reply.taskModules);
      await this.addClusterPlugins(reply.plugins, doing);
      await this.handClusterNannyPlugins(reply.nannyPlugins, doing);
    } finally {
      this.replyDone();
    }
  }

  /**
   * The worker closed while it took the register reply (its start was cut
   * short, a step never ending): the rest is not set up, nor handed to the
   * nanny, for a worker that is gone.
   */
  private closing(): boolean {
    const status = this.host.status();
    return status === "closing" || status === "closed" || status === "failed";
  }

  /**
   * The files clients uploaded into the cluster before this worker came (the
   * scheduler's register reply): saved, and its modules imported in the order
   * uploaded, or the start fails saying why.
   */
  private async saveClusterUploads(uploads: unknown): Promise<void> {
    if (uploads === undefined) return;
    const problem = uploadedFilesProblem(uploads);
    if (problem !== null) throw new Error(`the scheduler's register reply: ${problem}`);
    const files = uploads as UploadedFile[];
    if (files.length === 0) return;
    if (!this.host.acceptUploads) {
      throw new Error(
        `the cluster has uploaded files (${files.map((f) => f.name).join(", ")}), which this worker does not accept: start it with --allow-uploads (the Worker option acceptUploads)`,
      );
    }
    try {
      const urls: string[] = [];
      for (const f of files) {
        const url = await this.uploads.save(f);
        if (f.load) urls.push(url);
      }
      await this.host.executors.loadModules(urls);
      this.loaded(urls);
    } catch (err) {
      throw new Error(
        `cannot save or import the files uploaded into the cluster: ${asError(err).message}`,
        { cause: err },
      );
    }
  }

  /**
   * The task modules clients loaded into the cluster before this worker came
   * (the scheduler's register reply): imported, or the start fails saying why.
   */
  private async importClusterModules(modules: unknown): Promise<void> {
    if (modules === undefined) return;
    const problem = taskModulesProblem(modules);
    if (problem !== null) throw new Error(`the scheduler's register reply: ${problem}`);
    try {
      await this.host.executors.loadModules(modules as string[]);
      this.digests.note(modules as string[]);
      this.loaded(modules as string[]);
    } catch (err) {
      throw new Error(
        `cannot import the task modules loaded into the cluster (${(modules as string[]).join(", ")}): ${asError(err).message}`,
        { cause: err },
      );
    }
  }

  /**
   * Set up the worker plugins of the cluster (`register-worker-reply`), in the
   * order registered: one that cannot be made or set up is logged, not fatal
   * (as Dask's worker does).
   */
  private async addClusterPlugins(plugins: unknown, doing: (what: string) => void): Promise<void> {
    if (plugins === undefined) return;
    if (!Array.isArray(plugins)) {
      throw new Error("the scheduler's register reply: plugins must be an array");
    }
    for (const spec of plugins) {
      const problem = workerPluginSpecProblem(spec);
      if (problem !== null) throw new Error(`the scheduler's register reply: ${problem}`);
      if (this.closing()) return;
      const { name, fn, args } = spec as WorkerPluginSpec;
      doing(`setting up the cluster's worker plugin ${JSON.stringify(name)}`);
      try {
        await this.makeAndAddPlugin(name, fn, args);
        this.host.logger.info({ plugin: name }, "worker plugin set up");
      } catch (err) {
        this.host.logger.error(
          { err, plugin: name },
          "the cluster's worker plugin failed to set up",
        );
      }
    }
  }

  /**
   * Hand the nanny plugins of the cluster (`register-worker-reply`) to the
   * nanny, in the order registered: one it cannot make or set up is logged,
   * not fatal, as a worker plugin is. Its nanny has them already when this
   * worker is one it started again: it does nothing then.
   */
  private async handClusterNannyPlugins(
    plugins: unknown,
    doing: (what: string) => void,
  ): Promise<void> {
    if (plugins === undefined) return;
    if (!Array.isArray(plugins)) {
      throw new Error("the scheduler's register reply: nannyPlugins must be an array");
    }
    for (const spec of plugins) {
      const problem = nannyPluginSpecProblem(spec);
      if (problem !== null) throw new Error(`the scheduler's register reply: ${problem}`);
    }
    if (plugins.length === 0) return;
    const link = this.host.nannyLink;
    if (link === null) {
      this.host.logger.warn(
        { nannyPlugins: plugins.map((p: NannyPluginSpec) => p.name) },
        "the cluster has nanny plugins, which this worker has no nanny to hand to (only weft worker --nanny runs them)",
      );
      return;
    }
    for (const spec of plugins as NannyPluginSpec[]) {
      if (this.closing()) return;
      doing(`handing the cluster's nanny plugin ${JSON.stringify(spec.name)} to its nanny`);
      try {
        const { restart } = await link.addPlugin(spec, this.host.address(), this.loadedModules);
        if (restart) this.nannyRestart ??= spec.name;
      } catch (err) {
        this.host.logger.error(
          { err, plugin: spec.name },
          "the cluster's nanny plugin failed to set up in this worker's nanny",
        );
      }
    }
  }

  /** Make the plugin `name` with the task function `fn` on `args`, on this thread, and add it. */
  private async makeAndAddPlugin(
    name: string,
    fn: string,
    args: readonly unknown[],
  ): Promise<void> {
    // The factory runs on this thread, which imports the task modules for it.
    await this.host.executors.actor();
    const make = lookupTaskFunction(fn) as (...a: readonly unknown[]) => unknown;
    const plugin = await make(...args);
    await this.host.plugins.add(name, plugin);
  }

  /**
   * Answers a client's `load_task_modules` (its `loadTaskModules`, Dask's
   * `upload_file` for modules already on the workers' machines): `{status:
   * "OK", tasks}` with the task functions then defined; throws (the client
   * gets the error) if a module is not a file here or fails to import.
   */
  readonly loadTaskModules = async (args: Record<string, unknown>): Promise<unknown> => {
    const problem = taskModulesProblem(args.modules);
    if (problem !== null) throw new TypeError(`load_task_modules: ${problem}`);
    await this.replyTaken;
    const executor = this.host.executors.main;
    const status = this.host.status();
    if (executor === null || status === "closing" || status === "closed") {
      throw new Error(`load_task_modules: the worker is ${status}`);
    }
    const modules = args.modules as string[];
    const changed = this.digests.changed(modules);
    if (changed !== null) throw new Error(`load_task_modules: ${changed}`);
    const tasks = await warningIfSlow(
      this.host.logger,
      modules,
      this.host.executors.loadModules(modules),
    );
    this.digests.note(modules);
    this.loaded(modules);
    return { status: "OK", tasks };
  };

  /**
   * Answers a client's `upload_file` (its `uploadFile`, Dask's
   * `upload_file`): saves the file with the others uploaded and, if `load`,
   * imports it as a task module. `{status: "OK", tasks}` with the task
   * functions then defined; throws (the client gets the error) if this worker
   * does not accept uploads, or the file cannot be saved or imported.
   */
  readonly uploadFile = async (args: Record<string, unknown>): Promise<unknown> => {
    if (!this.host.acceptUploads) {
      throw new Error(
        "this worker does not accept uploaded files: start it with --allow-uploads (the Worker option acceptUploads)",
      );
    }
    const file = args as unknown as UploadedFile;
    const problem = uploadedFileProblem(file);
    if (problem !== null) throw new TypeError(`upload_file: ${problem}`);
    await this.replyTaken;
    const executor = this.host.executors.main;
    const status = this.host.status();
    if (executor === null || status === "closing" || status === "closed") {
      throw new Error(`upload_file: the worker is ${status}`);
    }
    const url = await this.uploads.save(file);
    if (!file.load) return { status: "OK", tasks: executor.taskNames };
    const tasks = await this.loadUploaded([file], [url]);
    this.loaded([url]);
    return { status: "OK", tasks };
  };

  /**
   * Import the uploaded modules `files` of a client's `upload_file`, saved at
   * `urls`: if that fails, they are forgotten, so that the client may upload
   * fixed ones under their names (imported under another URL, their bytes
   * differing from those that failed: see `importModule`). (Those of the register reply are not:
   * every worker there imported them.)
   */
  private async loadUploaded(
    files: readonly UploadedFile[],
    urls: readonly string[],
  ): Promise<readonly string[]> {
    try {
      return await warningIfSlow(this.host.logger, urls, this.host.executors.loadModules(urls));
    } catch (err) {
      for (const f of files) this.uploads.forgetFailed(f);
      throw err;
    }
  }

  /**
   * Answers a client's `plugin_add` (its `registerWorkerPlugin`, Dask's
   * `plugin_add`): `{status: "OK"}` once the plugin is made and set up; throws
   * (the client gets the error) if its task function is unknown, throws, or
   * returns no plugin, or if its setup throws (then it is not kept).
   */
  readonly pluginAdd = async (args: Record<string, unknown>): Promise<unknown> => {
    const problem = workerPluginSpecProblem(args);
    if (problem !== null) throw new TypeError(`plugin_add: ${problem}`);
    await this.replyTaken;
    const status = this.host.status();
    if (status === "closing" || status === "closed") {
      throw new Error(`plugin_add: the worker is ${status}`);
    }
    const { name, fn, args: given } = args as unknown as WorkerPluginSpec;
    await this.makeAndAddPlugin(name, fn, given);
    this.host.logger.info({ plugin: name }, "worker plugin set up");
    return { status: "OK" };
  };

  /** Answers `plugin_remove` (`unregisterWorkerPlugin`): `{status: "OK", removed}`; throws if its teardown does. */
  readonly pluginRemove = async (args: Record<string, unknown>): Promise<unknown> => {
    if (typeof args.name !== "string" || args.name === "") {
      throw new TypeError("plugin_remove: name must be a non-empty string");
    }
    await this.replyTaken;
    const removed = await this.host.plugins.remove(args.name);
    return { status: "OK", removed };
  };

  /**
   * Answers a client's `nanny_plugin_add` (its `registerNannyPlugin`):
   * `{status: "OK"}` once the worker's nanny has made and set up the plugin
   * (or had it already); throws (the client gets the error) if this worker
   * has no nanny that takes plugins, or its nanny could not. A plugin that
   * restarts the worker does so once the answer is sent.
   */
  readonly nannyPluginAdd = async (
    args: Record<string, unknown>,
    ctx: RpcContext,
  ): Promise<unknown> => {
    const problem = nannyPluginSpecProblem(args);
    if (problem !== null) throw new TypeError(`nanny_plugin_add: ${problem}`);
    await this.replyTaken;
    const link = this.linkFor("nanny_plugin_add");
    const { name, fn, args: given, restart } = args as unknown as NannyPluginSpec;
    const spec: NannyPluginSpec = {
      name,
      fn,
      args: given,
      ...(restart !== undefined ? { restart } : {}),
    };
    let restarts: boolean;
    try {
      ({ restart: restarts } = await link.addPlugin(spec, this.host.address(), this.loadedModules));
    } catch (err) {
      throw new Error(`its nanny: ${asError(err).message}`, { cause: err });
    }
    this.host.logger.info({ plugin: name, restart: restarts }, "nanny plugin set up");
    if (restarts) ctx.afterReply(() => this.host.restartForNanny(name));
    return { status: "OK" };
  };

  /** Answers `nanny_plugin_remove` (`unregisterNannyPlugin`): `{status: "OK", removed}`; throws if the nanny's teardown does. */
  readonly nannyPluginRemove = async (args: Record<string, unknown>): Promise<unknown> => {
    if (typeof args.name !== "string" || args.name === "") {
      throw new TypeError("nanny_plugin_remove: name must be a non-empty string");
    }
    await this.replyTaken;
    const link = this.linkFor("nanny_plugin_remove");
    try {
      return { status: "OK", removed: await link.removePlugin(args.name) };
    } catch (err) {
      throw new Error(`its nanny: ${asError(err).message}`, { cause: err });
    }
  };

  /** The way to the nanny for `op`; throws if there is none, or the worker is closing. */
  private linkFor(op: string): NannyLink {
    const status = this.host.status();
    if (status === "closing" || status === "closed") {
      throw new Error(`${op}: the worker is ${status}`);
    }
    if (this.host.nannyLink === null) {
      throw new Error(
        `${op}: this worker has no nanny that takes nanny plugins (only weft worker --nanny runs them; a LocalCluster's workers share its process)`,
      );
    }
    return this.host.nannyLink;
  }
}

/** Why `modules` is not a list of task modules this machine has (file URLs of existing files), or null. */
function taskModulesProblem(modules: unknown): string | null {
  if (!Array.isArray(modules) || !modules.every((m) => typeof m === "string")) {
    return `expected an array of file URLs, got ${showValue(modules)}`;
  }
  for (const m of modules as string[]) {
    if (!URL.canParse(m) || new URL(m).protocol !== "file:") return `not a file URL: ${m}`;
    if (!existsSync(fileURLToPath(m))) return `no such file on this worker's machine: ${m}`;
  }
  return null;
}
