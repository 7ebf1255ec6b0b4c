"""Streams after the tests of dask/distributed still without one in
`distributed/tests/test_worker_state_machine.py` (its remove-worker tests, which drive a
WorkerState on its own), `distributed/tests/test_resources.py`,
`distributed/tests/test_reschedule.py` and `distributed/tests/test_worker_memory.py`.

The bare-WorkerState streams feed exactly the test's events (the `ws` fixture). The
"after" streams are what one gen_cluster worker's state machine plausibly receives during
the test's story: addresses, run ids, timestamped stimulus ids and priorities are made
up but consistent; where messages race, the most likely order is written (and a variant
when the other order leads elsewhere). A worker ends with the PauseEvent of its closing.
"""
from __future__ import annotations

from events import (
    acquire_replicas,
    cluster_worker,
    compute,
    free,
    gather_busy,
    gather_network_failure,
    gather_success,
    pause,
    remove_worker,
    retry_busy_worker,
    success,
    unpause,
    value,
)

SCENARIOS: dict = {}

# Peers of the `ws` fixture's WorkerState (itself at 127.0.0.1:1).
WS2 = "127.0.0.1:2"
WS3 = "127.0.0.1:3"

# gen_cluster's first and second worker.
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"


# ---------------------------------------------------------------------------------------
# test_worker_state_machine.py: remove-worker of a peer (bare WorkerState)


def _x_in_flight_then_peer_removed():
    """y needs x, which is put in flight from ws2; then ws2 leaves the cluster."""
    return [
        compute("y", "s1", who_has={"x": [WS2]}),
        remove_worker(WS2, "s2"),
    ]


# The peer leaves while x is in flight from it; the transfer then fails on the network.
SCENARIOS["remove_worker_while_in_flight-fail"] = _x_in_flight_then_peer_removed() + [
    gather_network_failure(WS2, "s3"),
]

# The peer leaves while x is in flight; the transfer still succeeds, y runs.
SCENARIOS["remove_worker_while_in_flight-success"] = _x_in_flight_then_peer_removed() + [
    gather_success(WS2, {"x": None}, "s3"),
]

# The peer leaves while x is in flight; it answers without x, so x goes missing.
SCENARIOS["remove_worker_while_in_flight-no-key"] = _x_in_flight_then_peer_removed() + [
    gather_success(WS2, {}, "s3"),
]

# The peer leaves while x is in flight; it answers busy, then the retry finds no holder.
SCENARIOS["remove_worker_while_in_flight-busy"] = _x_in_flight_then_peer_removed() + [
    gather_busy(WS2, "s3"),
    retry_busy_worker(WS2, "s4"),
]

# y comes from ws3 because ws2 is busy with x; removing ws2 leaves y's transfer alone.
SCENARIOS["remove_worker_while_in_flight_unused_peer"] = [
    acquire_replicas({"x": [WS2]}, "s1"),
    acquire_replicas({"y": [WS2, WS3]}, "s2"),
    remove_worker(WS2, "s3"),
]

# Tasks waiting in fetch lose a holder: w (held only by ws2) goes missing, z keeps ws3.
SCENARIOS["remove_worker_while_in_fetch"] = [
    acquire_replicas({"x": [WS2], "y": [WS3]}, "s1"),
    acquire_replicas({"w": [WS2], "z": [WS2, WS3]}, "s2"),
    remove_worker(WS2, "s3"),
]

# Removing a peer the worker never heard of changes nothing.
SCENARIOS["remove_worker_unknown"] = [remove_worker(WS2, "s3")]


# ---------------------------------------------------------------------------------------
# Helpers for the "after" streams of cluster tests


def worker(address, nthreads, events, resources=None):
    return cluster_worker(address, nthreads, events, resources=dict(resources or {}))


def task(key, t, run_id, prio, who_has=None, rr=None, workers=None):
    """A compute-task from the scheduler; every dependency is a 28-byte int."""
    who_has = who_has or {}
    annotations = {}
    if rr:
        annotations["resources"] = dict(rr)
    if workers:
        annotations["workers"] = list(workers)
    return compute(
        key,
        f"compute-task-{t}",
        run_id=run_id,
        who_has=who_has,
        nbytes={k: 28 for k in who_has},
        prio=prio,
        duration=0.5,
        rr=rr,
        annotations=annotations,
    )


def finished(key, t, run_id, v=None):
    """The thread pool finished the task: an int (28 bytes) or None (16 bytes)."""
    val = value(v)
    return success(
        key,
        f"task-finished-{t}",
        run_id=run_id,
        v=val,
        nbytes=val["sizeof"],
        type_=val["typename"],
        start=t - 0.1,
        stop=t,
    )


