""""After" streams of dask/distributed's `distributed/tests/test_steal.py` (work stealing).

The tests there are cluster tests (`gen_cluster`, real workers); most of them are already
published as vectors, and the one that drives a bare WorkerState (`test_steal_worker_state`)
and `test_dont_steal_already_released` are in `misc.py`. For the others, each stream here
is what one worker's state machine receives during the test's story, written out by hand:
compute-task, steal-request (the victim answers with the task's state and lets go of it if
it had not started), free-keys, the executions finishing, the transfers of dependencies and
the worker closing. They are not the tests themselves: run ids, priorities, sizes, keys and
timestamped stimulus ids are made up; where two messages race, the likelier order is given
and, when the other one leads elsewhere, a second variant.
"""
from __future__ import annotations

from events import (
    cluster_worker,
    compute,
    free,
    gather_success,
    pause,
    remove_worker,
    scatter,
    steal,
    success,
    value,
)

SCENARIOS: dict = {}


def addr(n):
    """The address of the test's n-th worker (1-based)."""
    return f"tcp://127.0.0.1:4000{n}"


W1, W2, W3 = addr(1), addr(2), addr(3)

# A worker the test starts itself (`Worker(s.address, ...)`), not through gen_cluster.
OWN_WORKER = {"transfer_incoming_bytes_limit": 1_263_825_510, "transition_counter_max": False}


def worker(n, nthreads, events, **config):
    return cluster_worker(addr(n), nthreads, events, **config)


def task(key, t, run_id, prio, who_has=None, nbytes=None, ann=None, rr=None, duration=0.5):
    """A compute-task from the scheduler."""
    return compute(
        key,
        f"compute-task-{t}",
        run_id=run_id,
        who_has=who_has,
        nbytes=nbytes,
        prio=prio,
        duration=duration,
        rr=rr,
        annotations=ann or {},
    )


def obj(typename, sizeof):
    """A value JSON cannot hold, known by its type name and size."""
    return {"typename": typename, "sizeof": sizeof, "repr": f"<{typename}>"}


NONE = value(None)
TRUE = value(True)


def done(key, t, run_id, v):
    """The executor finished the task with value `v` (a `value(...)`/`obj(...)` dict)."""
    type_ = None if v["typename"] == "NoneType" else v["typename"]
    return success(
        key, f"task-finished-{t}", run_id=run_id, v=v, nbytes=v["sizeof"], type_=type_
    )


def fetched(peer, t, data):
    """A peer answered get_data with these values."""
    return gather_success(
        peer,
        data,
        f"gather-dep-success-{t}",
        total_nbytes=sum(v["sizeof"] for v in data.values()),
    )


def put(data, t):
    """The client scattered these values here."""
    return scatter(data, f"update-data-{t}")


def releases(keys, t):
    """The client lets go of these keys one by one (the scheduler frees each separately)."""
    return [free([k], f"client-releases-keys-{t}.{i:02d}") for i, k in enumerate(keys)]


def closing(t):
    return pause(f"worker-status-change-{t}")


def on(workers, **extra):
    """Annotations of a task submitted with `workers=`."""
    return {"workers": list(workers), **extra}


# ---------------------------------------------------------------------------------------
# dont_steal_executing_tasks_2: a steal request finds the task running; then freed, closes.
SCENARIOS["after-dont_steal_executing_tasks_2-a"] = worker(1, 1, [
    task("slowinc-1", "1.00", 11, (0, 1, 0), ann=on([W1])),
    steal("slowinc-1", "steal-0"),
    *releases(["slowinc-1"], "1.20"),
    closing("1.30"),
])


# ---------------------------------------------------------------------------------------
# steal_concurrent_simple: two steal requests for one queued task; the second finds none.
def _concurrent_simple():
    keys = [f"f1-{i}" for i in range(10)]
    ev = [task(k, f"1.{i:02d}", 100 + i, (0, 1, i), ann=on([W1])) for i, k in enumerate(keys)]
    for i in range(3):
        ev.append(done(keys[i], f"2.{i:02d}", 100 + i, value(i + 1)))
    ev += [steal("f1-9", "steal-0"), steal("f1-9", "steal-1")]
    for i in range(3, 9):
        ev.append(done(keys[i], f"3.{i:02d}", 100 + i, value(i + 1)))
    ev += releases(reversed(keys[:9]), "4.00")
    ev.append(closing("4.10"))
    return worker(1, 1, ev)


SCENARIOS["after-steal_concurrent_simple-w0"] = _concurrent_simple()


