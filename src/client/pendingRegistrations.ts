/**
 * A client's plugin registrations still on their way, by kind and name, for
 * its unregistration of that name to wait on. A registration asks every
 * worker first and has the scheduler record the plugin for the workers to
 * come last, once all have set it up; an unregistration has the scheduler
 * forget it first. Given up on (a timeout) and unregistered, a registration
 * whose setups ended later had the plugin recorded after it was forgotten:
 * taken off every worker there, it was set up on every worker to come. Dask's
 * `register_worker_plugin` records first, so that an unregistration after it
 * undoes it. Another client's registration is not waited on.
 */
export class PendingRegistrations {
  /** By kind and name: settles once every registration of it under way has. */
  private readonly pending = new Map<string, Promise<unknown>>();

  /** Note `registration` of the plugin `name` of `kind` until it settles; returns it. */
  track<T>(kind: "worker" | "nanny", name: string, registration: Promise<T>): Promise<T> {
    const key = `${kind}:${name}`;
    // After those of the name still under way too: one given up on and registered
    // again (a retry, a new version) may end after the new one, and record then.
    const settled = Promise.all([
      this.pending.get(key),
      registration.then(
        () => {},
        () => {},
      ),
    ]);
    this.pending.set(key, settled);
    void settled.then(() => {
      if (this.pending.get(key) === settled) this.pending.delete(key);
    });
    return registration;
  }

  /** Settles once the registrations of `name` of `kind` under way now have (whatever their outcome). */
  async settled(kind: "worker" | "nanny", name: string): Promise<void> {
    await this.pending.get(`${kind}:${name}`);
  }
}
