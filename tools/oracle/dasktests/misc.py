"""Streams after the bare-WorkerState tests scattered through dask/distributed's suite.

They follow these files of `distributed/tests/`: `test_reschedule.py`, `test_resources.py`,
`test_steal.py`, `test_worker_memory.py` and `test_utils_test.py` (the tests there that
drive a WorkerState on its own, through the `ws` or `ws_with_running_task` fixtures, minus
those already published as vectors). `test_worker.py` and `test_scheduler.py` have no such
test. Scenario names are `<file stem>-<test name>[-params]`.

Then a few "after" streams (names starting with `after-`): the stimuli that some cluster tests
(`gen_cluster`) of `test_steal.py`, `test_worker.py` and `test_worker_memory.py` deliver to
one of their workers, written out by hand. They are not the tests themselves: run ids,
priorities, sizes and stimulus ids are made up, only the story is theirs.
"""
from __future__ import annotations

from events import (
    EXECUTE_DONE_KINDS as DONE_KINDS,
    RUNNING_FLAVOURS as FLAVOURS,
    RUNNING_TASK_CONFIG as RUNNING_CONFIG,
    execute_done as done,
    running_task,
    acquire_replicas,
    compute,
    find_missing,
    free,
    gather_network_failure,
    gather_success,
    pause,
    reschedule,
    steal,
    success,
    unpause,
)

WS2 = "127.0.0.1:2"
SELF = "127.0.0.1:1"  # the `ws` fixture's own address

def on_running(flavour, events, **spec):
    """A scenario that starts from `ws_with_running_task`."""
    return {"events": running_task(flavour) + events, "config": RUNNING_CONFIG, **spec}


# What storing a key raises when a test swaps the data store for one that always fails.
STORE_ERROR = {"exception_text": "CustomError()", "traceback_text": ""}

SCENARIOS: dict = {}

for fl in FLAVOURS:
    # test_utils_test.py: the fixture on its own.
    SCENARIOS[f"test_utils_test-ws_with_running_task-{fl}"] = on_running(fl, [])

    # test_reschedule.py: a running task asks to be rescheduled; its resource comes back.
    SCENARIOS[f"test_reschedule-reschedule_releases-{fl}"] = on_running(
        fl, [reschedule("x", "s1")]
    )
    # test_reschedule.py: the scheduler frees the running task, which then reschedules:
    # it is forgotten without telling the scheduler.
    SCENARIOS[f"test_reschedule-reschedule_cancelled-{fl}"] = on_running(
        fl, [free(["x"], "s1"), reschedule("x", "s2")]
    )

    # test_steal.py: a cancelled task finishes; nothing is stored nor reported.
    SCENARIOS[f"test_steal-steal_worker_state-{fl}"] = on_running(
        fl, [free(["x"], "s1"), success("x", "s2")]
    )

    # test_worker_memory.py: the result of the running task cannot be stored: it errs.
    SCENARIOS[f"test_worker_memory-workerstate_fail_to_pickle_execute_1-{fl}"] = on_running(
        fl,
        [success("x", "s1")],
        data_store_errors={len(running_task(fl)): [{"key": "x", **STORE_ERROR}]},
    )

    for kind in DONE_KINDS:
        # test_resources.py: executing -> cancelled -> released gives the resource back
        # only when the execution ends.
        SCENARIOS[f"test_resources-cancelled_with_resources-{fl}-{kind}"] = on_running(
            fl, [free(["x"], "s1"), done(kind, "x", "s2")]
        )
        # test_resources.py: cancelled, then resumed towards fetch by a new dependent;
        # the resource is held until the execution ends.
        SCENARIOS[f"test_resources-resumed_with_resources-{fl}-{kind}"] = on_running(
            fl,
            [
                free(["x"], "s1"),
                compute("y", "s2", who_has={"x": [WS2]}),
                done(kind, "x", "s3"),
            ],
        )
        # test_resources.py: cancelled, then asked to compute again with other resource
        # restrictions; the resource held is the one taken at the start.
        SCENARIOS[f"test_resources-resumed_with_different_resources-{fl}-{kind}"] = (
            on_running(
                fl,
                [
                    free(["x"], "s1"),
                    compute("x", "s2", rr={"R": 0.4}),
                    done(kind, "x", "s3"),
                ],
            )
        )

