"""Streams after dask/distributed's `distributed/tests/test_worker.py`, the tests that start
in the first half of that file (up to test_heartbeat_missing_real_cluster).

Nearly all of these are cluster tests (`gen_cluster`, real workers). Those not already
published get "after" streams: per worker, the stimuli its state machine receives in the
test's story, written out by hand. They are not the tests themselves: keys are made-up
tokens, and times (in stimulus ids), run ids and priorities are invented but consistent.
Where the test leaves an order to chance (which worker gets an unrestricted task, which
of two messages lands first) the most likely order is written, and a variant where the
other order leads somewhere else.
"""
from __future__ import annotations

import hashlib

from events import (
    acquire_replicas,
    cluster_worker as worker,
    compute,
    failure,
    free,
    gather_success,
    pause,
    remove_replicas,
    remove_worker,
    scatter,
    success,
    value,
)

SCENARIOS: dict = {}

# gen_cluster's workers: the n-th one listens on port 4000n.
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"


def addr(n, host="127.0.0.1"):
    return f"tcp://{host}:{40000 + n}"


def tok(prefix, *args):
    """A key shaped like dask's `<prefix>-<token>`."""
    return f"{prefix}-{hashlib.md5(repr(args).encode()).hexdigest()}"


class Story:
    """Times and run ids for one test's story, shared by all its workers."""

    def __init__(self):
        self.t = 1_700_000_000.0
        self.run_id = 100

    def now(self):
        self.t += 0.0013
        return f"{self.t:.7f}"

    def task(self, key, prio=(0, 1, 0), who_has=None, nbytes=None, workers=None):
        """A compute-task from the scheduler (28 bytes per dependency unless given)."""
        self.run_id += 1
        who_has = who_has or {}
        return compute(
            key,
            f"compute-task-{self.now()}",
            run_id=self.run_id,
            who_has=who_has,
            nbytes=nbytes if nbytes is not None else {k: 28 for k in who_has},
            prio=prio,
            duration=0.5,
            annotations={"workers": list(workers)} if workers else None,
        )

    def done(self, ev, v, typename="int", sizeof=28):
        """The executor finished the task of compute event `ev`."""
        sid = f"task-finished-{self.now()}"
        return success(
            ev["key"],
            sid,
            run_id=ev["run_id"],
            v=value(v, typename, sizeof),
            nbytes=sizeof,
            type_=typename,
        )

    def erred(self, ev, exception_text, traceback_text):
        return failure(
            ev["key"],
            f"task-erred-{self.now()}",
            run_id=ev["run_id"],
            exception_text=exception_text,
            traceback_text=traceback_text,
        )

    def fetched(self, peer, data, sizeof=28):
        """A peer answered get_data with these values (all of one size)."""
        return gather_success(
            peer,
            {k: value(v, sizeof=sizeof) for k, v in data.items()},
            f"gather-dep-success-{self.now()}",
            total_nbytes=sizeof * len(data),
        )

    def scattered(self, data, sizeof=28):
        return scatter({k: value(v, sizeof=sizeof) for k, v in data.items()}, self.update_sid())

    def update_sid(self):
        return f"update-data-{self.now()}"

    def released(self, key, sid=None):
        return free([key], sid or f"client-releases-keys-{self.now()}")

    def closing(self):
        return pause(f"worker-status-change-{self.now()}")


def str_size(v):
    """sys.getsizeof of a short ASCII str."""
    return 49 + len(v)


def queued_burst(story, keys, prio, workers, initial, result, size):
    """Plays tasks spread over workers by the scheduler, some of them queued.

    workers: {address: (nthreads, slots)}; initial: {address: [keys]} in the order they
    are sent; the other keys wait in the scheduler's queue. A task arriving at a worker
    with a free thread starts at once; otherwise it waits in ready, where the worker
    takes the best priority and, among equals, the latest arrival. Workers take turns
    finishing their oldest running task, start their next ready one, and the freed slot
    is filled from the queue.
    """
    events = {w: [] for w in workers}
    running = {w: [] for w in workers}
    ready = {w: [] for w in workers}
    sent = {w: 0 for w in workers}
    computes = {}
    queue = [k for k in keys if all(k not in ks for ks in initial.values())]

    def send(w, k):
        computes[k] = story.task(k, prio=prio(k))
        events[w].append(computes[k])
        sent[w] += 1
        if len(running[w]) < workers[w][0]:
            running[w].append(k)
        else:
            ready[w].append((prio(k), -len(computes), k))

    for w, ks in initial.items():
        for k in ks:
            send(w, k)
    while any(running.values()):
        for w, (nthreads, slots) in workers.items():
            if not running[w]:
                continue
            k = running[w].pop(0)
            events[w].append(story.done(computes[k], result(k), *size(k)))
            sent[w] -= 1
            if ready[w]:
                ready[w].sort()
                running[w].append(ready[w].pop(0)[2])
            while queue and sent[w] < slots:
                send(w, queue.pop(0))
    return events


