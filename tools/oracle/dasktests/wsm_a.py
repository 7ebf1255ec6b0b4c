"""Streams after dask/distributed's `distributed/tests/test_worker_state_machine.py`,
the tests that start in the first part of that file.

Most tests there check events, instructions and TaskState on their own (no stream);
of those that drive a bare WorkerState, only one is not already published. The rest of
this part are cluster tests (`gen_cluster`): for those, "after" streams give, per worker,
the stimuli its state machine receives in the test's story, written out by hand. They
are not the tests themselves: addresses, run ids, priorities and timestamped stimulus
ids are made up; where the real order of two messages is a race, both orders are given.
"""
from __future__ import annotations

from events import (
    acquire_replicas,
    compute,
    find_missing,
    free,
    gather_busy,
    gather_success,
    pause,
    refresh_who_has,
    remove_worker,
    retry_busy_worker,
    scatter,
    success,
    value,
)

SCENARIOS: dict = {}

# test_WorkerState_pickle: a replica in flight next to a scattered key (the pickle
# round trip itself is out of reach of a trace).
SCENARIOS["WorkerState_pickle"] = [
    acquire_replicas({"x": ["127.0.0.1:1235"]}, "s1", nbytes={"x": 123}),
    scatter({"y": 123}, "s"),
]


# --- "after" streams of cluster tests -----------------------------------------------

# Worker addresses of a made-up cluster: gen_cluster's first, second and third worker.
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"
C = "tcp://127.0.0.1:40003"

# What a gen_cluster worker is built with (its memory-derived bytes limit made up).
CLUSTER = {
    "transfer_incoming_count_limit": 50,
    "transfer_incoming_bytes_limit": 2_500_000_000,
    "transfer_message_bytes_limit": 50_000_000,
    "transfer_incoming_bytes_throttle_threshold": 10_000_000,
}
# freeze_data_fetching: no new transfer may start; leaving it restores CLUSTER's values.
FROZEN = {"transfer_incoming_count_limit": 0, "transfer_incoming_bytes_throttle_threshold": 0}
THAWED = {
    "transfer_incoming_count_limit": 50,
    "transfer_incoming_bytes_throttle_threshold": 10_000_000,
}


def worker(address, nthreads, events, frozen=False, config_before=None):
    config = {**CLUSTER, "address": address, "nthreads": nthreads}
    if frozen:
        config.update(FROZEN)
    spec = {"events": events, "config": config}
    if config_before:
        spec["config_before"] = config_before
    return spec


def task(key, sid, run_id, generation, who_has=None, nbytes=None, workers=None):
    """A compute-task from the scheduler, as a client's submit produces it."""
    ann = {"workers": list(workers)} if workers else {}
    return compute(
        key,
        f"compute-task-{sid}",
        run_id=run_id,
        who_has=who_has,
        nbytes=nbytes,
        prio=(0, generation, 0),
        duration=0.5,
        annotations=ann,
    )


def done(key, sid, run_id, v):
    """The worker's executor finished the task with an int."""
    return success(
        key, f"task-finished-{sid}", run_id=run_id, v=value(v), nbytes=28, type_="int"
    )


def fetched(peer, sid, data, total_nbytes=None):
    """A peer answered get_data with these ints (maybe none of what was asked)."""
    return gather_success(
        peer,
        {k: value(v) for k, v in data.items()},
        f"gather-dep-success-{sid}",
        total_nbytes=28 * len(data) if total_nbytes is None else total_nbytes,
    )


def released(key, sid):
    return free([key], f"client-releases-keys-{sid}")


def closing(sid):
    return pause(f"worker-status-change-{sid}")


# test_fetch_to_compute, worker a: computes f1, then closes.
SCENARIOS["after-fetch_to_compute-a"] = worker(A, 1, [
    task("f1", "1.0", 1, 1, workers=[A]),
    done("f1", "1.1", 1, 2),
    closing("1.5"),
])

