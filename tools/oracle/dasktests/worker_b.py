"""Streams "after" the cluster tests in the second half of dask/distributed's
`distributed/tests/test_worker.py` (the 2022-23 version stored in the search index, from
`test_heartbeat_missing_restarts` on).

Every test there runs real workers (`gen_cluster`); none drives a bare WorkerState. For the
tests not already published as vectors whose workers do something worth checking, each
stream gives the stimuli one worker's state machine receives during the test's story,
written out by hand: compute-task / free-keys / acquire-replicas / remove-replicas from the
scheduler, answers of peers to gather_dep, and what the worker's own thread pool reports.
They are not the tests themselves: addresses, run ids, priorities, sizes and timestamped
stimulus ids are made up and only kept consistent; where two messages race, the order
judged most likely is written, plus a variant where the other one leads elsewhere.
Names are `after-<test>[-<worker>][-<variant>]`.
"""
from __future__ import annotations

from events import (
    acquire_replicas,
    cluster_worker as worker,
    compute,
    failure,
    free,
    gather_success,
    pause,
    remove_replicas,
    success,
    value,
)

# The workers of a made-up cluster: gen_cluster's first to fourth worker.
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"
C = "tcp://127.0.0.1:40003"
D = "tcp://127.0.0.1:40004"


def task(key, t, run_id, prio, deps=None, nbytes=None, workers=None, **annotations):
    """A compute-task as the scheduler sends it for a client's submit; `deps` maps each
    dependency to the workers holding it (28 bytes each unless `nbytes` says otherwise)."""
    deps = deps or {}
    if workers:
        annotations = {"workers": list(workers), **annotations}
    return compute(
        key,
        f"compute-task-{t}",
        run_id=run_id,
        who_has=deps,
        nbytes={k: 28 for k in deps} if nbytes is None else nbytes,
        prio=prio,
        duration=0.5,
        annotations=annotations,
    )


def ok(key, t, run_id, v, typename=None, sizeof=None):
    """The thread pool finished the task; ints are 28 bytes."""
    val = value(v, typename=typename, sizeof=sizeof)
    return success(
        key,
        f"task-finished-{t}",
        run_id=run_id,
        v=val,
        nbytes=val["sizeof"],
        start=t,
        stop=t + 0.001,
        type_=val["typename"],
    )


def erred(key, t, run_id, exception_text):
    return failure(
        key,
        f"task-erred-{t}",
        run_id=run_id,
        exception_text=exception_text,
        traceback_text="  File \"test_worker.py\", line 1, in raise_exc\n",
        start=t,
        stop=t + 0.001,
    )


def fetched(peer, t, data, sizeof=28):
    """A peer answered get_data with these values (ints unless `sizeof` says otherwise)."""
    vals = {
        k: v if isinstance(v, dict) else value(v, sizeof=sizeof) for k, v in data.items()
    }
    return gather_success(
        peer, vals, f"gather-dep-success-{t}", total_nbytes=sum(v["sizeof"] for v in vals.values())
    )


def released(keys, t):
    """The client released its futures: one free-keys per key."""
    return [free([k], f"client-releases-keys-{t + i / 1000}") for i, k in enumerate(keys)]


def client_gone(keys, t):
    """The test's client closes: the scheduler frees all its keys in one go."""
    return [free([k], f"remove-client-{t}") for k in keys]


def closing(t):
    return pause(f"worker-status-change-{t}")


SCENARIOS: dict = {}

# --- test_stimulus_story -------------------------------------------------------------
# One thread, three submits in a row: f and f1 queue up and run in turn; f2 needs f1,
# held locally, and fails; the closing client frees f1 before its erred dependent.
SCENARIOS["after-stimulus_story"] = worker(A, 1, [
    task("f", 1.0, 1, (0, 1, 0)),
    task("f1", 1.001, 2, (0, 1, 0)),
    ok("f", 1.01, 1, 2),
    ok("f1", 1.02, 2, "foo", sizeof=52),
    task("f2", 1.03, 3, (0, 1, 0), deps={"f1": [A]}, nbytes={"f1": 52}),
    erred("f2", 1.04, 3, "TypeError('can only concatenate str (not \"int\") to str')"),
    *client_gone(["f", "f1", "f2"], 1.1),
    closing(1.2),
])