# --- test_chained_error_message / test_log_exception_on_failed_task ------------------


def erred_alone(address, nthreads, key, exception_text, traceback_text):
    s = Story()
    ev = s.task(key)
    return worker(address, nthreads, [
        ev,
        s.erred(ev, exception_text, traceback_text),
        s.released(key),
        s.closing(),
    ])


# test_chained_error_message: an unrestricted task raises (here on a); the client drops
# the erred future, which the worker forgets.
SCENARIOS["after-chained_error_message-a"] = erred_alone(
    A, 1, tok("chained_exception_fn"), "MyException('Foo')",
    '  File "test_worker.py", line 390, in chained_exception_fn\n    raise exception from e\n',
)

# test_log_exception_on_failed_task: the same on the two-thread worker b, for div(1, 0).
SCENARIOS["after-log_exception_on_failed_task-b"] = erred_alone(
    B, 2, tok("div", 1, 0), "ZeroDivisionError('division by zero')",
    '  File "utils_test.py", line 101, in div\n    return x / y\n',
)


# --- test_gather ---------------------------------------------------------------------


def gather(late_add_keys):
    s = Story()
    x, y = tok("str", "x"), tok("str", "y")
    b = [s.scattered({x: "x", y: "y"}, sizeof=50)]
    sid = s.update_sid()
    a = [scatter({x: value("x", sizeof=50), y: value("y", sizeof=50)}, sid)]
    b += [s.released(x), s.released(y)]
    if late_add_keys:
        # a's add-keys reaches the scheduler after it forgot both keys
        a.append(remove_replicas([x, y], sid))
    a.append(s.closing())
    b.append(s.closing())
    return {"a": worker(A, 1, a), "b": worker(B, 2, b)}


# test_gather, a: the gather RPC stores both keys; the client's release reaches only b.
SCENARIOS["after-gather-a"] = gather(False)["a"]
# test_gather, b: two keys scattered in one message, then released one by one.
SCENARIOS["after-gather-b"] = gather(False)["b"]
# test_gather, a, if its add-keys arrives once the keys are forgotten: the scheduler
# answers with remove-replicas, which drops both keys held in memory with no dependents.
SCENARIOS["after-gather-a-late_add_keys"] = gather(True)["a"]


# --- test_access_key -----------------------------------------------------------------


def access_key():
    s = Story()
    keys = [f"x-{i}" for i in range(20)]
    ev = queued_burst(
        s, keys, lambda k: (0, 1, 0), {A: (1, 2), B: (2, 3)},
        {A: ["x-0", "x-3", "x-4"], B: ["x-1", "x-2", "x-5"]},
        result=lambda k: k, size=lambda k: ("str", str_size(k)),
    )
    holder = {e["key"]: w for w in ev for e in ev[w] if e["cls"] == "ComputeTaskEvent"}
    for k in keys:
        ev[holder[k]].append(s.released(k))
    return {w: worker(w, n, ev[w] + [s.closing()]) for w, n in ((A, 1), (B, 2))}


# test_access_key, a: twenty submits of equal priority; a gets three at once (two wait
# in ready, newest first), the rest come from the scheduler's queue one by one.
SCENARIOS["after-access_key-a"] = access_key()[A]
# test_access_key, b: the same on two threads, three slots.
SCENARIOS["after-access_key-b"] = access_key()[B]


# --- test_statistical_profiling ------------------------------------------------------


def statistical_profiling():
    s = Story()
    keys = [tok("slowinc", i) for i in range(10)]
    ev = queued_burst(
        s, keys, lambda k: (0, 1, keys.index(k)), {A: (1, 2), B: (2, 3)},
        {A: [keys[0], keys[3]], B: [keys[1], keys[2], keys[4]]},
        result=lambda k: keys.index(k) + 1, size=lambda k: ("int", 28),
    )
    holder = {e["key"]: w for w in ev for e in ev[w] if e["cls"] == "ComputeTaskEvent"}
    for k in keys:
        ev[holder[k]].append(s.released(k))
    return {w: worker(w, n, ev[w] + [s.closing()]) for w, n in ((A, 1), (B, 2))}