# test_fetch_to_compute, worker b: f1 waits in fetch (frozen) for f2; a leaves, f2 is
# freed (f1 with it), then b is asked to compute f1 itself and f2 again.
SCENARIOS["after-fetch_to_compute-b"] = worker(B, 2, [
    task("f2", "1.2", 2, 2, who_has={"f1": [A]}, nbytes={"f1": 28}, workers=[B]),
    free(["f2"], "handle-worker-cleanup-1.4"),
    task("f1", "1.41", 3, 1, workers=[A]),
    remove_worker(A, "handle-worker-cleanup-1.4"),
    done("f1", "1.6", 3, 2),
    task("f2", "1.7", 4, 2, who_has={"f1": [B]}, nbytes={"f1": 28}, workers=[B]),
    done("f2", "1.8", 4, 3),
    released("f1", "2.0"),
    released("f2", "2.01"),
    closing("2.1"),
], frozen=True, config_before={3: THAWED})

# test_fetch_via_amm_to_compute, worker b: a replica of f1 waits in fetch (frozen); its
# only holder a leaves and the scheduler has b compute f1 while it is still in fetch.
SCENARIOS["after-fetch_via_amm_to_compute-b"] = worker(B, 2, [
    acquire_replicas({"f1": [A]}, "test", nbytes={"f1": 28}),
    task("f1", "3.41", 6, 1, workers=[A]),
    remove_worker(A, "handle-worker-cleanup-3.4"),
    done("f1", "3.6", 6, 2),
    released("f1", "4.0"),
    closing("4.1"),
], frozen=True, config_before={3: THAWED})


def busy_round(peer, sid, keys, who_has):
    """The peer answers busy; the scheduler's answer to the refresh request."""
    return [
        gather_busy(peer, f"gather-dep-busy-{sid}", total_nbytes=28 * len(keys)),
        refresh_who_has(who_has, f"gather-dep-busy-{sid}"),
    ]


# test_fetch_to_missing_on_busy, worker a: the only holder b stays busy, then the
# scheduler drops b; a hears of it by remove-worker and x goes missing.
SCENARIOS["after-fetch_to_missing_on_busy-a-remove_worker"] = worker(A, 1, [
    acquire_replicas({"x": [B]}, "test", nbytes={"x": 28}),
    *busy_round(B, "5.1", ["x"], {"x": [B]}),
    retry_busy_worker(B, "retry-busy-worker-5.25"),
    *busy_round(B, "5.26", ["x"], {"x": [B]}),
    remove_worker(B, "handle-worker-cleanup-5.3"),
    retry_busy_worker(B, "retry-busy-worker-5.41"),
    closing("5.9"),
])

# The same, where the scheduler's answer to a refresh request, sent after it dropped b,
# lands before the remove-worker message: an empty who_has sends x to missing.
SCENARIOS["after-fetch_to_missing_on_busy-a-refresh"] = worker(A, 1, [
    acquire_replicas({"x": [B]}, "test", nbytes={"x": 28}),
    *busy_round(B, "5.1", ["x"], {"x": [B]}),
    retry_busy_worker(B, "retry-busy-worker-5.25"),
    gather_busy(B, "gather-dep-busy-5.26", total_nbytes=28),
    refresh_who_has({"x": []}, "gather-dep-busy-5.26"),
    remove_worker(B, "handle-worker-cleanup-5.3"),
    retry_busy_worker(B, "retry-busy-worker-5.41"),
    closing("5.9"),
])

# The remove-worker story, then the periodic find-missing asks again and hears x has
# no holder.
SCENARIOS["after-fetch_to_missing_on_busy-a-find_missing"] = worker(A, 1, [
    *SCENARIOS["after-fetch_to_missing_on_busy-a-remove_worker"]["events"][:-1],
    find_missing("find-missing-5.5"),
    refresh_who_has({"x": []}, "find-missing-5.5"),
    closing("5.9"),
])

# test_fetch_to_missing_on_busy, worker b: computes x; then it is cut off and closes.
SCENARIOS["after-fetch_to_missing_on_busy-b"] = worker(B, 1, [
    task("x", "5.0", 8, 1, workers=[B]),
    done("x", "5.01", 8, 2),
    closing("5.95"),
])

# test_cancelled_while_in_flight, worker a: y's dependency x is in flight when y is
# released (x cancelled); the transfer then lands and x is forgotten.
SCENARIOS["after-cancelled_while_in_flight-a"] = worker(A, 1, [
    task("y", "6.1", 11, 2, who_has={"x": [B]}, nbytes={"x": 28}, workers=[A]),
    released("y", "6.2"),
    fetched(B, "6.3", {"x": 2}),
    closing("6.9"),
])

