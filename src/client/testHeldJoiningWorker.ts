/**
 * A worker joining a test cluster that the scheduler already lists while it
 * still sets up its plugins: the setup of {@link gatedPlugin} (registered
 * before) holds it, with no stream to the scheduler yet.
 */

import type { Worker } from "../worker/worker.ts";
import type { LocalCluster } from "./localCluster.ts";
import { eventually, extraWorker } from "./testCluster.ts";
import { PLUGIN_GATE } from "./testTasks.ts";

/** A joining worker held in its plugins' setup; `finish` lets it go and closes it. */
export interface HeldJoiningWorker {
  /** Its address, as the scheduler lists it. */
  readonly address: string;
  /** Its start, which ends once {@link release} let the setup go. */
  readonly joining: Promise<Worker>;
  /** Lets the held setup go (more than once is fine). */
  release(): void;
  /** Lets it go and closes it: for a `finally`. */
  finish(): Promise<void>;
}

/** Start a worker joining `cluster`, and wait until the scheduler lists it, its setup held. */
export async function heldJoiningWorker(cluster: LocalCluster): Promise<HeldJoiningWorker> {
  let release = () => {};
  PLUGIN_GATE.wait = new Promise<void>((resolve) => {
    release = resolve;
  });
  const known = new Set(cluster.scheduler.state.workers.keys());
  const joining = extraWorker(cluster);
  const finish = async () => {
    release();
    await (await joining.catch(() => null))?.close();
  };
  try {
    await eventually(() => cluster.scheduler.state.workers.size > known.size, 5000, "listed");
  } catch (err) {
    await finish();
    throw err;
  }
  const address = [...cluster.scheduler.state.workers.keys()].find((a) => !known.has(a));
  return { address: address as string, joining, release, finish };
}