# ---------------------------------------------------------------------------------------
# reschedule_concurrent_requests_deadlock: running task asked for, then freed; queue drains.
def _reschedule_deadlock_w0():
    keys = [f"f1-{i}" for i in range(10)]
    ann = on([W1], allow_other_workers=True)
    ev = [task(k, f"1.{i:02d}", 200 + i, (0, 1, i), ann=ann) for i, k in enumerate(keys)]
    ev += [steal("f1-0", "steal-0"), free(["f1-0"], "test")]
    for i, k in enumerate(keys):
        ev.append(done(k, f"3.{i:02d}", 200 + i, TRUE))
    ev += releases(reversed(keys[1:]), "4.00")
    ev.append(closing("4.10"))
    return worker(1, 1, ev)


SCENARIOS["after-reschedule_concurrent_requests_deadlock-w0"] = _reschedule_deadlock_w0()

# Same test, the worker the task is rescheduled to: a steal request finds it running.
SCENARIOS["after-reschedule_concurrent_requests_deadlock-w1"] = worker(2, 1, [
    compute(
        "f1-0", "test", run_id=210, prio=(0, 1, 0), duration=0.5,
        annotations=on([W1], allow_other_workers=True),
    ),
    steal("f1-0", "steal-1"),
    done("f1-0", "3.05", 210, TRUE),
    *releases(["f1-0"], "4.00"),
    closing("4.10"),
])


# ---------------------------------------------------------------------------------------
# steal_worker_dies_same_ip: task given up, thief replaced; stale free-keys, then recomputed.
def _dies_same_ip():
    keys = [f"f1-{i}" for i in range(10)]
    ann = on([W1], allow_other_workers=True)
    ev = [task(k, f"1.{i:02d}", 300 + i, (0, 1, i), ann=ann) for i, k in enumerate(keys)]
    ev += [
        steal("f1-9", "steal-0"),
        remove_worker(W2, "handle-worker-cleanup-2.00"),
        free(["f1-9"], "steal-0"),
        compute("f1-9", "steal-0", run_id=310, prio=(0, 1, 9), duration=0.5, annotations=ann),
        remove_worker(W2, "handle-worker-cleanup-3.00"),
    ]
    for i, k in enumerate(keys):
        ev.append(done(k, f"4.{i:02d}", 310 if k == "f1-9" else 300 + i, TRUE))
    ev += releases(reversed(keys), "5.00")
    ev.append(closing("5.10"))
    return worker(1, 1, ev)


SCENARIOS["after-steal_worker_dies_same_ip-w0"] = _dies_same_ip()


# ---------------------------------------------------------------------------------------
# balance_with_longer_task, a: queued z (on local scattered x) given up behind a long task.
X = "array-x"
X_VALUE = obj("numpy.ndarray", 80112)
Z_ANN = on([W1], allow_other_workers=True)

SCENARIOS["after-balance_with_longer_task-a"] = worker(1, 1, [
    task("slowinc-0", "1.00", 400, (0, 1, 0)),
    done("slowinc-0", "1.01", 400, value(1)),
    *releases(["slowinc-0"], "1.02"),
    put({X: X_VALUE}, "1.10"),
    task("slowinc-y", "1.20", 401, (-1, 2, 0), ann=on([W1], priority=1)),
    task("slowadd-z", "1.21", 402, (0, 3, 0), who_has={X: [W1]}, nbytes={X: 80112}, ann=Z_ANN),
    steal("slowadd-z", "steal-0"),
    *releases([X, "slowinc-y"], "3.00"),
    closing("3.10"),
])


def _longer_task_b(z_after_learning):
    w = task(
        "slowadd-w", "1.22", 403, (0, 4, 0), who_has={X: [W1]}, nbytes={X: 80112},
        ann=on([W2]),
    )
    z = task(
        "slowadd-z", "2.00", 404, (0, 3, 0),
        who_has={X: [W1, W2] if z_after_learning else [W1]}, nbytes={X: 80112}, ann=Z_ANN,
    )
    ev = [w]
    if z_after_learning:
        ev += [
            fetched(W1, "1.30", {X: X_VALUE}),
            done("slowadd-w", "1.40", 403, X_VALUE),
            z,
            done("slowadd-z", "2.10", 404, X_VALUE),
        ]
    else:
        ev += [
            z,
            fetched(W1, "1.30", {X: X_VALUE}),
            done("slowadd-w", "1.40", 403, X_VALUE),
            done("slowadd-z", "2.10", 404, X_VALUE),
        ]
    ev += releases(["slowadd-z", "slowadd-w", X], "3.00")
    ev.append(closing("3.10"))
    return worker(2, 2, ev)


# b: z stolen after b fetched x and ran a task on it: z starts at once.
SCENARIOS["after-balance_with_longer_task-b-learned"] = _longer_task_b(True)
# b: z stolen while x is still in flight: both wait, then run on b's two threads.
SCENARIOS["after-balance_with_longer_task-b-x_in_flight"] = _longer_task_b(False)