# test_cancelled_while_in_flight, worker b: computes x, releases it at the end.
SCENARIOS["after-cancelled_while_in_flight-b"] = worker(B, 2, [
    task("x", "6.0", 10, 1, workers=[B]),
    done("x", "6.01", 10, 2),
    released("x", "6.8"),
    closing("6.91"),
])


def in_memory_while_in_flight(y_first):
    """Worker a: x in flight for y is scattered here directly; y runs; the stale
    transfer lands (before or after y's result)."""
    stale = fetched(B, "7.4", {"x": 2})
    y_done = done("y", "7.3", 13, 4)
    return worker(A, 1, [
        task("y", "7.1", 13, 2, who_has={"x": [B]}, nbytes={"x": 28}, workers=[A]),
        scatter({"x": 3}, "update-data-7.2"),
        *([y_done, stale] if y_first else [stale, y_done]),
        released("x", "7.8"),
        released("y", "7.81"),
        closing("7.9"),
    ])


# test_in_memory_while_in_flight, worker a, both orders of y's end and the stale transfer.
SCENARIOS["after-in_memory_while_in_flight-a-y_first"] = in_memory_while_in_flight(True)
SCENARIOS["after-in_memory_while_in_flight-a-gather_first"] = in_memory_while_in_flight(False)

# test_missing_handle_compute_dependency, worker w1: computes f1 and f2 on one thread.
SCENARIOS["after-missing_handle_compute_dependency-w1"] = worker(A, 1, [
    task("f1", "8.0", 20, 1, workers=[A]),
    task("f2", "8.01", 21, 2, workers=[A]),
    done("f1", "8.02", 20, 2),
    done("f2", "8.03", 21, 3),
    released("f1", "8.8"),
    released("f2", "8.81"),
    closing("8.9"),
])

# test_missing_handle_compute_dependency, worker w3: f1 asked from w2, which lacks it
# (missing); then f3 needs f1 and f2 from w1: missing f1 goes back to fetch.
SCENARIOS["after-missing_handle_compute_dependency-w3"] = worker(C, 1, [
    acquire_replicas({"f1": [B]}, "acquire", nbytes={"f1": 1}),
    fetched(B, "8.1", {}, total_nbytes=1),
    task(
        "f3", "8.2", 22, 3, who_has={"f1": [A], "f2": [A]}, nbytes={"f1": 28, "f2": 28},
        workers=[C],
    ),
    fetched(A, "8.3", {"f1": 2, "f2": 3}),
    done("f3", "8.4", 22, 5),
    released("f1", "8.8"),
    released("f2", "8.81"),
    released("f3", "8.82"),
    closing("8.91"),
])

# test_fetch_to_missing_on_refresh_who_has, worker w1: computes x and y.
SCENARIOS["after-fetch_to_missing_on_refresh_who_has-w1"] = worker(A, 1, [
    task("x", "9.0", 30, 1, workers=[A]),
    task("y", "9.01", 31, 2, workers=[A]),
    done("x", "9.02", 30, 2),
    done("y", "9.03", 31, 3),
    released("x", "9.8"),
    released("y", "9.81"),
    closing("9.9"),
])


def refresh_who_has_w3(echo):
    """Worker w3: x and y only on busy w1; a refresh says x is gone, y is now on w2,
    which turns out not to have it; w1's retry timer fires afterwards."""
    events = [
        acquire_replicas({"x": [A], "y": [A]}, "test1", nbytes={"x": 28, "y": 28}),
        gather_busy(A, "gather-dep-busy-9.1", total_nbytes=56),
    ]
    if echo:
        events.append(refresh_who_has({"x": [A], "y": [A]}, "gather-dep-busy-9.1"))
    return worker(C, 1, [
        *events,
        refresh_who_has({"x": [], "y": [B]}, "test2"),
        fetched(B, "9.3", {}, total_nbytes=28),
        retry_busy_worker(A, "retry-busy-worker-9.25"),
        closing("9.91"),
    ])


# test_fetch_to_missing_on_refresh_who_has, worker w3, with and without the scheduler's
# first refresh answer landing before the test's own.
SCENARIOS["after-fetch_to_missing_on_refresh_who_has-w3-echo"] = refresh_who_has_w3(True)
SCENARIOS["after-fetch_to_missing_on_refresh_who_has-w3"] = refresh_who_has_w3(False)

