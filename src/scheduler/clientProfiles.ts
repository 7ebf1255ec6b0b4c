/**
 * The CPU profiles clients started on the workers, by client, so that the profiles
 * of a client removed (killed outright: SIGKILL, its machine gone) are discarded
 * at once. A client calls `profile_start` on each worker directly and stops it the
 * same way; one that never comes back to stop it left its workers profiling until
 * `maxMs` (an hour for `weft run --profile`), refusing every other profile
 * meanwhile. Each worker tells the scheduler of a profile a client started there
 * (`profile-started`) and of its end (`profile-ended`); the scheduler sends
 * `profile-discard` for those still kept when it removes their client, the moment
 * it gives the client up for good (a client does not reconnect: a new connection
 * is a new client). Dask has no such case: its profiles are sampled all the time.
 *
 * A worker keeps one profile at a time (`CpuProfiler`): its profile is forgotten
 * when it starts another (the `profile-ended` of the earlier one may have come
 * first, or been lost) and when the scheduler removes it (killed, its machine
 * gone: no `profile-ended` comes). Kept, each stayed until its client left, and a
 * worker sending `profile-started` after `profile-started` grew the table without
 * bound.
 */

/** `[worker address, profile id]`: a profile to discard. */
export type ProfileToDiscard = readonly [worker: string, id: string];

/** The profiles clients started on the workers and the workers still keep. */
export class ClientProfiles {
  /** `{client: {profile id: workers keeping it}}`. */
  private readonly byClient = new Map<string, Map<string, Set<string>>>();
  /** `{profile id: its client}`. */
  private readonly clientOf = new Map<string, string>();
  /** `{worker: the profile id it keeps}`: one at a time. */
  private readonly profileOf = new Map<string, string>();

  /**
   * `worker` started profile `id` for `client`. False if that client is not
   * connected (removed while the worker's message was on its way): the caller
   * discards the profile at once.
   */
  started(worker: string, id: string, client: string, connected: boolean): boolean {
    if (!connected) return false;
    const owner = this.clientOf.get(id);
    // A profile id is the client's own (a random UUID): another client naming it is ignored.
    if (owner !== undefined && owner !== client) return true;
    // The worker's earlier profile is no longer kept there: it keeps one at a time.
    const earlier = this.profileOf.get(worker);
    if (earlier !== undefined && earlier !== id) this.ended(worker, earlier);
    this.profileOf.set(worker, id);
    this.clientOf.set(id, client);
    let profiles = this.byClient.get(client);
    if (profiles === undefined) this.byClient.set(client, (profiles = new Map()));
    let workers = profiles.get(id);
    if (workers === undefined) profiles.set(id, (workers = new Set()));
    workers.add(worker);
    return true;
  }

  /** `worker` no longer keeps profile `id`. */
  ended(worker: string, id: string): void {
    if (this.profileOf.get(worker) === id) this.profileOf.delete(worker);
    const client = this.clientOf.get(id);
    if (client === undefined) return;
    const profiles = this.byClient.get(client);
    const workers = profiles?.get(id);
    if (profiles === undefined || workers === undefined) return;
    workers.delete(worker);
    if (workers.size > 0) return;
    profiles.delete(id);
    this.clientOf.delete(id);
    if (profiles.size === 0) this.byClient.delete(client);
  }

  /** `worker` was removed: the profile it kept is no longer anyone's to discard. */
  workerLeft(worker: string): void {
    const id = this.profileOf.get(worker);
    if (id !== undefined) this.ended(worker, id);
  }

  /** `client` was removed: the profiles it started that workers still keep, forgotten here. */
  clientLeft(client: string): ProfileToDiscard[] {
    const profiles = this.byClient.get(client);
    if (profiles === undefined) return [];
    this.byClient.delete(client);
    const out: ProfileToDiscard[] = [];
    for (const [id, workers] of profiles) {
      this.clientOf.delete(id);
      for (const worker of workers) {
        this.profileOf.delete(worker);
        out.push([worker, id]);
      }
    }
    return out;
  }

  /** How many profiles are known, for tests. */
  get size(): number {
    return this.clientOf.size;
  }

  /** How many workers keep a profile known here, for tests. */
  get workerCount(): number {
    return this.profileOf.size;
  }
}