# test_worker_memory.py: a fetched dependency cannot be stored: it errs and its dependent
# (which needs R) stays waiting. The test turns validation off only after its stimuli.
SCENARIOS["test_worker_memory-workerstate_fail_to_pickle_flight"] = {
    "events": [
        compute("y", "s1", who_has={"x": [WS2]}, rr={"R": 1}),
        gather_success(WS2, {"x": 123}, "s2", total_nbytes=1),
    ],
    "config": {"resources": {"R": 1}},
    "data_store_errors": {1: [{"key": "x", **STORE_ERROR}]},
}

# --- "after" streams of cluster tests -------------------------------------------------

A = "127.0.0.1:3"  # a peer worker holding the data

# After test_steal.py::test_dont_steal_already_released: the task is released while it
# runs, finishes and is forgotten; a steal request for it then finds nothing.
SCENARIOS["after-test_steal-dont_steal_already_released"] = [
    compute("slowinc-1", "compute"),
    free(["slowinc-1"], "release"),
    success("slowinc-1", "done", v=2),
    steal("slowinc-1", "steal"),
]

# After test_worker.py::test_acquire_replicas_already_in_flight: asking for a replica of a
# key already in flight changes nothing; the transfer then completes and y runs.
SCENARIOS["after-test_worker-acquire_replicas_already_in_flight"] = [
    compute("y", "compute-y", who_has={"x": [A]}, nbytes={"x": 28}),
    acquire_replicas({"x": [A]}, "acquire", nbytes={"x": 28}),
    gather_success(A, {"x": 2}, "gathered", total_nbytes=28),
    success("y", "done-y", v=3, nbytes=28),
]

# After test_worker.py::test_gather_dep_no_longer_in_flight_tasks: the only dependent of a
# key in flight is released; the key arrives cancelled and is forgotten.
SCENARIOS["after-test_worker-gather_dep_no_longer_in_flight_tasks"] = [
    compute("f2", "compute-f2", who_has={"f1": [A]}, nbytes={"f1": 28}),
    free(["f2"], "release-f2"),
    gather_success(A, {"f1": 2}, "gathered", total_nbytes=28),
]

# After test_worker.py::test_gather_dep_cancelled_rescheduled: of two keys fetched
# together, one loses its dependent (cancelled) and gains it back before the transfer
# ends; both land in memory and both dependents run.
SCENARIOS["after-test_worker-gather_dep_cancelled_rescheduled"] = {
    "events": [
        compute("f4", "compute-f4", who_has={"f1": [A], "f2": [A]}, prio=(0, 1, 3)),
        compute("f3", "compute-f3", who_has={"f1": [A]}, prio=(0, 1, 4)),
        free(["f4"], "release-f4"),
        compute("f4", "recompute-f4", who_has={"f1": [A], "f2": [A]}, prio=(0, 2, 0)),
        gather_success(A, {"f1": 2, "f2": 3}, "gathered", total_nbytes=2),
        success("f4", "done-f4", v=5, nbytes=28),
        success("f3", "done-f3", v=3, nbytes=28),
    ],
    "config": {"nthreads": 2},
}

# After test_worker.py::test_missing_released_zombie_tasks_2: the peer breaks the comm, the
# key goes missing, the worker asks who has it, then its dependent is released and the
# missing key is forgotten.
SCENARIOS["after-test_worker-missing_released_zombie_tasks_2"] = [
    compute("f2", "compute-f2", who_has={"f1": [A]}, nbytes={"f1": 28}),
    gather_network_failure(A, "comm-broken", total_nbytes=28),
    find_missing("find-missing"),
    free(["f2"], "release-f2"),
]

