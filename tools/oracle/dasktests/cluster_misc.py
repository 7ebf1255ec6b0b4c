"""Hand-written "after" streams of cluster tests (`gen_cluster`) of dask/distributed:
those of `distributed/tests/test_cancelled_state.py` not covered by `cancelled_state.py`,
and some of `distributed/tests/test_resources.py`, `test_reschedule.py` and
`test_worker_memory.py`.

Each stream is what one worker's state machine plausibly receives during the test's
story, written out by hand: the scheduler's messages, its peers' answers and its own
thread pool's reports. They are not the tests themselves: addresses, run ids, timestamped
stimulus ids and (within a generation) priorities are made up. Where two messages race,
the order judged most likely is used, and a variant where the other order leads
somewhere else. A worker ends with the PauseEvent it gets when it starts closing.
"""
from __future__ import annotations

from events import (
    cluster_worker,
    compute,
    failure,
    free,
    gather_network_failure,
    gather_success,
    pause,
    remove_worker,
    reschedule,
    scatter,
    secede,
    success,
    value,
)

SCENARIOS: dict = {}

# gen_cluster's first, second and third worker (the third one often started by the test).
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"
C = "tcp://127.0.0.1:40003"


def worker(address, nthreads, events, resources=None, **extra):
    """`extra`: the stream's `config_before` or `data_store_errors`."""
    return {**cluster_worker(address, nthreads, events, resources=dict(resources or {})), **extra}


def task(key, n, run_id, gen, who_has=None, order=0, rr=None, ann=None):
    """A compute-task from the scheduler; every dependency is a 28-byte int."""
    who_has = who_has or {}
    annotations = dict(ann or {})
    if rr:
        annotations.setdefault("resources", dict(rr))
    return compute(
        key,
        f"compute-task-{n}",
        run_id=run_id,
        who_has=who_has,
        nbytes={k: 28 for k in who_has},
        prio=(0, gen, order),
        duration=0.5,
        rr=rr,
        annotations=annotations,
    )


def done(key, n, run_id, v):
    """The thread pool finished the task with an int."""
    return success(
        key, f"task-finished-{n}", run_id=run_id, v=value(v), nbytes=28, type_="int"
    )


def erred(key, n, run_id, text):
    return failure(
        key,
        f"task-erred-{n}",
        run_id=run_id,
        exception_text=text,
        traceback_text='  File "test.py", line 1, in f\n    raise RuntimeError()\n',
    )


def fetched(peer, n, data, total_nbytes=None):
    """A peer answered get_data with these ints (maybe fewer keys than asked for)."""
    return gather_success(
        peer,
        {k: value(v) for k, v in data.items()},
        f"gather-dep-success-{n}",
        total_nbytes=28 * len(data) if total_nbytes is None else total_nbytes,
    )


def released(keys, n):
    return free(list(keys), f"client-releases-keys-{n}")


def released_one_by_one(keys, n):
    """Futures garbage-collected at the end of a test: one message per key."""
    return [free([k], f"client-releases-keys-{n}.{i}") for i, k in enumerate(keys)]


def closing(n):
    return pause(f"worker-status-change-{n}")


# ---------------------------------------------------------------------------------------
# test_cancelled_state.py::test_resumed_cancelled_handle_compute, worker b (two threads).
# f1 -> f2 are computed on a; f3 = block(f2) runs on b; f4 = f1 + f3 is wanted on b.
# Round 1 leaves f3 executing on b, then everything is released (f3 cancelled). Round 2
# computes f3 on a and asks b for f4, so b's f3 is resumed (to be fetched from a); then
# everything is released again. Round 3 asks again for f3 on b and f4 on b; the blocked
# execution of round 1 ends before (not waiting) or after (waiting) round 3 reaches b.
# Note: the test's stories date from before 2023.7, when a cancelled or resumed task
# counted as processing and stayed resumed when f4 was released; in 2023.7 releasing f4
# sends f3 back to cancelled, so its "resumed -> ..." steps read "cancelled -> ...".
R1_F3, R2_F4, R3_F3, R3_F4 = 3, 7, 10, 11


def resumed_prefix():
    return [
        task("f3", 1, R1_F3, 1, who_has={"f2": [A]}, ann={"workers": [B]}),
        fetched(A, 2, {"f2": 3}),
        released(["f3"], 3),
        released(["f2"], 3),
        task("f4", 4, R2_F4, 2, who_has={"f1": [A], "f3": [A]}, ann={"workers": [B]}),
        fetched(A, 5, {"f1": 2}),
        released(["f4"], 6),
        released(["f1"], 6),
    ]


