/**
 * The hidden datasets holding the futures of variables' and queues' values
 * (`weft:held/…`: the client publishes one, then names it in its set or put):
 * which client is to let each go, while one is. A dataset is its client's from
 * its publishing until a variable or queue takes it, then the taker's of a
 * queue item (or the putter's again, if its put found no room in time) until
 * it is unpublished. A client that leaves in between (its process killed, its
 * connection lost), whose own letting go never comes, has the scheduler let
 * them go: nothing else knows of them, and they would hold their keys for good.
 */

/** The prefix of the names of these datasets (hidden from `listDatasets`). */
export const HELD_DATASET_PREFIX = "weft:held/";

/** Whether `name` is one of these datasets'. */
export function isHeldDataset(name: string): boolean {
  return name.startsWith(HELD_DATASET_PREFIX);
}

/** The held datasets some client is to let go of: the client of each. */
export class HeldDatasetOwners {
  private readonly owners = new Map<string, string>();

  /** How many datasets some client is to let go of. */
  get size(): number {
    return this.owners.size;
  }

  /** `client` is to let `name` go (null: nothing to record). */
  owe(name: string | null, client: string): void {
    if (name !== null) this.owners.set(name, client);
  }

  /** Nobody is to let `name` go any more: unpublished, or held by a variable or queue. */
  settled(name: string | null): void {
    if (name !== null) this.owners.delete(name);
  }

  /** A client left: the datasets it was to let go of, for the scheduler to. */
  clientLeft(client: string): string[] {
    const orphaned: string[] = [];
    for (const [name, owner] of this.owners) {
      if (owner !== client) continue;
      this.owners.delete(name);
      orphaned.push(name);
    }
    return orphaned;
  }

  /** Forget everything (the scheduler closing). */
  clear(): void {
    this.owners.clear();
  }
}
