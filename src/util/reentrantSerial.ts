/**
 * A {@link Serial} for the adds and removals of plugins, which call the
 * plugins' own hooks: a hook that adds or removes a plugin in turn (a
 * plugin's `setup` calling `worker.addPlugin`, a scheduler plugin's `start`
 * calling `scheduler.addPlugin`, a teardown calling `removePlugin`) and
 * awaits it would wait, queued, for the very job that waits on it, for good.
 * Such a call, made within a job while it runs, runs at once instead, as a
 * step of that job (Dask's `plugin_add` and `add_plugin` take no lock, so
 * there it simply runs).
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { Serial } from "./serial.ts";

/** The job running now, as the calls made within it see it. */
interface Running {
  /** False once the job has settled: a timer its hooks left behind queues as any call does. */
  active: boolean;
}

export class ReentrantSerial {
  private readonly serial = new Serial();
  private readonly context = new AsyncLocalStorage<Running>();

  /**
   * Run `job` after every job given before, or at once when called from
   * within the job running now (its hooks, and what they await).
   */
  run<T>(job: () => Promise<T>): Promise<T> {
    if (this.context.getStore()?.active === true) {
      try {
        return job();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.serial.run(async () => {
      const own: Running = { active: true };
      try {
        return await this.context.run(own, job);
      } finally {
        own.active = false;
        // One job at a time: none runs now. Node.js 20 tracks every promise while an
        // AsyncLocalStorage is enabled, which is not to last because a plugin was added.
        this.context.disable();
      }
    });
  }
}