def round3_tail(n, f3_run):
    """Round 3 from the compute of f3 (or from its end when f3_run is None)."""
    events = []
    if f3_run is not None:
        events += [
            task("f3", n, f3_run, 3, who_has={"f2": [A]}, ann={"workers": [B]}),
            fetched(A, n + 1, {"f2": 3}),
            done("f3", n + 2, f3_run, 4),
        ]
    events += [
        task("f4", n + 3, R3_F4, 3, who_has={"f1": [A], "f3": [B]}, ann={"workers": [B]}),
        fetched(A, n + 4, {"f1": 2}),
        done("f4", n + 5, R3_F4, 6),
    ]
    return events


# Not waiting, no error: the old execution ends while f3 is cancelled, so it is dropped
# without a word to the scheduler; round 3 starts from scratch.
SCENARIOS["after-resumed_cancelled_handle_compute-b-False-False"] = worker(B, 2, [
    *resumed_prefix(),
    done("f3", 7, R1_F3, 4),
    *round3_tail(8, R3_F3),
    *released_one_by_one(["f1", "f2", "f3", "f4"], 14),
    closing(15),
])

# Not waiting, with error: same, but the dropped execution failed.
SCENARIOS["after-resumed_cancelled_handle_compute-b-True-False"] = worker(B, 2, [
    *resumed_prefix(),
    erred("f3", 7, R1_F3, "RuntimeError('test error')"),
    *round3_tail(8, R3_F3),
    *released_one_by_one(["f1", "f2", "f3", "f4"], 14),
    closing(15),
])

# Waiting for processing, no error: round 3's compute of f3 finds it cancelled and turns
# it back into executing; the scheduler accepts the old execution's result (as the test
# expects) and f4 follows.
SCENARIOS["after-resumed_cancelled_handle_compute-b-False-True"] = worker(B, 2, [
    *resumed_prefix(),
    task("f3", 7, R3_F3, 3, who_has={"f2": [A]}, ann={"workers": [B]}),
    done("f3", 8, R1_F3, 4),
    *round3_tail(9, None),
    *released_one_by_one(["f1", "f3", "f4"], 15),
    closing(16),
])

# Same, but the scheduler refuses the result of the stale run (run id mismatch, as
# 2023.7's does): f3 is freed from memory and computed again from scratch.
SCENARIOS["after-resumed_cancelled_handle_compute-b-False-True-stale_run_refused"] = worker(
    B, 2, [
        *resumed_prefix(),
        task("f3", 7, R3_F3, 3, who_has={"f2": [A]}, ann={"workers": [B]}),
        done("f3", 8, R1_F3, 4),
        free(["f3"], "task-finished-8"),
        *round3_tail(9, 12),
        *released_one_by_one(["f1", "f2", "f3", "f4"], 15),
        closing(16),
    ])

# Waiting for processing, with error: back to executing, then the old execution fails;
# the scheduler takes the error (as the test expects) and frees f3 when the client lets go.
SCENARIOS["after-resumed_cancelled_handle_compute-b-True-True"] = worker(B, 2, [
    *resumed_prefix(),
    task("f3", 7, R3_F3, 3, who_has={"f2": [A]}, ann={"workers": [B]}),
    erred("f3", 8, R1_F3, "RuntimeError('test error')"),
    released(["f3"], 9),
    closing(10),
])

# Same, but the scheduler refuses the stale run's error: it frees f3 (error -> forgotten)
# and has it computed again, which succeeds.
SCENARIOS["after-resumed_cancelled_handle_compute-b-True-True-stale_run_refused"] = worker(
    B, 2, [
        *resumed_prefix(),
        task("f3", 7, R3_F3, 3, who_has={"f2": [A]}, ann={"workers": [B]}),
        erred("f3", 8, R1_F3, "RuntimeError('test error')"),
        free(["f3"], "task-erred-8"),
        *round3_tail(9, 12),
        *released_one_by_one(["f1", "f2", "f3", "f4"], 15),
        closing(16),
    ])


