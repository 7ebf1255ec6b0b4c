import { HeapSet } from "../../util/heapSet.ts";
import { comparePriority, type Priority } from "../../util/priority.ts";
import type { TaskState } from "./taskState.ts";

/** One peer to gather from: the seed's tuple (priority, is_remote, -ntasks, rnd, worker, tasks). */
export interface GatherCandidate {
  priority: Priority;
  isRemote: boolean;
  ntasksNeg: number;
  rnd: number;
  worker: string;
  tasks: HeapSet<TaskState>;
}

/**
 * The min-heap of `_select_workers_for_gather`, as `heapq` keeps it. It is rebuilt on
 * every `_ensure_communicating` (once a stimulus), so its entries are pooled: a worker
 * fetching from many peers would otherwise allocate one object a peer a stimulus.
 */
export class GatherCandidates {
  private readonly heap: GatherCandidate[] = [];
  private readonly pool: GatherCandidate[] = [];

  get size(): number {
    return this.heap.length;
  }

  /** Appends an entry without ordering: only after {@link clear}, before {@link heapify}. */
  add(
    priority: Priority,
    isRemote: boolean,
    ntasksNeg: number,
    rnd: number,
    worker: string,
    tasks: HeapSet<TaskState>,
  ): void {
    const n = this.heap.length;
    let c = this.pool[n];
    if (c === undefined) {
      c = { priority, isRemote, ntasksNeg, rnd, worker, tasks };
      this.pool.push(c);
    } else {
      c.priority = priority;
      c.isRemote = isRemote;
      c.ntasksNeg = ntasksNeg;
      c.rnd = rnd;
      c.worker = worker;
      c.tasks = tasks;
    }
    this.heap.push(c);
  }

  heapify(): void {
    const heap = this.heap;
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
  }

  /**
   * Removes and returns the least entry. It stays valid until the next {@link add} or
   * {@link clear}, and may be given back with {@link push}.
   */
  pop(): GatherCandidate {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop() as GatherCandidate;
    if (heap.length > 0) {
      heap[0] = last;
      siftDown(heap, 0);
    }
    return top;
  }

  /** Puts back an entry returned by {@link pop}, its fields updated. */
  push(c: GatherCandidate): void {
    const heap = this.heap;
    heap.push(c);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!candidateLess(heap[i], heap[p])) return;
      const t = heap[i];
      heap[i] = heap[p];
      heap[p] = t;
      i = p;
    }
  }

  /** Empties the heap and lets go of the peers' task sets, which the pool would keep alive. */
  clear(): void {
    this.heap.length = 0;
    for (const c of this.pool) {
      if (c.tasks === LET_GO) break;
      c.tasks = LET_GO;
    }
  }
}

/** What a pooled entry holds once cleared; entries are filled from the front, so the first one holding it ends the used ones. */
const LET_GO = new HeapSet<TaskState>((ts) => ts.priority as Priority);

/** Python's tuple order of (priority, is_remote, -ntasks, rnd, worker). */
function candidateLess(a: GatherCandidate, b: GatherCandidate): boolean {
  const c = comparePriority(a.priority, b.priority);
  if (c !== 0) return c < 0;
  if (a.isRemote !== b.isRemote) return !a.isRemote;
  if (a.ntasksNeg !== b.ntasksNeg) return a.ntasksNeg < b.ntasksNeg;
  if (a.rnd !== b.rnd) return a.rnd < b.rnd;
  return a.worker < b.worker;
}

function siftDown(heap: GatherCandidate[], i: number): void {
  const n = heap.length;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) return;
    const r = l + 1;
    const m = r < n && candidateLess(heap[r], heap[l]) ? r : l;
    if (!candidateLess(heap[m], heap[i])) return;
    const t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
}
