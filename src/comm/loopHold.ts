/**
 * A connection that keeps its process running only while something waits on
 * it. A client's connections over TCP were always counted by Node.js as work
 * left, so that a program that forgot `client.close()` never ended after its
 * last line, where a Dask script does (and a program on a LocalCluster, whose
 * connections are in-process, did). With a `LoopHold` the connection is
 * `unref`'d while nothing is held, and `ref`'d while at least one hold is: a
 * request without its answer, a result awaited.
 */

import type { Comm } from "./comm.ts";

/** Counts what waits on `comm`, keeping the process alive while any does. */
export class LoopHold {
  private count = 0;

  constructor(private readonly comm: Comm) {
    comm.keepProcessAlive?.(false);
  }

  /** Whether anything holds the process now. */
  get held(): boolean {
    return this.count > 0;
  }

  /** Keep the process alive until the returned function is called (it may be called more than once). */
  hold(): () => void {
    if (this.count++ === 0) this.comm.keepProcessAlive?.(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.count === 0) this.comm.keepProcessAlive?.(false);
    };
  }
}