# ---------------------------------------------------------------------------------------
# test_cancelled_state.py::test_deadlock_cancelled_after_inflight_before_gather_from_worker,
# worker b (started by the test; two threads assumed). a holds f1, x holds f1B and
# f2 = f1 + f1B; b must fetch f2 from x for f3. While that transfer is held back, x is
# removed: f3 is freed (f2 cancelled in flight), f1B is recomputed on a and f2 is then
# assigned to b (resumed if it arrives before the transfer ends). The transfer then ends:
# x answers (still alive) or the connection fails (x closed).
B_X = B  # worker x of that test is gen_cluster's second worker


def deadlock_prefix():
    return [
        task("f3", 1, 5, 2, who_has={"f2": [B_X]}, ann={"workers": [C]}),
        free(["f3"], "remove-worker"),
        remove_worker(B_X, "remove-worker"),
    ]


def compute_f2(n):
    return task("f2", n, 8, 1, who_has={"f1": [A], "f1B": [A]}, ann={"workers": [B_X]})


def f3_again(n):
    return [
        task("f3", n, 9, 2, who_has={"f2": [C]}, ann={"workers": [C]}),
        done("f3", n + 1, 9, 6),
        closing(n + 2),
    ]


def transfer_end(n, close):
    if close:
        return gather_network_failure(B_X, f"gather-dep-network-failure-{n}", total_nbytes=28)
    return fetched(B_X, n, {"f2": 5})


for _close in (False, True):
    # cancelled: the transfer ends first (the cancelled f2 is forgotten), then f2 is
    # assigned to b and computed from a's f1 and f1B.
    SCENARIOS[f"after-deadlock_cancelled_after_inflight_before_gather_from_worker-b"
              f"-cancelled-{_close}"] = worker(C, 2, [
        *deadlock_prefix(),
        transfer_end(4, _close),
        compute_f2(5),
        fetched(A, 6, {"f1": 2, "f1B": 3}),
        done("f2", 7, 8, 5),
        *f3_again(8),
    ])

# resumed, x alive: the transfer delivers f2, which the worker takes as computed.
SCENARIOS["after-deadlock_cancelled_after_inflight_before_gather_from_worker-b"
          "-resumed-False"] = worker(C, 2, [
    *deadlock_prefix(),
    compute_f2(4),
    transfer_end(5, False),
    *f3_again(6),
])

# resumed, x closed: the transfer fails, so f2 is computed after fetching f1 and f1B.
SCENARIOS["after-deadlock_cancelled_after_inflight_before_gather_from_worker-b"
          "-resumed-True"] = worker(C, 2, [
    *deadlock_prefix(),
    compute_f2(4),
    transfer_end(5, True),
    fetched(A, 6, {"f1": 2, "f1B": 3}),
    done("f2", 7, 8, 5),
    *f3_again(8),
])


# ---------------------------------------------------------------------------------------
# test_cancelled_state.py::test_worker_stream_died_during_comm, worker b (two threads):
# b fetches inc-x from a for inc-y; a closes while the request is held back, so the
# scheduler frees inc-y, gives inc-x to b (allowed elsewhere) and reports a's removal;
# the request then fails. Then inc-x and inc-y run on b.
def stream_died_tail(n):
    return [
        done("inc-x", n, 2, 2),
        task("inc-y", n + 1, 3, 2, who_has={"inc-x": [B]}, ann={"workers": [B]}),
        done("inc-y", n + 2, 3, 3),
        *released_one_by_one(["inc-x", "inc-y"], n + 3),
        closing(n + 4),
    ]


X_ANN = {"workers": [A], "allow_other_workers": True}

# The scheduler's messages arrive before the failure: inc-x goes flight -> cancelled ->
# resumed, and the failure makes it execute.
SCENARIOS["after-worker_stream_died_during_comm-b"] = worker(B, 2, [
    task("inc-y", 1, 1, 2, who_has={"inc-x": [A]}, ann={"workers": [B]}),
    free(["inc-y"], "worker-close-2"),
    task("inc-x", 3, 2, 1, ann=X_ANN),
    remove_worker(A, "worker-close-2"),
    gather_network_failure(A, "gather-dep-network-failure-4", total_nbytes=28),
    *stream_died_tail(5),
])