# test_statistical_profiling, a: a map of ten root tasks, queued by the scheduler; a gets
# two at once, then one per freed slot, in priority order.
SCENARIOS["after-statistical_profiling-a"] = statistical_profiling()[A]
# test_statistical_profiling, b: the same on two threads and three slots.
SCENARIOS["after-statistical_profiling-b"] = statistical_profiling()[B]


# --- test_inter_worker_communication --------------------------------------------------


def inter_worker_communication():
    s = Story()
    x, y = tok("int", 1), tok("int", 2)
    z = tok("add", x, y)
    a = [s.scattered({x: 1, y: 2})]
    ev = s.task(z, who_has={x: [A], y: [A]}, workers=[B])
    b = [ev, s.fetched(A, {x: 1, y: 2}), s.done(ev, 3)]
    for k in (x, y):
        sid = f"client-releases-keys-{s.now()}"
        a.append(s.released(k, sid))
        b.append(s.released(k, sid))
    b.append(s.released(z))
    return {"a": worker(A, 1, a + [s.closing()]), "b": worker(B, 2, b + [s.closing()])}


# test_inter_worker_communication, a: two ints scattered together, later released.
SCENARIOS["after-inter_worker_communication-a"] = inter_worker_communication()["a"]
# test_inter_worker_communication, b: both dependencies come from a in one transfer; the
# client releases them before the result, so they stay released until it is forgotten.
SCENARIOS["after-inter_worker_communication-b"] = inter_worker_communication()["b"]


# --- test_message_breakup ------------------------------------------------------------

BREAKUP_LIMIT = 1_000_000


def bytes_size(i):
    return 33 + 100_000 * len(str(i))


def breakup_batches(sizes):
    """The keys b asks a for in each message: the first key of a message regardless
    of size, then more while the message stays within the limit. The dependencies share
    their dependent's priority; the reference queues them last key first."""
    batches, batch, total = [], [], 0
    for i in reversed(range(len(sizes))):
        n = sizes[i]
        if batch and total + n > BREAKUP_LIMIT:
            batches.append(batch)
            batch, total = [], 0
        batch.append(i)
        total += n
    return batches + [batch]


def message_breakup():
    s = Story()
    xs = [f"x{i}" for i in range(30)]
    sizes = [bytes_size(i) for i in range(30)]
    runs = [s.task(k, workers=[A]) for k in xs]
    # x0 starts on arrival; the others tie on priority and run latest arrival first
    a = runs + [s.done(runs[i], None, "bytes", sizes[i]) for i in [0, *range(29, 0, -1)]]
    ev = s.task("y", who_has={k: [A] for k in xs}, nbytes=dict(zip(xs, sizes)), workers=[B])
    b = [ev]
    for batch in breakup_batches(sizes):
        b.append(gather_success(
            A,
            {xs[i]: value(None, "bytes", sizes[i]) for i in batch},
            f"gather-dep-success-{s.now()}",
            total_nbytes=sum(sizes[i] for i in batch),
        ))
    b.append(s.done(ev, None, "NoneType", 16))
    for k in xs:
        sid = f"client-releases-keys-{s.now()}"
        a.append(s.released(k, sid))
        b.append(s.released(k, sid))
    b.append(s.released("y"))
    limit = {"transfer_message_bytes_limit": BREAKUP_LIMIT}
    return {
        "a": worker(A, 1, a + [s.closing()], **limit),
        "b": worker(B, 2, b + [s.closing()], **limit),
    }


# test_message_breakup, a: thirty equal-priority tasks arrive at once; on one thread the
# first starts, then the rest run newest first.
SCENARIOS["after-message_breakup-a"] = message_breakup()["a"]
# test_message_breakup, b: thirty dependencies on one peer, fetched in six messages
# capped by a 1 MB message limit (one transfer at a time from the same peer).
SCENARIOS["after-message_breakup-b"] = message_breakup()["b"]


# --- test_types / test_hold_onto_dependents --------------------------------------------


def types(amm):
    s = Story()
    x = tok("inc", 1)
    y = tok("inc", x)
    ex = s.task(x, workers=[A])
    a = [ex, s.done(ex, 2)]
    ey = s.task(y, who_has={x: [A]}, workers=[B])
    b = [ey, s.fetched(A, {x: 2}), s.done(ey, 3), s.released(y, f"cancel-key-{s.now()}")]
    if amm:
        # the memory manager finds two replicas of x and drops b's
        b.append(remove_replicas([x], f"active_memory_manager-{s.now()}"))
    sid = f"client-releases-keys-{s.now()}"
    a.append(s.released(x, sid))
    if not amm:
        b.append(s.released(x, sid))
    return {"a": worker(A, 1, a + [s.closing()]), "b": worker(B, 2, b + [s.closing()])}


