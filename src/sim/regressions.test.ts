/**
 * Regression tests for the bugs the simulator found, each named after the
 * seed (and options) that exposed it. Each run must now pass.
 */

import { describe, expect, test } from "vitest";
import { DEFAULT_FAULT_RATES, parseFaults } from "./faults.ts";
import type { SimOptions } from "./options.ts";
import { formatFailure } from "./report.ts";
import { simulate } from "./simulation.ts";

/** The heavy-fault configuration of the first stress runs. */
const STRESS: Omit<SimOptions, "seed"> = {
  workload: "mix",
  workers: 3,
  tasks: 30,
  faults: parseFaults(
    "death=1,network=0.1,busy=0.1,slow=0.1,error=0.03,secede=0.1,steal=5,pause=1,reschedule=0.03,partition=2",
  ),
};

/**
 * The default faults the soak profile's seeds were found with: all but
 * fetch-error, added later. Its rate 0 draws nothing, so these seeds replay their
 * runs as found (with it on, each gather draws once more and every run changes).
 */
const SOAK_FAULTS = { ...DEFAULT_FAULT_RATES, "fetch-error": 0 };

/** The `scatter` workload as its seeds below were found: before the client replicated. */
const SCATTER: Omit<SimOptions, "seed"> = { workload: "scatter", replicate: 0 };

/**
 * Each seed runs as found: without the client firing and forgetting keys,
 * restarting the cluster, actors, or rounds of work stealing, which came later
 * (its runs that do would be other runs).
 */
function expectPasses(options: SimOptions): void {
  const r = simulate({
    fireAndForget: 0,
    restart: 0,
    restartWorker: 0,
    actors: 0,
    workStealing: false,
    ...options,
  });
  expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
}

/**
 * A run the reference's own validation fails (a Dask bug the port keeps):
 * validated, an invalid state (validateState after a stimulus, or validateTask
 * raising InvalidTaskState within one), whose message is returned; unvalidated,
 * it ends right.
 */
function failsValidationOnly(given: SimOptions): string {
  // Found before work stealing: replayed as they ran.
  const options: SimOptions = { workStealing: false, ...given };
  const r = simulate(options);
  const validation =
    r.failure?.kind === "invalid-state" ||
    (r.failure?.kind === "raised" &&
      /raised handling \w+ \([^)]*\): InvalidTaskState:/.test(r.failure.message));
  expect(validation, r.ok ? "the run passed" : formatFailure(r)).toBe(true);
  expect(simulate({ ...options, validate: false }).failure).toBeNull();
  return r.failure?.message ?? "";
}

describe("simulator regressions", () => {
  // Scheduler: a task released on its way back to waiting that found an
  // erred input went to erred but stayed among its inputs' waiters
  // (validateState: "waiter … is not in play"). Fixed in releasedWaiting.
  test("seed 6430 (stress): erred task left among its inputs' waiters", () => {
    expectPasses({ ...STRESS, seed: 6430 });
  });
  test("seed 5441 (stress): same bug, through a shuffle", () => {
    expectPasses({ ...STRESS, seed: 5441 });
  });
  // Scheduler: in one remove-worker, a stale recommendation released an input
  // that had just become needed by a task placed on its holder: the worker got
  // compute-task then free-keys for the input (a ready task without its data).
  // Fixed by dropping stale release recommendations.
  test("seed 5537 (stress): stale release frees the input of a task just assigned", () => {
    expectPasses({ ...STRESS, seed: 5537 });
  });
  // Scheduler: in one remove-worker, a task whose input got KilledWorker was
  // recommended erred, then a release recommendation (its last waiter left)
  // overrode that; by the time it ran, a recomputed task waited on it again,
  // and it stayed released under that waiter (its blame kept it from waiting).
  // Fixed: such a release errs the task, as it was going to.
  test("seed 2075 (soak profile): a release that overrode erred leaves a waiter on a released task", () => {
    expectPasses({ seed: 2075, workload: "mix", tasks: 33, workers: 2, faults: SOAK_FAULTS });
  });
  test("seed 31807 (soak profile): same bug, found again by the soak", () => {
    expectPasses({ seed: 31807, workload: "mix", tasks: 54, faults: SOAK_FAULTS });
  });
});