# The failure comes first: inc-x goes missing, is forgotten with inc-y, and is then
# computed as a new task.
SCENARIOS["after-worker_stream_died_during_comm-b-failure_first"] = worker(B, 2, [
    task("inc-y", 1, 1, 2, who_has={"inc-x": [A]}, ann={"workers": [B]}),
    gather_network_failure(A, "gather-dep-network-failure-2", total_nbytes=28),
    free(["inc-y"], "worker-close-3"),
    task("inc-x", 4, 2, 1, ann=X_ANN),
    remove_worker(A, "worker-close-3"),
    *stream_died_tail(5),
])

# test_cancelled_state.py::test_cancelled_resumed_after_flight_with_dependencies, worker a
# (one thread): x in flight from b; the scheduler drops b, frees y and gives x to a (so x
# is resumed), then reports b's removal; the transfer fails and x runs here, then y.
SCENARIOS["after-cancelled_resumed_after_flight_with_dependencies-a"] = worker(A, 1, [
    task("y", 1, 1, 1, who_has={"x": [B]}, ann={"workers": [A]}),
    free(["y"], "stim-id"),
    task("x", 2, 2, 1, ann={"workers": [B], "allow_other_workers": True}),
    remove_worker(B, "stim-id"),
    gather_network_failure(B, "gather-dep-network-failure-3", total_nbytes=28),
    done("x", 4, 2, 2),
    task("y", 5, 3, 1, who_has={"x": [A]}, ann={"workers": [A]}),
    done("y", 6, 3, 3),
    *released_one_by_one(["x", "y"], 7),
    closing(8),
])


# ---------------------------------------------------------------------------------------
# test_reschedule.py::test_raise_reschedule, worker a (one thread): x1 and x2 land on a
# with ten "clog" tasks restricted to a; every x raises Reschedule() on a (after seceding,
# in the long-running flavour) and leaves; the clogs run in priority order meanwhile.
# The test ends once the xs are done on b, while clogs are still running.
CLOGS = [f"clog-{i}" for i in range(10)]


def clog_computes(n):
    return [task(k, f"{n}.{i}", 11 + i, 1, order=i, ann={"workers": [A]})
            for i, k in enumerate(CLOGS)]


def clog_done(i, n):
    return done(CLOGS[i], n, 11 + i, i + 1)


def clog_teardown(n):
    """The client lets go of all clogs (one running, which gets cancelled), a closes."""
    return [*released_one_by_one(CLOGS, n), closing(n + 1)]


SCENARIOS["after-raise_reschedule-a-executing"] = worker(A, 1, [
    task("x1", 1, 1, 1, order=0),
    task("x2", 2, 2, 1, order=1),
    *clog_computes(3),
    reschedule("x1", "reschedule-4"),
    clog_done(0, 5),
    clog_done(1, 6),
    reschedule("x2", "reschedule-7"),
    clog_done(2, 8),
    *clog_teardown(9),
])

SCENARIOS["after-raise_reschedule-a-long-running"] = worker(A, 1, [
    task("x1", 1, 1, 1, order=0),
    secede("x1", "secede-2", compute_duration=0.001),
    task("x2", 3, 2, 1, order=1),
    secede("x2", "secede-4", compute_duration=0.001),
    *clog_computes(5),
    reschedule("x1", "reschedule-6"),
    reschedule("x2", "reschedule-7"),
    clog_done(0, 8),
    clog_done(1, 9),
    *clog_teardown(10),
])


# ---------------------------------------------------------------------------------------
# test_worker_memory.py

# test_fail_to_pickle_execute_1, worker a: the result claims 100 GB, so storing it spills
# at once and pickling fails: the task errs. Then a few plain tasks of the follow-up map
# run normally; the map's futures and then x are released.
PICKLE_ERROR = {
    "key": "x",
    "exception_text": "TypeError('Could not serialize object of type FailToPickle')",
    "traceback_text": '  File "distributed/protocol/pickle.py", line 63, in dumps\n',
}
_BIG = 100_000_000_000
INCS = [f"inc-{i}" for i in range(10)]
SCENARIOS["after-fail_to_pickle_execute_1-a"] = worker(A, 1, [
    task("x", 1, 1, 1),
    success("x", "task-finished-2", run_id=1, nbytes=_BIG, type_="FailToPickle",
            v=value(None, typename="test_worker_memory.FailToPickle", sizeof=_BIG)),
    task(INCS[0], 3, 2, 2, order=0),
    task(INCS[1], 4, 3, 2, order=1),
    done(INCS[0], 5, 2, 1),
    task(INCS[5], 6, 4, 2, order=5),
    done(INCS[1], 7, 3, 2),
    task(INCS[7], 8, 5, 2, order=7),
    done(INCS[5], 9, 4, 6),
    done(INCS[7], 10, 5, 8),
    *released_one_by_one([INCS[7], INCS[5], INCS[1], INCS[0]], 11),
    released(["x"], 12),
    closing(13),
], data_store_errors={1: [PICKLE_ERROR]})