# After test_worker.py::test_forget_acquire_replicas: a replica is requested while fetching
# is frozen (no transfer slot, no throttle allowance; a pause and unpause restart it); the
# holder forgets it meanwhile, so the fetch comes back empty, the key goes missing, the
# worker asks who has it and the scheduler answers by freeing it.
SCENARIOS["after-test_worker-forget_acquire_replicas"] = {
    "events": [
        acquire_replicas({"x": [A]}, "acquire", nbytes={"x": 28}),
        pause("jump-start-1"),
        unpause("jump-start-2"),
        gather_success(A, {}, "gathered-nothing", total_nbytes=28),
        find_missing("find-missing"),
        free(["x"], "scheduler-forgot-x"),
    ],
    "config": {"transfer_incoming_count_limit": 10},
    "config_before": {
        0: {"transfer_incoming_count_limit": 0, "transfer_incoming_bytes_throttle_threshold": 0},
        1: {
            "transfer_incoming_count_limit": 10,
            "transfer_incoming_bytes_throttle_threshold": 10_000_000,
        },
    },
}

# After test_worker.py::test_forget_dependents_after_release: f-2 depends on f-1, which this
# worker computed (the scheduler names this worker as its holder); releasing f-2 leaves
# f-1 in memory without its dependent.
SCENARIOS["after-test_worker-forget_dependents_after_release"] = [
    compute("f-1", "compute-f-1", prio=(0, 1, 0)),
    success("f-1", "done-f-1", v=2, nbytes=28),
    compute("f-2", "compute-f-2", who_has={"f-1": [SELF]}, nbytes={"f-1": 28}, prio=(0, 1, 1)),
    success("f-2", "done-f-2", v=3, nbytes=28),
    free(["f-2"], "release-f-2"),
]

# After test_worker_memory.py::test_pause_prevents_deps_fetch: two dependents of keys on
# the same peer arrive together; the huge one is fetched alone, the worker pauses while it
# is in flight, so the other key waits in fetch until the worker resumes.
SCENARIOS["after-test_worker_memory-pause_prevents_deps_fetch"] = {
    "events": [
        compute("w", "compute-w", who_has={"x": [A]}, nbytes={"x": 2**40}, prio=(-1, 1, 0)),
        compute("z", "compute-z", who_has={"y": [A]}, nbytes={"y": 28}, prio=(0, 1, 1)),
        pause("paused-by-unpickle"),
        gather_success(A, {"x": None}, "gathered-x", total_nbytes=2**40),
        unpause("unpause"),
        gather_success(A, {"y": 2}, "gathered-y", total_nbytes=28),
        success("w", "done-w", nbytes=16),
        success("z", "done-z", v=3, nbytes=28),
    ],
    "config": {"transfer_incoming_count_limit": 10, "transfer_message_bytes_limit": 50_000_000},
}

# After test_resources.py::test_minimum_resource: four threads, but each task needs one of
# the single B, so the tasks run one at a time.
SCENARIOS["after-test_resources-minimum_resource"] = {
    "events": [
        compute(f"slowinc-{i}", f"compute-{i}", rr={"A": 1, "B": 1}, prio=(0, 1, i))
        for i in range(3)
    ]
    + [success(f"slowinc-{i}", f"done-{i}", v=i + 1, nbytes=28) for i in range(3)],
    "config": {"nthreads": 4, "resources": {"A": 2, "B": 1}},
}

# After test_resources.py::test_submit_many_non_overlapping_2: four threads and two A; the
# tasks that need one A each run two at a time, whatever order they finish in.
SCENARIOS["after-test_resources-submit_many_non_overlapping_2"] = {
    "events": [
        compute(f"slowinc-{i}", f"compute-{i}", rr={"A": 1}, prio=(0, 1, i)) for i in range(5)
    ]
    + [success(f"slowinc-{i}", f"done-{i}", v=i + 1, nbytes=28) for i in (1, 0, 3, 2, 4)],
    "config": {"nthreads": 4, "resources": {"A": 2}},
}