# ---------------------------------------------------------------------------------------
# steal_stimulus_id_unique (12 tasks, not 1000): every task asked for, then all cancelled.
N_BLOCKED = 12
BLOCKED = [f"blocked-{i}" for i in range(N_BLOCKED)]

SCENARIOS["after-steal_stimulus_id_unique-a"] = worker(1, 1, [
    *[task(k, f"1.{i:02d}", 500 + i, (0, 1, i), ann=on([W1])) for i, k in enumerate(BLOCKED)],
    *[steal(k, f"steal-{i}") for i, k in enumerate(BLOCKED)],
    free([BLOCKED[0]], "cancel-3.00"),
    closing("4.00"),
])

SCENARIOS["after-steal_stimulus_id_unique-b"] = worker(2, 2, [
    *[
        task(k, f"2.{i:02d}", 600 + i, (0, 1, i), ann=on([W1]))
        for i, k in enumerate(BLOCKED) if i
    ],
    *[free([k], f"cancel-3.{i:02d}") for i, k in enumerate(BLOCKED) if i],
    closing("4.00"),
])


# ---------------------------------------------------------------------------------------
# test_balance (recompute_saturation does not change what the workers see).
def sized(nbytes):
    return obj("distributed.utils_test.SizeOf", nbytes)


def balance_task(key, i, t, run_id, who_has, nbytes, home):
    ann = on([home], allow_other_workers=True)
    if i:
        ann = {"priority": -i, **ann}
    return task(key, t, run_id, (i, 1, 0), who_has=who_has, nbytes=nbytes, ann=ann)


# "balance even if results in even", w0: a queued task on local 10 MB data is given up.
S0, S1 = "SizeOf-s0", "SizeOf-s1"
MB10 = 10_000_000
SCENARIOS["after-balance-even_if_results_in_even-w0"] = worker(1, 1, [
    put({S0: sized(MB10)}, "1.00"),
    balance_task("0-0", 0, "1.01", 700, {S0: [W1]}, {S0: MB10}, W1),
    put({S1: sized(MB10)}, "1.02"),
    balance_task("0-1", 1, "1.03", 701, {S1: [W1]}, {S1: MB10}, W1),
    steal("0-1", "steal-0"),
    done("0-0", "2.00", 700, NONE),
    *releases(["0-0", S0, S1], "3.00"),
    closing("3.10"),
])

# Same, w1: the stolen task fetches its 10 MB dependency from w0.
SCENARIOS["after-balance-even_if_results_in_even-w1"] = worker(2, 1, [
    balance_task("0-1", 1, "1.50", 702, {S1: [W1]}, {S1: MB10}, W1),
    fetched(W1, "1.60", {S1: sized(MB10)}),
    done("0-1", "2.01", 702, NONE),
    *releases(["0-1", S1], "3.00"),
    closing("3.10"),
])

# "move easier", w0: two data-free queued tasks given up; the ones with data stay.
S2, S3 = "SizeOf-s2", "SizeOf-s3"
SCENARIOS["after-balance-move_easier-w0"] = worker(1, 1, [
    put({S2: sized(200_000_000)}, "1.00"),
    balance_task("2-0", 0, "1.01", 710, {S2: [W1]}, {S2: 200_000_000}, W1),
    put({S3: sized(100_000_000)}, "1.02"),
    balance_task("1-1", 1, "1.03", 711, {S3: [W1]}, {S3: 100_000_000}, W1),
    balance_task("0-2", 2, "1.04", 712, {}, {}, W1),
    balance_task("0-3", 3, "1.05", 713, {}, {}, W1),
    steal("0-3", "steal-0"),
    steal("0-2", "steal-1"),
    done("2-0", "2.00", 710, NONE),
    done("1-1", "2.01", 711, NONE),
    *releases(["2-0", "1-1", S2, S3], "3.00"),
    closing("3.10"),
])


# ---------------------------------------------------------------------------------------
# _run_balance_test family (dependencies scattered by name, tasks named "<deps>-<i>").
MB100 = 100_000_000

# balance_when_moving_dependency, w0: three of seven queued tasks on local data given up.
WHEN_MOVING = [f"a-{i}" for i in range(7)]
SCENARIOS["after-balance_when_moving_dependency-w0"] = worker(1, 1, [
    put({"a": sized(MB100)}, "1.00"),
    *[
        balance_task(k, i, f"1.{i + 1:02d}", 720 + i, {"a": [W1]}, {"a": MB100}, W1)
        for i, k in enumerate(WHEN_MOVING)
    ],
    steal("a-6", "steal-0"),
    steal("a-5", "steal-1"),
    steal("a-4", "steal-2"),
    *[done(k, f"2.{i:02d}", 720 + i, NONE) for i, k in enumerate(WHEN_MOVING[:4])],
    *releases(WHEN_MOVING[:4] + ["a"], "3.00"),
    closing("3.10"),
])