# test_override_data_vs_memory_monitor: a result reported as 8.1 GB lands in memory and
# the memory monitor pauses the worker; closing a paused worker sends no second pause.
SCENARIOS["after-override_data_vs_memory_monitor-a"] = worker(A, 1, [
    task("C-1", 1, 1, 1),
    success("C-1", "task-finished-2", run_id=1, nbytes=8_100_000_000, type_="C",
            v=value(None, typename="test_worker_memory.C", sizeof=8_100_000_000)),
    pause("worker-status-change-3"),
    released(["C-1"], 4),
])


# ---------------------------------------------------------------------------------------
# test_resources.py

# test_resource_submit, worker a (A: 5): a task needing 3 of the 5 A runs and returns
# them.
SCENARIOS["after-resource_submit-a"] = worker(A, 1, [
    task("inc-1", 1, 1, 1, rr={"A": 3}),
    done("inc-1", 2, 1, 2),
    released(["inc-1"], 3),
    closing(4),
], resources={"A": 5})

# test_move, worker a (A: 1): a constrained task's dependency was scattered to b; it is
# fetched, then the task waits for the resource (constrained) and runs.
SCENARIOS["after-move-a"] = worker(A, 1, [
    task("inc-2", 1, 1, 1, who_has={"int-1": [B]}, rr={"A": 1}),
    fetched(B, 2, {"int-1": 1}),
    done("inc-2", 3, 1, 2),
    released(["inc-2"], 4),
    released(["int-1"], 5),
    closing(6),
], resources={"A": 1})

# test_dont_work_steal, worker a (A: 1): data scattered here, then ten separately
# submitted tasks needing A and that data, all of equal scheduler priority: the first
# runs at once; of the rest the last to arrive runs first.
SLOWADDS = [f"slowadd-{i}" for i in range(10)]
SCENARIOS["after-dont_work_steal-a"] = worker(A, 1, [
    scatter({"int-1": 1}, "update-data-1"),
    *[task(k, f"2.{i}", 1 + i, 1, who_has={"int-1": [A]}, rr={"A": 1})
      for i, k in enumerate(SLOWADDS)],
    *[done(SLOWADDS[i], f"3.{i}", 1 + i, 1 + i) for i in (0, 9, 8, 7, 6, 5, 4, 3, 2, 1)],
    *released_one_by_one(SLOWADDS, 4),
    released(["int-1"], 5),
    closing(6),
], resources={"A": 1})

# test_compute, worker b (B: 11, one thread): y needs B and x from a (fetched, then
# constrained); then ten tasks needing one B each: resources are plenty, the single
# thread is what makes them wait, and they run in priority order.
XS = [f"inc-{i}" for i in range(10, 20)]
SCENARIOS["after-compute-b"] = worker(B, 1, [
    task("inc-y", 1, 2, 1, who_has={"inc-x": [A]}, order=1, rr={"B": 1}),
    fetched(A, 2, {"inc-x": 2}),
    done("inc-y", 3, 2, 3),
    *[task(k, f"4.{i}", 3 + i, 2, order=i, rr={"B": 1}) for i, k in enumerate(XS)],
    *[done(k, f"5.{i}", 3 + i, 11 + i) for i, k in enumerate(XS)],
    *released_one_by_one(XS + ["inc-y", "inc-x"], 6),
    closing(7),
], resources={"B": 11})

# test_get, worker a (A: 1): x and y = inc(x) both need A; y's dependency is local, so y
# goes straight from waiting to constrained to executing.
SCENARIOS["after-get-a"] = worker(A, 1, [
    task("x", 1, 1, 1, order=0, rr={"A": 1}),
    done("x", 2, 1, 2),
    task("y", 3, 2, 1, who_has={"x": [A]}, order=1, rr={"A": 1}),
    done("y", 4, 2, 3),
    released(["y"], 5),
    released(["x"], 5),
    closing(6),
], resources={"A": 1})
