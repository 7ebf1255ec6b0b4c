"""Streams after dask/distributed's `distributed/tests/test_cancelled_state.py`.

The tests of that file that drive a bare WorkerState, minus those already published as
vectors; then a few "after" streams: the worker-side stimuli that some of its cluster
tests (`gen_cluster`) deliver to one worker, written out by hand. Those are not the
tests themselves (timings, run ids and stimulus ids are made up), only their story.
"""
from __future__ import annotations

from events import (
    EXECUTE_DONE_KINDS as DONE_KINDS,
    RUNNING_FLAVOURS as FLAVOURS,
    RUNNING_TASK_CONFIG as RUNNING_CONFIG,
    execute_done as done,
    running_task,
    compute,
    failure,
    free,
    gather_failure,
    gather_network_failure,
    gather_success,
    pause,
    scatter,
    secede,
    success,
    value,
)

WS2 = "127.0.0.1:2"

SCENARIOS: dict = {}

# flight -> cancelled, then the transfer fails with an exception: the key is forgotten.
SCENARIOS["flight_cancelled_error"] = [
    compute("y", "s1", who_has={"x": [WS2]}),
    free(["y", "x"], "s2"),
    gather_failure(WS2, "s3", exception_text="Exception()"),
]

# flight -> cancelled -> flight: a new dependent of the cancelled transfer revives it.
SCENARIOS["workerstate_flight_to_flight"] = [
    compute("y", "s1", who_has={"x": [WS2]}),
    free(["y", "x"], "s2"),
    compute("z", "s3", who_has={"x": [WS2]}),
]

for _f in FLAVOURS:
    # A running task released then asked for again goes straight back to running.
    SCENARIOS[f"workerstate_executing_to_executing-{_f}"] = {
        "config": RUNNING_CONFIG,
        "events": running_task(_f) + [
            free(["x"], "s1"),
            compute("x", "s2", rr={"R": 1}),
        ],
    }
    # A cancelled running task wanted as a dependency (resumed) finishes: no fetch,
    # the dependent runs.
    SCENARIOS[f"workerstate_executing_skips_fetch_on_success-{_f}"] = {
        "config": RUNNING_CONFIG,
        "events": running_task(_f) + [
            free(["x"], "s1"),
            compute("y", "s2", who_has={"x": [WS2]}),
            success("x", "s3", v=123),
        ],
    }

for _kind in DONE_KINDS:
    for _release_dep in (False, True):
        # An executing task with a dependency in memory is cancelled (and maybe the
        # dependency freed too) before the execution ends in one of three ways.
        _events = [
            scatter({"x": 1}, "s1"),
            compute("y", "s2", who_has={"x": ["127.0.0.1:1"]}),
            free(["y"], "s3"),
        ]
        if _release_dep:
            _events.append(free(["x"], "s4"))
        _events.append(done(_kind, "y", "s5"))
        SCENARIOS[f"cancel_with_dependencies_in_memory-{_kind}-{_release_dep}"] = _events

for _kind in DONE_KINDS:
    for _to_exec in (False, True):
        for _to_fetch in (False, True):
            # A cancelled (or resumed-to-fetch) task secedes; maybe asked to compute
            # again; then its execution ends in one of three ways.
            _events = [compute("x", "s1"), free(["x"], "s2")]
            if _to_fetch:
                _events.append(compute("y", "s3", who_has={"x": [WS2]}))
            _events.append(secede("x", "s4", compute_duration=1))
            if _to_exec:
                _events += [free(["y"], "s5"), compute("x", "s6")]
            _events.append(done(_kind, "x", "s7"))
            _name = f"secede_cancelled_or_resumed_workerstate-{_kind}-{_to_exec}-{_to_fetch}"
            SCENARIOS[_name] = _events


# ---------------------------------------------------------------------------------------
# "After" streams of cluster tests: what one worker of the test plausibly receives.

A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"
CLUSTER = {
    "transfer_incoming_count_limit": 50,
    "transfer_incoming_bytes_limit": 2527651020,
    "transfer_message_bytes_limit": 50_000_000,
}
P1 = (0, 1, 0)
P2 = (0, 2, 0)


def on(address, nthreads=1):
    return {**CLUSTER, "address": address, "nthreads": nthreads}


def ok(key, sid, run_id, v=2):
    return success(key, sid, run_id=run_id, v=v, nbytes=28, type_="int")


def err(key, sid, run_id):
    return failure(key, sid, run_id=run_id, exception_text="RuntimeError()")


