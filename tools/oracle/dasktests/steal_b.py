""""After" streams of dask/distributed's `distributed/tests/test_steal.py`, second part.

The tests of that file that are neither published as vectors nor followed by `steal.py` or
`misc.py`, and whose workers' stimuli can be inferred: each stream is what one worker's state
machine receives during the test's story (compute-task, steal-request, transfers answered by
a peer, executions finishing, free-keys, the worker closing). They are not the tests
themselves: run ids, priorities, task tokens, sizes and timestamped stimulus ids are made up;
where messages race, the likelier order is given.
"""
from __future__ import annotations

import hashlib

from dasktests.steal import (
    NONE,
    addr,
    W1,
    W2,
    closing,
    done,
    fetched,
    obj,
    on,
    put,
    releases,
    task,
    worker,
)
from events import free, steal, value

SCENARIOS: dict = {}


def token(*parts):
    """A made-up 32-hex-digit token, as dask appends to task names."""
    return hashlib.md5("-".join(map(str, parts)).encode()).hexdigest()


# ---------------------------------------------------------------------------------------
# dont_steal_fast_tasks_blocklist, a: 50 blocklisted tasks pile up on one dependency held
# by a peer whose get_data is blocked (the transfer is in flight all along); once the peer
# answers they run one by one on a's single thread. Nothing is stolen.
def _blocklist_a():
    keys = [f"split-shuffle-{token('blocklist', i)}" for i in range(50)]
    ann = on([W1], allow_other_workers=True)
    ev = [
        task(k, f"1.{i:03d}", 100 + i, (0, 2, i), who_has={"x": [W2]}, nbytes={"x": 28},
             ann=ann)
        for i, k in enumerate(keys)
    ]
    ev.append(fetched(W2, "2.000", {"x": value(2)}))
    # The arrival readies the dependents one at a time (the last-recommended first), and
    # the first made ready takes the free thread: here the last one; then priority order.
    order = [49, *range(49)]
    ev += [done(keys[i], f"3.{n:03d}", 100 + i, NONE) for n, i in enumerate(order)]
    ev += releases(["x", *reversed(keys)], "4.00")
    ev.append(closing("4.10"))
    return worker(1, 1, ev)


SCENARIOS["after-dont_steal_fast_tasks_blocklist-a"] = _blocklist_a()


# ---------------------------------------------------------------------------------------
# cleanup_repeated_tasks (10 objects, not 50; 5 threads per worker).
FOO = obj("distributed.tests.test_steal.Foo", 48)
N_FOO = 10
FOOS = [f"Foo-{token('foo', i)}" for i in range(N_FOO)]
IDS = [f"slowidentity-{token('id', i)}" for i in range(N_FOO)]
IDS_ANN = on([W1], allow_other_workers=True)
STOLEN = [9, 8, 7]


def _ident(i, t, run_id):
    """The slowidentity task on object i, as the scheduler sends it (the object is on a)."""
    return task(IDS[i], t, run_id, (0, 12, i), who_has={FOOS[i]: [W1]},
                nbytes={FOOS[i]: 48}, ann=IDS_ANN, duration=0.1)


def _cleanup_a():
    # The objects are made on a, five at a time; each identity task follows its object.
    ev = [task(k, f"1.{i:02d}", 200 + i, (0, 2 + i, 0), ann=on([W1]), duration=0.5)
          for i, k in enumerate(FOOS)]
    ev += [done(FOOS[i], f"2.{i:02d}", 200 + i, FOO) for i in range(5)]
    ev += [_ident(i, f"2.1{i}", 300 + i) for i in range(5)]
    for i in range(5, N_FOO):
        ev.append(done(FOOS[i], f"2.2{i}", 200 + i, FOO))
        ev.append(_ident(i, f"2.3{i}", 300 + i))
    # Identity tasks 0-4 run, 5-9 wait: the three last are stolen; one asked for is running.
    ev += [steal(IDS[i], f"steal-{n}") for n, i in enumerate(STOLEN)]
    ev.append(steal(IDS[4], "steal-3"))
    # Each finished identity task lets its object go (the client dropped the objects).
    for i in range(5):
        ev.append(done(IDS[i], f"3.{i:02d}", 300 + i, FOO))
        ev.append(free([FOOS[i]], f"task-finished-3.{i:02d}"))
    # b finished the stolen ones after fetching their objects from here.
    ev += [free([FOOS[i]], f"task-finished-3.5{i}") for i in STOLEN]
    for i in (5, 6):
        ev.append(done(IDS[i], f"3.6{i}", 300 + i, FOO))
        ev.append(free([FOOS[i]], f"task-finished-3.6{i}"))
    ev += releases([IDS[i] for i in reversed(range(7))], "4.00")
    ev.append(closing("4.10"))
    return worker(1, 5, ev)