# test_types, a: computes x (an int), later released.
SCENARIOS["after-types-a"] = types(False)["a"]
# test_types (and test_hold_onto_dependents), b: the cancelled dependent is forgotten,
# the fetched dependency stays in memory until the client releases it.
SCENARIOS["after-types-b"] = types(False)["b"]
# test_types, b, if the memory manager runs before the end: remove-replicas drops the
# replica once its only dependent is gone.
SCENARIOS["after-types-b-amm"] = types(True)["b"]


# --- test_gather_many_small ------------------------------------------------------------


def gather_many_small(as_deps):
    s = Story()
    senders = [addr(n) for n in range(2, 22)]
    xs = [f"x{i}" for i in range(100)]
    where = {k: senders[i % 20] for i, k in enumerate(xs)}
    if as_deps:
        ev = s.task("y", who_has={k: [where[k]] for k in xs}, workers=[A])
        events = [ev]
    else:
        events = [acquire_replicas({k: [where[k]] for k in xs}, "test", {k: 28 for k in xs})]
    for w in senders:
        events.append(s.fetched(w, {k: int(k[1:]) for k in xs if where[k] == w}))
    if as_deps:
        events.append(s.done(ev, None, "NoneType", 16))
    for k in xs:
        events.append(s.released(k))
    if as_deps:
        events.append(s.released("y"))
    return worker(A, 1, events + [s.closing()], transfer_incoming_count_limit=2)


# test_gather_many_small[as_deps=True], a: a hundred tiny dependencies on twenty peers;
# with two transfer slots but far below the throttling threshold, twenty transfers of
# five keys each start at once.
SCENARIOS["after-gather_many_small-True"] = gather_many_small(True)
# test_gather_many_small[as_deps=False], a: the same keys asked for as replicas.
SCENARIOS["after-gather_many_small-False"] = gather_many_small(False)


# --- test_priorities -----------------------------------------------------------------


# The order in which the worker of test_priorities sees its tasks arrive (C), finish (D)
# and get freed (F), from a small simulation: slowinc (a-*) takes 12 ms, the others half
# a millisecond, a message 3 ms each way; the scheduler queues the roots and keeps two
# of them on the worker.
PRIORITIES_ORDER = """
C:a-0 C:a-1 D:a-0 C:a1-0 C:b1-0 D:a-1 D:a1-0 D:b1-0 C:a1-1 C:b1-1 C:a2-0 D:a1-1 F:a-0
D:a2-0 D:b1-1 C:a2-1 F:a1-0 D:a2-1 F:a-1 C:a-2 F:a1-1 C:a-3 D:a-2 C:a1-2 C:b1-2 D:a-3
D:a1-2 D:b1-2 C:a1-3 C:b1-3 C:a2-2 D:a1-3 F:a-2 D:a2-2 D:b1-3 C:a2-3 F:a1-2 D:a2-3 F:a-3
C:a-4 F:a1-3 C:a-5 D:a-4 C:a1-4 C:b1-4 D:a-5 D:a1-4 D:b1-4 C:a1-5 C:b1-5 C:a2-4 D:a1-5
F:a-4 D:a2-4 D:b1-5 C:a2-5 F:a1-4 D:a2-5 F:a-5 C:a-6 F:a1-5 C:a-7 D:a-6 C:a1-6 C:b1-6
D:a-7 D:a1-6 D:b1-6 C:a1-7 C:b1-7 C:a2-6 D:a1-7 F:a-6 D:a2-6 D:b1-7 C:a2-7 F:a1-6 D:a2-7
F:a-7 C:a-8 F:a1-7 C:a-9 D:a-8 C:a1-8 C:b1-8 D:a-9 D:a1-8 D:b1-8 C:a1-9 C:b1-9 C:a2-8
D:a1-9 F:a-8 D:a2-8 D:b1-9 C:a2-9 F:a1-8 D:a2-9 F:a-9 F:a1-9
"""


def priorities():
    s = Story()
    # dask.order: each chain a-i, a1-i, a2-i, b1-i in turn
    offset = {"a": 0, "a1": 1, "a2": 2, "b1": 3}
    dep = {"a": None, "a1": "a", "a2": "a1", "b1": "a"}
    result = {"a": 1, "a1": 2, "a2": 3, "b1": 0}  # slowinc(i), inc, inc, dec
    events, evs = [], {}
    for step in PRIORITIES_ORDER.split():
        what, key = step.split(":")
        name, i = key.split("-")
        i = int(i)
        if what == "C":
            who_has = {f"{dep[name]}-{i}": [A]} if dep[name] else None
            evs[key] = s.task(key, prio=(0, 1, 4 * i + offset[name]), who_has=who_has)
            events.append(evs[key])
        elif what == "D":
            events.append(s.done(evs[key], i + result[name]))
        else:
            events.append(s.released(key, f"task-finished-{s.now()}"))
    for i in range(10):
        events += [s.released(f"a2-{i}"), s.released(f"b1-{i}")]
    return worker(A, 1, events + [s.closing()])