# After test_abort_execution_reschedule: cancelled while executing, submitted again (back
# to executing), the old run's result is refused by the scheduler, which recomputes.
SCENARIOS["after-abort_execution_reschedule"] = {
    "config": on(A),
    "events": [
        compute("lock_inc-1", "compute-task-1", run_id=11, prio=P1),
        free(["lock_inc-1"], "client-releases-keys-2"),
        compute("lock_inc-1", "compute-task-3", run_id=12, prio=P2),
        ok("lock_inc-1", "task-finished-4", 11),
        free(["lock_inc-1"], "task-finished-4"),
        compute("lock_inc-1", "compute-task-5", run_id=13, prio=P2),
        ok("lock_inc-1", "task-finished-6", 13),
        free(["lock_inc-1"], "client-releases-keys-7"),
        pause("worker-status-change-8"),
    ],
}

# After test_abort_execution_to_fetch (worker a): f1 cancelled while executing, then
# needed as a dependency held by b (resumed); its own execution ends and feeds f2.
SCENARIOS["after-abort_execution_to_fetch"] = {
    "config": on(A),
    "events": [
        compute("f1", "compute-task-1", run_id=21, prio=P1),
        free(["f1"], "client-releases-keys-2"),
        compute("f2", "compute-task-3", run_id=23, prio=P2, who_has={"f1": [B]},
                nbytes={"f1": 28}),
        ok("f1", "task-finished-4", 21, v=123),
        ok("f2", "task-finished-5", 23, v=124),
        free(["f1"], "task-finished-5"),
        free(["f2"], "client-releases-keys-6"),
        pause("worker-status-change-7"),
    ],
}

# After test_executing_cancelled_error: one thread; f1 executing, f2 queued; f1
# cancelled then fails, which frees the thread for f2.
SCENARIOS["after-executing_cancelled_error"] = {
    "config": on(A),
    "events": [
        compute("f1", "compute-task-1", run_id=31, prio=P1),
        compute("f2", "compute-task-2", run_id=32, prio=P1),
        free(["f1"], "client-releases-keys-3"),
        err("f1", "task-erred-4", 31),
        ok("f2", "task-finished-5", 32),
        free(["f2"], "client-releases-keys-6"),
        pause("worker-status-change-7"),
    ],
}

# After test_cancelled_error (worker b, two threads): cancelled while executing, then
# the execution fails: the key goes through error and is forgotten.
SCENARIOS["after-cancelled_error"] = {
    "config": on(B, nthreads=2),
    "events": [
        compute("fut1", "compute-task-1", run_id=41, prio=P1),
        free(["fut1"], "client-releases-keys-2"),
        err("fut1", "task-erred-3", 41),
        pause("worker-status-change-4"),
    ],
}

# After test_in_flight_lost_after_resumed (worker b): fut1 in flight from a; a is removed
# so fut2 is freed and fut1 is recomputed here (resumed); the client then releases
# everything (cancelled); the transfer finally delivers fut1, which is forgotten.
SCENARIOS["after-in_flight_lost_after_resumed"] = {
    "config": on(B),
    "events": [
        compute("fut2", "compute-task-1", run_id=51, prio=P1, who_has={"fut1": [A]},
                nbytes={"fut1": 28}),
        free(["fut2"], "remove-worker-2"),
        compute("fut1", "remove-worker-2", run_id=52, prio=P1),
        free(["fut1"], "client-releases-keys-3"),
        gather_success(A, {"fut1": value(1)}, "gather-dep-success-4", total_nbytes=28),
        pause("worker-status-change-5"),
    ],
}

# After test_flight_to_executing_via_cancelled_resumed (worker b): fut1 in flight from a;
# a is removed, fut2 freed, fut1 recomputed here (resumed); the transfer breaks, so fut1
# is executed after all, then fut2.
SCENARIOS["after-flight_to_executing_via_cancelled_resumed"] = {
    "config": on(B),
    "events": [
        compute("fut2", "compute-task-1", run_id=61, prio=P1, who_has={"fut1": [A]},
                nbytes={"fut1": 28}),
        free(["fut2"], "test"),
        compute("fut1", "test", run_id=62, prio=P1),
        gather_network_failure(A, "gather-dep-network-failure-3", total_nbytes=28),
        ok("fut1", "task-finished-4", 62),
        compute("fut2", "compute-task-5", run_id=63, prio=P1, who_has={"fut1": [B]},
                nbytes={"fut1": 28}),
        ok("fut2", "task-finished-6", 63, v=3),
        free(["fut2"], "client-releases-keys-7"),
        free(["fut1"], "client-releases-keys-7"),
        pause("worker-status-change-8"),
    ],
}