def client_releases(key, t):
    return free([key], f"client-releases-keys-{t}")


def status_change(t, paused=True):
    return (pause if paused else unpause)(f"worker-status-change-{t}")


# ---------------------------------------------------------------------------------------
# test_resources.py::test_persist (NO_AMM): x needs A (only on a), y = inc(x) needs B
# (only on b). Worker b fetches x from a, runs y with its B, then the client lets go of
# the persisted x and y. Each key is released separately; the order is not pinned.


def _persist_b(y_first):
    prio_x, prio_y = (0, 1, 0), (0, 1, 1)
    events = [
        task("y", 10.0, 2, prio_y, who_has={"x": [A]}, rr={"B": 1}),
        gather_success(A, {"x": value(2)}, "gather-dep-success-10.1", total_nbytes=28),
        finished("y", 10.2, 2, 3),
    ]
    releases = [client_releases("x", 10.3), client_releases("y", 10.4)]
    if y_first:
        releases.reverse()
    return worker(B, 1, events + releases + [status_change(10.5)], resources={"B": 1})


# After test_persist, worker b: a constrained task behind a fetch; x freed before y, so x
# is released while its in-memory dependent lives on, and forgotten with it.
SCENARIOS["after-test_resources-persist-b"] = _persist_b(False)

# After test_persist, worker b, with the client's release of y landing before that of x.
SCENARIOS["after-test_resources-persist-b-y_first"] = _persist_b(True)


# ---------------------------------------------------------------------------------------
# test_worker_memory.py::test_pause_while_saturated: three tasks blocked on an Event are
# pinned to a (one thread): one runs, two wait in ready. The memory monitor pauses a and
# then lets it run again; nothing starts in between, since the thread is still busy.
# Setting the Event lets the three finish in turn; then the client lets go of them.


def _pause_while_saturated_a():
    keys = [f"lambda-{i}" for i in range(3)]
    events = [
        task(k, 20.0 + i / 100, 10 + i, (0, 1, i), workers=[A]) for i, k in enumerate(keys)
    ]
    events += [status_change(20.1), status_change(20.2, paused=False)]
    events += [finished(k, 20.3 + i / 100, 10 + i) for i, k in enumerate(keys)]
    events += [client_releases(k, 20.4 + i / 100) for i, k in enumerate(keys)]
    return worker(A, 1, events + [status_change(20.5)])


# After test_pause_while_saturated, worker a: pause and unpause with a busy thread and a
# ready queue.
SCENARIOS["after-test_worker_memory-pause_while_saturated-a"] = _pause_while_saturated_a()


# ---------------------------------------------------------------------------------------
# test_reschedule.py::test_scheduler_reschedule (no stealing, no queuing; two workers of
# one thread). The 100 xs are split in two runs of 50 consecutive tasks; a gets the first
# 50 and starts them; x-0 is done by the time the 100 ys, pinned to a, arrive. The test
# then reschedules the xs still processing on a: each is a free-keys "test" (x-1 is
# running, so it gets cancelled; the others are queued) and they all move to b. The test
# ends as soon as b has them, before x-1's run is over: the client lets go of x-0 and
# of every y (each separately), then x-1's run ends and a closes.


def _scheduler_reschedule_a():
    xs = [f"x-{i}" for i in range(50)]
    ys = [f"y-{i}" for i in range(100)]
    run = {k: 100 + i for i, k in enumerate(xs)}
    run.update({k: 200 + i for i, k in enumerate(ys)})
    events = [task(k, 30.0, run[k], (0, 1, i)) for i, k in enumerate(xs)]
    events.append(finished("x-0", 30.1, run["x-0"], 1))
    events += [task(k, 30.2, run[k], (0, 2, i)) for i, k in enumerate(ys)]
    events += [free([k], "test") for k in xs[1:]]
    events.append(client_releases("x-0", 30.3))
    events += [client_releases(k, 30.4 + i / 1000) for i, k in enumerate(ys)]
    events.append(finished("x-1", 30.6, run["x-1"], 2))
    events.append(status_change(30.7))
    return worker(A, 1, events)


# After test_scheduler_reschedule, worker a: a long ready queue emptied key by key by the
# scheduler and then the client, while the running task is cancelled and ends later.
SCENARIOS["after-test_reschedule-scheduler_reschedule-a"] = _scheduler_reschedule_a()