def _cleanup_b():
    ev = [
        task("slowidentity-warmup", "0.50", 190, (0, 1, 0), duration=0.5),
        done("slowidentity-warmup", "0.60", 190, value(-1)),
        *releases(["slowidentity-warmup"], "0.70"),
    ]
    # Three stolen tasks arrive one after the other; the first starts the transfer from a,
    # the next two wait for a to be free, then come in one message.
    ev += [_ident(i, f"3.1{n}", 400 + n) for n, i in enumerate(STOLEN)]
    ev.append(fetched(W1, "3.20", {FOOS[9]: FOO}))
    ev.append(fetched(W1, "3.30", {FOOS[8]: FOO, FOOS[7]: FOO}))
    for n, i in enumerate(STOLEN):
        ev.append(done(IDS[i], f"3.5{i}", 400 + n, FOO))
        ev.append(free([FOOS[i]], f"task-finished-3.5{i}"))
    ev += releases([IDS[i] for i in STOLEN], "4.00")
    ev.append(closing("4.10"))
    return worker(2, 5, ev)


# a: objects and their identity tasks; three queued ones stolen, a running one kept; the
# objects freed as their dependents finish.
SCENARIOS["after-cleanup_repeated_tasks-a"] = _cleanup_a()
# b: stolen tasks fetch their objects from a (one transfer, then two keys in one), the
# fetched replicas are freed as each task finishes.
SCENARIOS["after-cleanup_repeated_tasks-b"] = _cleanup_b()


# ---------------------------------------------------------------------------------------
# balance_multiple_to_replica (workers in the given order): a 600 MB dependency on w0 and
# w1, eight tasks on w0; stealing moves two of them to w1, which has the replica.
DEP_A = "dep-a"
A_VALUE = obj("distributed.utils_test.SizeOf", 600_000_000)
A_WHO_HAS = {DEP_A: [W2, W1]}
A_NBYTES = {DEP_A: 600_000_000}
TASKS_A = [f"task-a-{i}" for i in range(8)]
MOVED = [2, 3]


def _task_a(i, t, run_id):
    ann = on([W1], allow_other_workers=True)
    if i:
        ann = {"priority": -i, **ann}
    return task(TASKS_A[i], t, run_id, (i, 1, 0), who_has=A_WHO_HAS, nbytes=A_NBYTES,
                ann=ann, duration=1)


def _multiple_to_replica_w0():
    kept = [i for i in range(8) if i not in MOVED]
    ev = [put({DEP_A: A_VALUE}, "1.00")]
    ev += [_task_a(i, f"1.1{i}", 500 + i) for i in range(8)]
    ev += [steal(TASKS_A[i], f"steal-{n}") for n, i in enumerate(MOVED)]
    ev += [done(TASKS_A[i], f"2.{i:02d}", 500 + i, NONE) for i in kept]
    ev += releases([DEP_A, *(TASKS_A[i] for i in reversed(kept))], "3.00")
    ev.append(closing("3.10"))
    return worker(1, 1, ev)


def _multiple_to_replica_w1():
    ev = [put({DEP_A: A_VALUE}, "1.01")]
    ev += [_task_a(i, f"1.5{n}", 510 + n) for n, i in enumerate(MOVED)]
    ev += [done(TASKS_A[i], f"2.1{n}", 510 + n, NONE) for n, i in enumerate(MOVED)]
    ev += releases([DEP_A, *(TASKS_A[i] for i in reversed(MOVED))], "3.00")
    ev.append(closing("3.10"))
    return worker(2, 1, ev)


# w0: two queued tasks on the local replica given up, the other six run.
SCENARIOS["after-balance_multiple_to_replica-w0"] = _multiple_to_replica_w0()
# w1: the two stolen tasks find their dependency already here (scattered) and run.
SCENARIOS["after-balance_multiple_to_replica-w1"] = _multiple_to_replica_w1()


# ---------------------------------------------------------------------------------------
# dont_steal_resource_restrictions, a (resources A=2, one thread): the first slowinc shares
# its key with one of the 100 restricted ones, so 99 arrive; one runs, the rest wait on the
# thread; nothing is stolen; the client lets go of all while one runs, then a closes.
def _dont_steal_rr_a():
    keys = [f"slowinc-{token('rr', i)}" for i in range(100)]
    rr = {"A": 1}
    ev = [
        task(keys[1], "1.00", 600, (0, 1, 0), ann=on([W1]), duration=0.5),
        done(keys[1], "1.10", 600, value(2)),
    ]
    ev += [
        task(k, f"1.2{i:02d}", 601 + i, (0, 2, i), ann={"resources": rr}, rr=rr,
             duration=0.1)
        for i, k in enumerate(keys) if i != 1
    ]
    ev.append(done(keys[0], "1.50", 601, value(1)))
    ev += releases(reversed(keys), "2.00")
    ev.append(closing("2.10"))
    return worker(1, 1, ev, resources={"A": 2})