# --- test_worker_descopes_data -------------------------------------------------------
# f1 (an object) feeds f2, which fails; f1's release leaves it waiting on its erred
# dependent, f2's release then empties the worker.
SCENARIOS["after-worker_descopes_data"] = worker(A, 1, [
    task("f1", 2.0, 4, (0, 1, 0)),
    ok("f1", 2.01, 4, "<C>", typename="C", sizeof=48),
    task("f2", 2.02, 5, (0, 1, 0), deps={"f1": [A]}, nbytes={"f1": 48}),
    erred("f2", 2.03, 5, "Exception('<C>', '<C>')"),
    *released(["f1"], 2.1),
    *released(["f2"], 2.2),
    closing(2.3),
])

# --- test_gather_dep_local_workers_first ---------------------------------------------
# f is on one peer of the same host (listed last) and ten peers of another host: the
# fetch goes to the local peer, then g runs; the closing client frees g and f.
REMOTES = [f"tcp://127.0.0.2:{41000 + i}" for i in range(10)]
SCENARIOS["after-gather_dep_local_workers_first-a"] = worker(A, 1, [
    task("g", 3.0, 6, (0, 2, 0), deps={"f": [*REMOTES, B]}, workers=[A]),
    fetched(B, 3.01, {"f": 1}),
    ok("g", 3.02, 6, 2),
    *client_gone(["g", "f"], 3.1),
    closing(3.2),
])

# --- test_worker_state_error_release_error_first -------------------------------------
# Worker a: f local, g fetched from b, res fails; res is freed first (f and g stay in
# memory), then f and g.
SCENARIOS["after-worker_state_error_release_error_first-a"] = worker(A, 1, [
    task("f", 4.0, 7, (0, 1, 0), workers=[A]),
    ok("f", 4.01, 7, 2),
    task("res", 4.02, 9, (0, 1, 0), deps={"g": [B], "f": [A]}, workers=[A]),
    fetched(B, 4.03, {"g": 2}),
    erred("res", 4.04, 9, "RuntimeError()"),
    *released(["res"], 4.1),
    *released(["f", "g"], 4.2),
    closing(4.3),
])

# --- test_worker_state_error_long_chain ----------------------------------------------
# f (a) and h (a, from g on b) feed res on b, which fails; f, g, h, res are then freed
# one by one, each release reaching every worker that holds a replica.
LONG_CHAIN = {"allow_other_workers": False}
SCENARIOS["after-worker_state_error_long_chain-a"] = worker(A, 1, [
    task("f", 5.0, 10, (0, 1, 0), workers=[A], **LONG_CHAIN),
    ok("f", 5.01, 10, 2),
    task("h", 5.02, 12, (0, 3, 0), deps={"g": [B]}, workers=[A], **LONG_CHAIN),
    fetched(B, 5.03, {"g": 2}),
    ok("h", 5.04, 12, 3),
    *released(["f"], 5.1),
    *released(["g"], 5.2),
    *released(["h"], 5.3),
    closing(5.5),
])
# Worker b: g local, then res needs f and h from a (one transfer) and fails; f, g and h
# are released (f and h stay as released dependencies of the erred res), then res.
SCENARIOS["after-worker_state_error_long_chain-b"] = worker(B, 2, [
    task("g", 5.0, 11, (0, 2, 0), workers=[B], **LONG_CHAIN),
    ok("g", 5.01, 11, 2),
    task("res", 5.05, 13, (0, 4, 0), deps={"f": [A], "h": [A]}, workers=[B], **LONG_CHAIN),
    fetched(A, 5.06, {"f": 2, "h": 3}),
    erred("res", 5.07, 13, "RuntimeError()"),
    *released(["f"], 5.1),
    *released(["g"], 5.2),
    *released(["h"], 5.3),
    *released(["res"], 5.4),
    closing(5.5),
])

