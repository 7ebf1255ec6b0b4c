import type { Recs } from "../worker/state/recs.ts";
import type { TaskState } from "../worker/state/taskState.ts";
import type { WorkerState, WorkerStateChooser } from "../worker/state/workerState.ts";
import type { ComparableRecord } from "./records.ts";

/**
 * `--follow-log`: a {@link WorkerStateChooser} that makes the choices Python's set
 * order made in the live run, as the dumped log shows them. For each stimulus it is
 * given the dumped records of that stimulus; then
 * - when several recommendations are pending, it picks the task of the next dumped
 *   transition (this also decides which of several tasks made ready at once gets the
 *   free thread);
 * - when peers tie for a gather, it ranks first the peers of the dumped
 *   `gather-dependencies` records logged at the same point, in their order.
 * When the dumped record names nothing that is pending, it leaves the default.
 */
export class LogFollower implements WorkerStateChooser {
  #ws: WorkerState | null = null;
  #transitions: readonly ComparableRecord[] = [];
  /** Peers of the dumped gathers, by the number of transitions logged before them. */
  #gathers = new Map<number, string[]>();
  #counterAtStart = 0;
  /** Recommendations taken in another order than the default. */
  steeredRecommendations = 0;
  /** Gather tie-breaks set from the dumped log. */
  pinnedGathers = 0;

  /** The state machine being steered (it is built with this chooser, then attached). */
  attach(ws: WorkerState): void {
    this.#ws = ws;
  }

  /** Follow the dumped `records` of the stimulus about to be replayed (none: don't steer). */
  begin(records: readonly ComparableRecord[]): void {
    const ws = this.#ws;
    if (ws === null) throw new Error("LogFollower.begin before attach");
    this.#counterAtStart = ws.transitionCounter;
    const transitions: ComparableRecord[] = [];
    const gathers = new Map<number, string[]>();
    for (const r of records) {
      if (r.isTransition) transitions.push(r);
      else if (r.gatherFrom !== null) {
        const at = transitions.length;
        let peers = gathers.get(at);
        if (peers === undefined) gathers.set(at, (peers = []));
        peers.push(r.gatherFrom);
      }
    }
    this.#transitions = transitions;
    this.#gathers = gathers;
  }

  /** Transitions replayed since {@link begin}: the index of the next dumped transition. */
  #done(): number {
    return (this.#ws as WorkerState).transitionCounter - this.#counterAtStart;
  }

  nextRecommendation(recs: Recs): TaskState | null {
    const next = this.#transitions[this.#done()];
    if (next === undefined) return null;
    for (const [ts] of recs) {
      if (ts.key === next.key) {
        if (ts !== recs.lastTask()) this.steeredRecommendations++;
        return ts;
      }
    }
    return null;
  }

  gatherTieBreak(worker: string, rnd: number): number {
    const peers = this.#gathers.get(this.#done());
    if (peers === undefined) return rnd;
    const i = peers.indexOf(worker);
    if (i < 0) return rnd;
    this.pinnedGathers++;
    // Below every random number in [0, 1), in the dumped order.
    return i - peers.length;
  }
}