SCENARIOS["after-dont_steal_resource_restrictions-a"] = _dont_steal_rr_a()


# ---------------------------------------------------------------------------------------
# test_balance, other parametrizations than `steal.py`'s. The test submits, per worker, its
# tasks (costliest first; key "<cost>-<i>", priority -i, home worker open to others); a task
# of cost t > 0 depends on t * 100 MB scattered to its worker just before. Stealing moves
# some queued tasks; then the event releases the blocked tasks. The scattered data is only
# held by the task needing it (the client drops each future as the next one comes), so it
# is freed once that task is done: on its worker, and on the thief that fetched it. The
# last one scattered stays with the client until the end.
SIZEOF = "distributed.utils_test.SizeOf"


def balance_streams(name, inp, moves):
    """The streams of every worker that sees something; `moves` maps a task index to the
    index of the worker it is stolen by."""
    n = len(inp)
    tasks = []  # (index, cost, home worker index, dependency or None)
    for w, costs in enumerate(inp):
        for t in sorted(costs, reverse=True):
            i = len(tasks)
            dep = f"SizeOf-{token('balance', name, i)}" if t else None
            tasks.append((i, t, w, dep))
    last_dep = [dep for *_, dep in tasks if dep][-1:]
    ev = {w: [] for w in range(n)}
    runs = {}  # task index -> run id of its compute where it runs

    def key(i):
        return f"{int(tasks[i][1])}-{i}"

    def compute_on(i, t, run_id, dep_holder):
        _, cost, w, dep = tasks[i]
        ann = on([addr(w + 1)], allow_other_workers=True)
        if i:
            ann = {"priority": -i, **ann}
        nbytes = int(cost * 100_000_000)
        return task(
            key(i), t, run_id, (i, i + 1, 0),
            who_has={dep: [addr(dep_holder + 1)]} if dep else None,
            nbytes={dep: nbytes} if dep else None, ann=ann, duration=1,
        )

    for i, cost, w, dep in tasks:
        if dep:
            ev[w].append(put({dep: obj(SIZEOF, int(cost * 100_000_000))}, f"1.{i:02d}"))
        ev[w].append(compute_on(i, f"1.{i:02d}5", 900 + i, w))
        runs[i] = 900 + i
    for n_steal, i in enumerate(moves):
        ev[tasks[i][2]].append(steal(key(i), f"steal-{n_steal}"))
    for n_steal, (i, thief) in enumerate(moves.items()):
        _, cost, w, dep = tasks[i]
        ev[thief].append(compute_on(i, f"2.{n_steal:02d}", 950 + n_steal, w))
        runs[i] = 950 + n_steal
        if dep:
            ev[thief].append(
                fetched(addr(w + 1), f"2.{n_steal:02d}5",
                        {dep: obj(SIZEOF, int(cost * 100_000_000))})
            )
    # The event is set: each worker runs what it holds, by priority.
    for i, cost, w, dep in tasks:
        where = moves.get(i, w)
        t = f"3.{i:02d}"
        ev[where].append(done(key(i), t, runs[i], NONE))
        if dep and dep not in last_dep:
            holders = {w, where}
            for h in sorted(holders):
                ev[h].append(free([dep], f"task-finished-{t}"))
    # Teardown: the client lets go of the futures (last first) and of the last data.
    for i in reversed(range(len(tasks))):
        ev[moves.get(i, tasks[i][2])] += releases([key(i)], f"4.{i:02d}")
    for i, cost, w, dep in tasks:
        if dep in last_dep:
            for h in sorted({w, moves.get(i, w)}):
                ev[h] += releases([dep], "4.50")
    return {
        w: worker(w + 1, 1, [*evs, closing("4.90")]) for w, evs in ev.items() if evs
    }


BALANCE_CASES = {
    # A queued task without data moves to the idle worker.
    "balance": ([[0, 0], []], {1: 1}),
    # The larger of two busy workers gives one task to the idle third.
    "move_from_larger": ([[0, 0], [0, 0, 0], []], {4: 2}),
    # Two idle workers take one task each from the same victim.
    "spread_evenly": ([[0, 0, 0, 0], [], []], {2: 1, 3: 2}),
    # A task on 100 MB moves anyway; the thief fetches the data from the victim.
    "be_willing_to_move_costly_items": ([[1, 1, 1], []], {2: 1}),
    # Two saturated workers; the busier one gives away three tasks, each with its data.
    "balance_multiple_saturated_workers": (
        [[4, 2, 2, 2, 2, 1, 1], [4, 2, 1, 1], [], [], []],
        {4: 2, 5: 3, 6: 4},
    ),
}

for _case, (_inp, _moves) in BALANCE_CASES.items():
    for _w, _spec in balance_streams(_case, _inp, _moves).items():
        SCENARIOS[f"after-balance-{_case}-w{_w}"] = _spec