# Same, w1: three stolen tasks share one dependency transfer, then run by priority.
SCENARIOS["after-balance_when_moving_dependency-w1"] = worker(2, 1, [
    balance_task("a-6", 6, "1.50", 730, {"a": [W1]}, {"a": MB100}, W1),
    balance_task("a-5", 5, "1.51", 731, {"a": [W1]}, {"a": MB100}, W1),
    balance_task("a-4", 4, "1.52", 732, {"a": [W1]}, {"a": MB100}, W1),
    fetched(W1, "1.60", {"a": sized(MB100)}),
    done("a-4", "2.10", 732, NONE),
    done("a-5", "2.11", 731, NONE),
    done("a-6", "2.12", 730, NONE),
    *releases(["a-4", "a-5", "a-6", "a"], "3.00"),
    closing("3.10"),
])

# balance_to_larger_dependency, w1: has a, fetches b (held by w0, w3; seeded pick: w3).
SCENARIOS["after-balance_to_larger_dependency-w1"] = worker(2, 1, [
    put({"a": sized(2 * MB100)}, "1.00"),
    balance_task(
        "ab-2", 2, "1.50", 740, {"a": [W1, W2], "b": [W1, W3]},
        {"a": 2 * MB100, "b": MB100}, W1,
    ),
    fetched(W3, "1.60", {"b": sized(MB100)}),
    done("ab-2", "2.00", 740, NONE),
    *releases(["ab-2", "a", "b"], "3.00"),
    closing("3.10"),
])


# ---------------------------------------------------------------------------------------
# steal_communication_heavy_tasks, a: nothing stolen; tasks freed with y in flight.
BIG = obj("bytes", 100_000_033)
HEAVY = [f"slowadd-{i}" for i in range(10)]
HEAVY_DEPS = {"mul-x": [W1], "mul-y": [W2]}
HEAVY_NBYTES = {"mul-x": 100_000_033, "mul-y": 100_000_033}
SCENARIOS["after-steal_communication_heavy_tasks-a"] = worker(1, 1, [
    task("mul-x", "1.00", 800, (0, 1, 0), ann=on([W1])),
    done("mul-x", "1.10", 800, BIG),
    *[
        task(
            k, f"1.2{i}", 802 + i, (0, 2, 0), who_has=HEAVY_DEPS, nbytes=HEAVY_NBYTES,
            ann=on([W1], allow_other_workers=True),
        )
        for i, k in enumerate(HEAVY)
    ],
    *releases(HEAVY + ["mul-x"], "2.00"),
    closing("2.10"),
])


# ---------------------------------------------------------------------------------------
# steal_resource_restrictions_asym_diff (12 tasks), a: constrained tasks given up, come back.
ASYM = [f"slowinc-{i}" for i in range(12)]
RR = {"A": 1}


def _asym_a():
    ev = [
        task("slowinc-first", "1.00", 900, (0, 1, 0), ann=on([W1])),
        done("slowinc-first", "1.10", 900, value(2)),
    ]
    ev += [
        task(k, f"1.2{i:02d}", 901 + i, (0, 2, i), ann={"resources": RR}, rr=RR)
        for i, k in enumerate(ASYM)
    ]
    ev.append(done(ASYM[0], "1.50", 901, value(1)))
    ev += [steal(k, f"steal-{i}") for i, k in enumerate(reversed(ASYM[6:]))]
    ev.append(done(ASYM[1], "1.70", 902, value(2)))
    ev.append(remove_worker(W2, "handle-worker-cleanup-2.00"))
    ev += [
        task(k, f"2.0{i}", 950 + i, (0, 2, 6 + i), ann={"resources": RR}, rr=RR)
        for i, k in enumerate(ASYM[6:])
    ]
    ev += releases(reversed(ASYM + ["slowinc-first"]), "3.00")
    ev.append(closing("3.10"))
    return worker(1, 1, ev, resources={"A": 2, "C": 1})


SCENARIOS["after-steal_resource_restrictions_asym_diff-a"] = _asym_a()

# Same, b (A=4, B=5, started by the test): stolen tasks arrive, b closes meanwhile.
SCENARIOS["after-steal_resource_restrictions_asym_diff-b"] = worker(2, 1, [
    *[
        task(k, f"1.6{i}", 940 + i, (0, 2, 11 - i), ann={"resources": RR}, rr=RR)
        for i, k in enumerate(reversed(ASYM[8:]))
    ],
    closing("1.90"),
    *[
        task(k, f"1.9{i}", 944 + i, (0, 2, 7 - i), ann={"resources": RR}, rr=RR)
        for i, k in enumerate(reversed(ASYM[6:8]))
    ],
], resources={"A": 4, "B": 5}, **OWN_WORKER)