# --- test_hold_on_to_replicas --------------------------------------------------------
# Third worker: sum fetches f1 and f2 from two peers at once and runs; f2 is dropped as
# soon as sum is done, f1 only once sum_2 (elsewhere) has its copy and is done.
SCENARIOS["after-hold_on_to_replicas-w2"] = worker(C, 3, [
    task("sum", 6.0, 16, (0, 3, 0), deps={"f1": [A], "f2": [B]}, workers=[C]),
    fetched(A, 6.01, {"f1": 2}),
    fetched(B, 6.011, {"f2": 3}),
    ok("sum", 6.12, 16, 5),
    free(["f2"], "task-finished-6.12"),
    free(["f1"], "task-finished-6.33"),
    *client_gone(["sum"], 6.5),
    closing(6.6),
])
# Fourth worker: sum_2 needs f1 (on the first and third worker) and sum (third worker):
# both come from the third worker in one transfer; f1 is then freed, sum and sum_2 last.
SCENARIOS["after-hold_on_to_replicas-w3"] = worker(D, 4, [
    task("sum_2", 6.121, 17, (0, 4, 0), deps={"f1": [A, C], "sum": [C]}, workers=[D]),
    fetched(C, 6.13, {"f1": 2, "sum": 5}),
    ok("sum_2", 6.33, 17, 7),
    free(["f1"], "task-finished-6.33"),
    *client_gone(["sum", "sum_2"], 6.5),
    closing(6.6),
])

# --- test_acquire_replicas -----------------------------------------------------------
# The scheduler asks b for a replica of a's key; the replica is fetched, then freed with
# the future.
SCENARIOS["after-acquire_replicas-b"] = worker(B, 2, [
    acquire_replicas({"inc-1": [A]}, "test-7.01", nbytes={"inc-1": 28}),
    fetched(A, 7.02, {"inc-1": 2}),
    *released(["inc-1"], 7.1),
    closing(7.2),
])

# --- test_acquire_replicas_same_channel ----------------------------------------------
# Worker b: a replica of f-A and the dependency f-B of f-C come from the same peer in two
# separate transfers. Here the replica has landed before f-C arrives.
SAME_CHANNEL_END = [*client_gone(["f-A", "f-B", "f-C"], 8.5), closing(8.6)]
SCENARIOS["after-acquire_replicas_same_channel-b"] = worker(B, 2, [
    acquire_replicas({"f-A": [A]}, "test-8.01", nbytes={"f-A": 28}),
    fetched(A, 8.02, {"f-A": 2}),
    task("f-C", 8.03, 20, (0, 1, 0), deps={"f-B": [A]}, workers=[B]),
    fetched(A, 8.04, {"f-B": 3}),
    ok("f-C", 8.05, 20, 4),
    *SAME_CHANNEL_END,
])
# Same, but f-C arrives while the replica is in flight: f-B waits in fetch for the peer
# to be free again, and goes in a transfer of its own.
SCENARIOS["after-acquire_replicas_same_channel-b-overlap"] = worker(B, 2, [
    acquire_replicas({"f-A": [A]}, "test-8.01", nbytes={"f-A": 28}),
    task("f-C", 8.015, 20, (0, 1, 0), deps={"f-B": [A]}, workers=[B]),
    fetched(A, 8.02, {"f-A": 2}),
    fetched(A, 8.04, {"f-B": 3}),
    ok("f-C", 8.05, 20, 4),
    *SAME_CHANNEL_END,
])

# --- test_acquire_replicas_many ------------------------------------------------------
# Third worker: replicas of ten keys of the first worker, fetched in one transfer, then
# freed one by one when the test drops its futures.
INCS = [f"inc-{i}" for i in range(10)]
SCENARIOS["after-acquire_replicas_many-w3"] = worker(C, 1, [
    acquire_replicas({k: [A] for k in INCS}, "test-9.01", nbytes={k: 28 for k in INCS}),
    fetched(A, 9.02, {k: i + 1 for i, k in enumerate(INCS)}),
    *released(INCS, 9.6),
    closing(9.7),
])