describe("known reference bugs (the worker port behaves as Dask's worker: not changed)", () => {
  // Worker: a gather fails on the network for a cancelled dependency D (its
  // dependent was freed) and a resumed task R (flight, then asked to compute).
  // R is transitioned first: resumed → released → waiting, recommending D
  // fetch; D, cancelled and done, goes cancelled → released, and stays
  // released under the waiting R (validateState fails). Dask's worker does
  // the same whenever its set of in-flight keys iterates R before D, which
  // depends on Python's string hashing. Reported, not fixed; pinned in the
  // worker's own tests too (cancelled.test.ts, and the reference's recording
  // test/vectors/oracle/scenario-cancelled-dep-of-resumed). Which seeds find it
  // depends on every detail of the simulated cluster: 68347 and 477272, from the
  // soak, found it until root-ish tasks with inputs were queued (Dask's
  // is_rootish), and 1699, 204027, 407417 and 438476 before the scheduler joined
  // a stimulus's free-keys per worker. A scan of seeds with the soak profile's
  // options (without work stealing and the Active Memory Manager, as the soak's
  // were found) finds it only with 13373 of seeds 1..150,000 (D is inc-12 and R
  // inc-18 there), until occupancy began to count each task at its function's
  // current average (Dask's occupancy, re-costed as durations are learnt), which
  // places tasks otherwise: since then 24861 is the only one of seeds 1..31,500
  // with that profile to find it (D is inc-5 there).
  test.each([
    // the soak profile's options (as its replay command gives them), the dependency D left released
    { seed: 24861, tasks: 33, workers: 5, dep: "inc-5" },
  ])(
    "seed $seed (soak profile): a cancelled, done dependency ends released under its waiting dependent",
    ({ dep, ...options }) => {
      const r = simulate({
        workload: "mix",
        faults: SOAK_FAULTS,
        actors: 0,
        workStealing: false,
        activeMemoryManager: false,
        ...options,
      });
      expect(r.failure?.kind).toBe("invalid-state");
      expect(r.failure?.message).toMatch(/validateState failed after GatherDepNetworkFailureEvent/);
      expect(r.failure?.message).toContain(`"${dep}","cancelled","released","released"`);
    },
  );
  // Worker: x, cancelled while executing, is asked to compute again; its
  // compute-task gives its missing input k a holder, but x only resumes
  // (cancelled → executing) and nothing moves k out of missing (validateState
  // fails; without validation a refresh of who-has fetches it). k had gone
  // missing when, x cancelled, k was dropped as a replica and another task's
  // compute-task named this worker alone for it. Pinned in the worker's tests
  // too (cancelled.test.ts, test/vectors/oracle/scenario-missing-dep-of-recomputed).
  // Here k is load-1 and x inc-7. Seed 601484 found it until root-ish tasks with
  // inputs were queued (Dask's is_rootish); 75402 is the only one of seeds
  // 1..85,000 to find it since.
  test("seed 75402 (restarts): a missing input given a holder by its resumed dependent stays missing", () => {
    const message = failsValidationOnly({ seed: 75402, restart: 0.3, restartWorker: 0.3 });
    expect(message).toMatch(/validateState failed after ComputeTaskEvent/);
    expect(message).toMatch(/InvalidTaskState: load-1 :: missing/);
  });
  // The same bug with x resumed from flight, in the `configured` workload: load-14,
  // in flight here as sum-3's input, is cancelled when sum-3 is freed, while config,
  // fetched for a stolen load-10, has gone missing (both its holders failed on the
  // network); load-14's own compute-task gives config a holder, but load-14 only
  // resumes (cancelled → resumed(flight→waiting)). Pinned in the worker's tests too
  // (cancelled.test.ts, test/vectors/oracle/scenario-missing-dep-of-resumed-flight).
  // Seed 878 (200 loads, work stealing on) was the only failure of the first scan
  // of the workload (20,000 runs), until occupancy began to count each task at its
  // function's current average, which places tasks otherwise; no seed was found
  // since (nor in the fifty-seventh session's 3,000 runs of 200 loads, from seeds
  // 7,500,000 and 7,510,000). Slow links found it again: seed 7620041 (40 loads,
  // latency 0.25 s), the same way: load-34, in flight as an input, is cancelled;
  // config, fetched for load-30, goes missing (the transfer from its one holder
  // failed on the network); load-34's own compute-task, late, gives config a
  // holder, and load-34 only resumes. --no-validate passes.
  test("seed 7620041 (configured, slow links): a missing input given a holder by its resumed dependent stays missing", () => {
    const message = failsValidationOnly({
      seed: 7620041,
      workload: "configured",
      latency: 0.25,
      workStealing: true,
    });
    expect(message).toMatch(/validateState failed after ComputeTaskEvent/);
    expect(message).toMatch(/InvalidTaskState: config :: missing/);
  });
  // Worker: the scheduler asks for actor m on a worker that holds m as another
  // task's input (in flight, or released with the input's nbytes): m goes into
  // `actors` at once, and validateState fails (the reference the same:
  // test/vectors/oracle/scenario-actor-of-fetched-input); without validation the
  // run ends right. Here load-3, released on the worker with the nbytes it had as
  // sum-4's input, is asked of it as an actor. Seed 910607 found it until root-ish
  // tasks with inputs were queued (Dask's is_rootish); 16566 is the only one of
  // seeds 1..32,000 to find it since.
  test("seed 16566 (restarts): an actor asked of a worker fetching it as an input fails validation only", () => {
    const message = failsValidationOnly({ seed: 16566, restart: 0.15, restartWorker: 0.15 });
    expect(message).toMatch(/nbytes=0; expected 13/);
  });
  // Worker: the actor A, executing on W, is freed there (cancelled, still running)
  // and computed on another worker; a dependent D is then asked of W with A on
  // that peer, and A resumes (executing → fetch). A stays in `actors` (compute-task
  // put it there; only purging the task takes it out), so validateTask(D) fails
  // right after the compute-task's transitions: A is in D's waitingForData but, in
  // `actors`, counts as present. Without validation A's execution ends (resumed →
  // memory, add-keys) and D runs on it. Here the scheduler, in one remove-worker,
  // placed add-5 on W, released it as an erred input's cascade released its
  // dependent mul-19, then, removing another worker, placed it again elsewhere;
  // inc-18 came to W once it finished. The reference the same (cancelled.test.ts,
  // test/vectors/oracle/scenario-actor-resumed-for-fetch). Found with the defaults,
  // work stealing and the Active Memory Manager on (without either it passes):
  // seed 5318 found it until root-ish tasks with inputs were queued (Dask's
  // is_rootish), then seed 139 until work stealing chose its thieves on their
  // occupancy counting the steals in flight (Dask's stealing_objective). No seed
  // of 1..40,000 finds it since (the defaults; nor 1..6,000 with a stealing
  // interval of 0.05 s or 0.2 s, 30% actors, or restarts). The fifty-seventh
  // session's scatter runs with one-copy replicates found it again: in one
  // check-worker-ttl the scheduler placed the actor inc-5 on W, released it as
  // inc-10's release cascaded, and placed it on another worker; inc-14's
  // compute-task came to W once it finished there.
  test("seed 7220386 (scatter, one-copy replicates): a dependent of an actor resumed for fetch fails validation only", () => {
    const message = failsValidationOnly({
      seed: 7220386,
      workload: "scatter",
      tasks: 30,
      workers: 3,
      replicate: 1,
      replicateOne: 1,
      workStealing: true,
    });
    expect(message).toMatch(/raised handling ComputeTaskEvent/);
    expect(message).toMatch(/InvalidTaskState: inc-14 :: waiting/);
  });
  // Scheduler: a worker's removal lost the only copy of a key nobody wanted any
  // more (its client had released it; a waiting dependent kept it), and in the
  // same stimulus an input of it went released → erred, which errs the
  // dependents not in memory: the key, recommended forgotten a moment before,
  // erred instead and was held for good (12 tasks left once the client released
  // everything). Dask's transition errs it the same way. Fixed: released → erred
  // forgets a dependent nobody wants and nothing depends on.
  test("seed 900264 (restarts): an unwanted dependent of a task that errs is forgotten, not erred", () => {
    const r = simulate({
      seed: 900264,
      restart: 0.15,
      restartWorker: 0.15,
      workStealing: false, // found before work stealing: replayed as it ran
    });
    expect(r.failure).toBeNull();
  });
  // Scheduler: a replicate's copy of sum-8 was on its way to a worker when sum-8's
  // only holder left; the request failed, but the worker went on fetching it, and
  // the compute-task of sum-8, computed again there, found it fetching (the
  // worker's state machine raised: RecommendationsConflict). Fixed: the workers
  // still fetching a key that leaves memory are sent free-keys.
  test("seed 12325 (configured, work stealing): a copy of a lost key is no longer fetched", () => {
    const r = simulate({ seed: 12325, workload: "configured", workStealing: true });
    expect(r.failure, r.ok ? "" : formatFailure(r)).toBeNull();
  });
  // Simulator: the client gave up scattered-20 while its only holder was being
  // removed; its message, 0.3 s on the way, came after the removal, in which the
  // scheduler lost the key and told the client so (SCATTERED_DATA_LOST). The scatter
  // ledger had marked the key given up, not lost, and the check of the client's
  // cancelled keys took the scheduler's reason for a wrong one ("lost"). A key
  // forgotten with its last holder is lost, whatever the client sent meanwhile.
  test("seed 7810067 (scatter, slow links): a scattered key the client gave up is lost with its last holder all the same", () => {
    const r = simulate({ seed: 7810067, workload: "scatter", latency: 0.3, replicate: 1 });
    expect(r.failure, r.ok ? "" : formatFailure(r)).toBeNull();
  });
  // Simulator: replicate-68 asked for one copy of scattered-3 among the running
  // workers; a copy arrived, then a round of the Active Memory Manager dropped the
  // copies on the allowed workers (keeping one on a worker the request did not
  // allow), and the answer came after. The replicate ledger counted the workers that
  // left or said they dropped a key, not those the AMM told to drop it: "lists on 0
  // of the allowed workers". Those are excused now, as the others.
  test("seed 7920113 (scatter, slow links): copies the AMM dropped do not count against a replicate's answer", () => {
    const r = simulate({ seed: 7920113, workload: "scatter", latency: 0.3, replicate: 1 });
    expect(r.failure, r.ok ? "" : formatFailure(r)).toBeNull();
  });
  // Three scheduler bugs the scatter workload found (the first two also have a
  // unit test in src/scheduler/state; the third needs an order of recommendations
  // within one remove-worker that no small graph gave). Their seeds run without
  // replicate (`SCATTER`), which came later: they replay the runs that found them.
  // update-graph: new tasks only cancelled keys needed were still created, then
  // computed for nobody and kept released (a leak). Fixed in updateGraph.
  test("seed 36 (scatter): tasks only cancelled keys need are not created", () => {
    expectPasses({ ...SCATTER, seed: 36 });
  });
  // A stale task-finished from a worker fetching the key for a task of its own
  // was answered with free-keys, which cancelled that fetch (the worker's
  // validateState failed). Fixed: such a report is ignored.
  test("seed 236 (scatter): a stale report does not free a key its worker is fetching", () => {
    expectPasses({ ...SCATTER, seed: 236 });
  });
  // In one remove-worker, a task whose last dependent was forgotten (it needed
  // lost scattered data) was recommended forgotten, then sent back to waiting
  // as a waiter of another lost input: computed for nobody, kept released.
  // Fixed: a waiting recommendation for a task nothing needs forgets it.
  test.each([953, 1498, 1799])(
    "seed %i (scatter): an orphaned input is forgotten, not recomputed",
    (seed) => {
      expectPasses({ ...SCATTER, seed });
    },
  );
  test("seed 387 (scatter, 60 tasks) and 24 (scatter, 5 workers): the same", () => {
    expectPasses({ ...SCATTER, seed: 387, tasks: 60 });
    expectPasses({ ...SCATTER, seed: 24, workers: 5 });
  });
  // Those seeds no longer reach the fix (the simulator has changed since: they
  // pass without it, a mutation sweep found); seed 1105 with every default of
  // the scatter workload today (work stealing, actors, restarts...) does, and
  // without the fix ends with `load-9 :: released … needed by nothing but not
  // forgotten` (the only failure of seeds 1..3,000 without it).
  test("seed 1105 (scatter, with today's defaults): the same", () => {
    const r = simulate({ workload: "scatter", seed: 1105 });
    expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
  });
  // Scheduler: a worker asked for a copy (acquire-replicas) that could not fetch it
  // otherwise than on the network errs the key and reports task-erred (fetchFailed);
  // the scheduler answered the replicate but never told the worker to free its
  // erred copy, nothing there needing it: a leak once the client released
  // everything. Fixed: such a report is answered with free-keys.
  // They were found before replicate asked for single copies, and before rebalances
  // and retirements (`replicateOne: 0, rebalance: 0, retire: 0`).
  test.each([
    { seed: 21, options: {} },
    { seed: 2860, options: {} },
    { seed: 235, options: { workers: 5 } },
  ])(
    "seed $seed (scatter, replicating): an erred copy is freed on its worker",
    ({ seed, options }) => {
      expectPasses({
        seed,
        workload: "scatter",
        replicateOne: 0,
        rebalance: 0,
        retire: 0,
        ...options,
      });
    },
  );
  // The simulator's replicate ledger: a worker died holding the only copy of a key
  // a rebalance was moving, and the retirement this advanced closed the worker the
  // copy was for. The scheduler failed the copy as lost (the death came first);
  // the ledger followed the retirement's close first and expected "left before it
  // had a copy". Fixed: the ledger follows a stimulus in the scheduler's order.
  test("seed 83780 (scatter, 3 workers, retiring often): a copy fails as the scheduler saw it first", () => {
    expectPasses({ seed: 83780, workload: "scatter", workers: 3, retire: 0.8 });
  });
  // A worker paused by a retirement paused for memory too, then resumed for memory
  // without telling the scheduler (which held it anyway). The retirement failed:
  // the scheduler resumed it but, as it last heard, kept it paused, assigning it
  // nothing more. Fixed: the worker tells of every change for memory.
  test("seed 91565 (scatter, replicating, rebalancing, retiring): the scheduler hears the worker resume", () => {
    expectPasses({
      seed: 91565,
      workload: "scatter",
      replicate: 1,
      rebalance: 0.3,
      retire: 0.5,
    });
  });
});
