import {
  AddKeysMsg,
  Execute,
  GatherDep,
  LongRunningMsg,
  ReleaseWorkerDataMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  RetryBusyWorkerLater,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
} from "./instructions.ts";
import { Recs } from "./recs.ts";
import { TaskState } from "./taskState.ts";

/**
 * One live instance of each class the state machine allocates and soon drops.
 *
 * V8's optimized code checks the hidden classes ("maps") of the objects it handles and
 * holds those maps weakly. When no instance of a class is left at a full collection,
 * the maps its constructor built are collected, and every function whose optimized
 * code checked them is thrown away ("weak objects" in `node --trace-deopt`) and must
 * warm up again. Recommendations and instructions are garbage once a stimulus is
 * handled, and tasks once they are forgotten, so each full collection at a quiet
 * moment (an idle worker; a process that replaces its state machine, as the simulator,
 * the tests and `npm run bench:state` do) deoptimized 30–70 functions of the hot path.
 * These instances keep those maps alive for the life of the process, at the cost of
 * about 9 KB (the large recommendations hold 20 tasks).
 *
 * Fields are given values of the kinds the hot path stores (numbers that are not small
 * integers where a field may hold one), so that the maps kept are the ones in use.
 */
export const KEPT_SHAPES: readonly object[] = Object.freeze(keptShapes());

function keptShapes(): object[] {
  const ts = new TaskState("kept-shape");
  ts.duration = 0.5;
  ts.nbytes = 0.5;
  ts.startTime = 0.5;
  ts.stopTime = 0.5;
  ts.priority = [0];
  const single = Recs.of(ts, "waiting");
  const grown = new Recs();
  for (let i = 0; i < 20; i++) grown.set(new TaskState(`kept-shape-${i}`), "released");
  return [
    ts,
    single,
    grown,
    new GatherDep("", new Set(), 0.5, ""),
    new Execute("", ""),
    new RetryBusyWorkerLater("", ""),
    new TaskFinishedMsg("", 0, 0.5, "", "", {}, null, [], ""),
    new TaskErredMsg("", 0, null, null, "", "", null, [], ""),
    new ReleaseWorkerDataMsg("", ""),
    new RescheduleMsg("", ""),
    new LongRunningMsg("", 0.5, ""),
    new AddKeysMsg([], ""),
    new RequestRefreshWhoHasMsg([], ""),
    new StealResponseMsg("", null, ""),
  ];
}