# Same, if the second worker had already fetched the ten keys for its sum when the
# request was made: two equal peers, one chosen by the seeded tie-breaker.
SCENARIOS["after-acquire_replicas_many-w3-two_holders"] = worker(C, 1, [
    acquire_replicas({k: [A, B] for k in INCS}, "test-9.01", nbytes={k: 28 for k in INCS}),
    fetched(B, 9.02, {k: i + 1 for i, k in enumerate(INCS)}),
    *released(INCS, 9.6),
    closing(9.7),
])
# Second worker: sum needs the ten keys (one transfer), then slowinc needs sum, held
# locally; the test then drops the ten keys (kept as released dependencies of sum), sum
# and the final result.
SCENARIOS["after-acquire_replicas_many-w2"] = worker(B, 1, [
    task("sum", 9.0, 40, (0, 2, 0), deps={k: [A] for k in INCS}, workers=[B]),
    fetched(A, 9.005, {k: i + 1 for i, k in enumerate(INCS)}),
    ok("sum", 9.01, 40, 55),
    task("slowinc", 9.011, 41, (0, 3, 0), deps={"sum": [B]}, workers=[B]),
    ok("slowinc", 9.52, 41, 56),
    *released([*INCS, "sum", "slowinc"], 9.6),
    closing(9.7),
])

# --- test_acquire_replicas_large_data ------------------------------------------------
# Ten replicas of ~10 MB each from one peer: the message size limit lets five go per
# transfer, so they come in two rounds (the reference asks for the last five first); the
# closing client frees them all.
BIG = 50_000_000 // 5 - 10_000
XS = [f"x{i}" for i in range(10)]


def big(_key):
    return value("<C>", typename="C", sizeof=BIG)


SCENARIOS["after-acquire_replicas_large_data-b"] = worker(B, 2, [
    acquire_replicas({k: [A] for k in XS}, "test", nbytes={k: BIG for k in XS}),
    fetched(A, 10.01, {k: big(k) for k in XS[5:]}),
    fetched(A, 10.02, {k: big(k) for k in XS[:5]}),
    *client_gone(XS, 10.1),
    closing(10.2),
])

# --- test_remove_replicas_while_computing --------------------------------------------
# Worker b (6 threads) runs some_slow on each of ten keys of a; those with an odd input
# block until the test sets an event. The replicas whose dependents are done are dropped
# on request (kept as released dependencies); after the event, the other five too; then
# everything is freed. (The stored test, older than 2023.7, asks for all ten at once and
# expects the worker to refuse five with add-keys; the reference raises RuntimeError for
# a replica whose dependent is executing, so only droppable keys are asked for here.)
SLOW = [f"some_slow-{i}" for i in range(10)]


def slow_task(i, t):
    return task(SLOW[i], t, 30 + i, (0, 2, i), deps={INCS[i]: [A]}, workers=[B])


SCENARIOS["after-remove_replicas_while_computing-b"] = worker(B, 6, [
    slow_task(0, 11.0),
    *[slow_task(i, 11.001 + i / 1000) for i in range(1, 10)],
    fetched(A, 11.02, {INCS[0]: 1}),
    fetched(A, 11.03, {k: i + 1 for i, k in enumerate(INCS) if i}),
    # The transfer lands last key first, so some_slow-5..9 take the free threads before
    # 1..4; the non-blocking ones finish and hand their thread on in priority order.
    *[ok(SLOW[i], 11.04 + i / 1000, 30 + i, i + 2) for i in (5, 7, 9, 1, 3)],
    remove_replicas([INCS[i] for i in (1, 3, 5, 7, 9)], "test-11.1"),
    *[ok(SLOW[i], 11.2 + i / 1000, 30 + i, i + 2) for i in (0, 2, 4, 6, 8)],
    remove_replicas([INCS[i] for i in (0, 2, 4, 6, 8)], "test-11.3"),
    *released(SLOW[::-1], 11.4),
    closing(11.5),
])