# test_priorities: ten chains on one thread; roots come two at a time from the queue, the
# dependents of a root (better priority) overtake later roots waiting in ready, and
# intermediate results are freed as soon as their dependents finish.
SCENARIOS["after-priorities"] = priorities()


# --- test_get_client -----------------------------------------------------------------


def get_client():
    s = Story()
    ev = {A: [], B: []}

    def round_trip(here, there, i):
        f, g = tok("f", i), tok("inc", i)
        outer = s.task(f, workers=[A] if i == 10 else None)
        ev[here].append(outer)
        inner = s.task(g, prio=(0, 2, 0))
        ev[there] += [inner, s.done(inner, i + 1)]
        ev[here].append(s.done(outer, i + 1))
        ev[there].append(s.released(g))
        ev[here].append(s.released(f))

    round_trip(A, B, 10)
    for i in range(10):
        round_trip(*((A, B) if i % 2 == 0 else (B, A)), i)
    return {w: worker(w, n, ev[w] + [s.closing()]) for w, n in ((A, 1), (B, 2))}


# test_get_client, a: runs f, which submits inc from inside the task and blocks on it
# (it lands on the other worker), then alternately runs f or the inner inc.
SCENARIOS["after-get_client-a"] = get_client()[A]
# test_get_client, b: the mirror image on two threads.
SCENARIOS["after-get_client-b"] = get_client()[B]


# --- test_prefer_gather_from_local_address -------------------------------------------

W1, W2, W3 = addr(1), addr(2), addr(3, "127.0.0.2")


def prefer_local():
    s = Story()
    x = tok("int", 123)
    y = tok("inc", x)
    ev = s.task(y, who_has={x: [W3, W1]}, workers=[W2])
    events = [ev, s.fetched(W1, {x: 123}), s.done(ev, 124)]
    events += [s.released(x), s.released(y), s.closing()]
    return worker(W2, 1, events)


# test_prefer_gather_from_local_address, w2: the dependency is on a peer of another host
# (listed first) and on one of the same host; the worker fetches from the local one.
SCENARIOS["after-prefer_gather_from_local_address-w2"] = prefer_local()


# --- test_close_gracefully -----------------------------------------------------------


def close_gracefully():
    s = Story()
    keys = [tok("slowinc", i) for i in range(200)]
    runs = [s.task(k, prio=(0, 1, i), workers=[B]) for i, k in enumerate(keys)]
    b = list(runs)
    b += [s.done(runs[i], i + 1) for i in range(10)]
    b.append(s.closing())  # closing gracefully: no new task starts
    b += [s.done(runs[i], i + 1) for i in (10, 11)]
    a = []
    for batch in (range(10), (10, 11)):
        batch_keys = [keys[i] for i in batch]
        a.append(acquire_replicas(
            {k: [B] for k in batch_keys},
            f"active_memory_manager-{s.now()}",
            {k: 28 for k in batch_keys},
        ))
        a.append(s.fetched(B, {keys[i]: i + 1 for i in batch}))
    a.append(remove_worker(B, f"handle-worker-cleanup-{s.now()}"))
    b.append(s.closing())
    a += [s.released(k) for k in keys[:12]]
    return {"a": worker(A, 1, a + [s.closing()]), "b": worker(B, 2, b)}


# test_close_gracefully, a: the retiring worker's results are copied here by the memory
# manager in two rounds, then the retired peer is removed; the client releases them.
SCENARIOS["after-close_gracefully-a"] = close_gracefully()["a"]
# test_close_gracefully, b: two hundred tasks pinned here; it stops starting tasks when
# it begins to retire, and the two still running finish while it is paused.
SCENARIOS["after-close_gracefully-b"] = close_gracefully()["b"]


# --- test_close_while_executing ------------------------------------------------------


def close_while_executing():
    s = Story()
    return worker(A, 1, [s.task("f1"), s.closing()])


# test_close_while_executing (both parametrizations): the worker closes while f1 runs;
# the cancelled execution reports nothing.
SCENARIOS["after-close_while_executing"] = close_while_executing()
