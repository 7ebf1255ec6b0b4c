"""Streams "after" the cluster tests of dask/distributed's `distributed/tests/test_worker.py`
(the 2023 version stored in the search index) that earlier modules (`worker_a`, `worker_b`,
`misc`) left without a stream and that are not published as vectors.

Nearly everything in that file that reaches a worker's state machine is either published
or already has a stream; what is left is mostly tests whose workers only see a task or two.
The streams below are for the remaining tests where a worker sees a failure, a retry or
unusually large data. As in the other modules, they are not the tests themselves: keys,
run ids, priorities and timestamped stimulus ids are made up and only kept consistent.
An unrestricted lone task goes to the second worker (b, two threads): the scheduler's
round robin over idle workers starts at `len(tasks) % len(workers)`, i.e. 1.
Names are `after-<test>[-<worker>]`.
"""
from __future__ import annotations

from events import cluster_worker, compute, failure, free, gather_success, pause, success, value

SCENARIOS: dict = {}

# gen_cluster's default workers: a (one thread) and b (two threads).
A = "tcp://127.0.0.1:40001"
B = "tcp://127.0.0.1:40002"


class Clock:
    """Made-up but increasing timestamps and run ids for one test's story."""

    def __init__(self, t=1_700_100_000.0, run_id=200):
        self.t = t
        self.run_id = run_id

    def sid(self, prefix):
        self.t += 0.0021
        return f"{prefix}-{self.t:.7f}"

    def compute(self, key, *, annotations=None, who_has=None, nbytes=None, prio=(0, 1, 0)):
        self.run_id += 1
        return compute(
            key,
            self.sid("compute-task"),
            run_id=self.run_id,
            who_has=who_has,
            nbytes=nbytes,
            prio=prio,
            duration=0.5,
            annotations=annotations,
        )

    def ran_and_raised(self, ev, exception_text, traceback_text):
        """The task's function ran in the executor and raised."""
        start = self.t
        return failure(
            ev["key"],
            self.sid("task-erred"),
            run_id=ev["run_id"],
            exception_text=exception_text,
            traceback_text=traceback_text,
            start=start,
            stop=start + 0.001,
        )

    def failed_before_running(self, ev, exception_text, traceback_text=""):
        """Worker.execute gave up before the function ran (no start/stop times)."""
        return failure(
            ev["key"],
            self.sid("execute-unknown-error"),
            run_id=ev["run_id"],
            exception_text=exception_text,
            traceback_text=traceback_text,
        )

    def finished(self, ev, v):
        start = self.t
        return success(
            ev["key"],
            self.sid("task-finished"),
            run_id=ev["run_id"],
            v=v,
            nbytes=v["sizeof"],
            type_=v["typename"],
            start=start,
            stop=start + 0.01,
        )

    def client_gone(self, keys):
        """The client closes: the scheduler frees each of its keys, one message each."""
        sid = self.sid("remove-client")
        return [free([k], sid) for k in keys]

    def closing(self):
        return pause(self.sid("worker-status-change"))


# --- test_process_executor_raise_exception -------------------------------------------
# raise_exc runs in a process pool with retries=1: the first failure makes the scheduler
# free the key and send it again (same worker, new run id); the second failure sticks
# until the client goes away.


def process_executor_raise_exception():
    c = Clock()
    key = "raise_exc-5c1f0e2d9b7a4c3e8f6a1b2c3d4e5f60"
    ann = {"executor": "processes", "retries": 1}
    exc = "RuntimeError('foo')"
    tb = '  File "test_worker.py", line 1094, in raise_exc\n    raise RuntimeError("foo")\n'
    first = c.compute(key, annotations=ann)
    first_err = c.ran_and_raised(first, exc, tb)
    retry = c.compute(key, annotations=ann)
    # The scheduler's free-keys for the retry carries the stimulus id of the failure.
    events = [first, first_err, free([key], first_err["stimulus_id"]), retry]
    events.append(c.ran_and_raised(retry, exc, tb))
    events += c.client_gone([key])
    events.append(c.closing())
    return cluster_worker(B, 2, events)


# Worker b: a task errs, is freed for its retry, runs again under a new run id and errs
# for good; the erred task is forgotten when the client leaves.
SCENARIOS["after-process_executor_raise_exception-b"] = process_executor_raise_exception()


# --- test_bad_executor_annotation ----------------------------------------------------


def bad_executor_annotation():
    c = Clock(t=1_700_100_100.0, run_id=300)
    ev = c.compute("inc-0a8e4f1d3c2b5a6978e1f0d2c3b4a596", annotations={"executor": "bad"})
    exc = "ValueError(\"Invalid executor 'bad'; expected one of: ['actor', 'default', 'offload']\")"
    events = [ev, c.failed_before_running(ev, exc)]
    events += c.client_gone([ev["key"]])
    events.append(c.closing())
    return cluster_worker(B, 2, events)


# Worker b: a task annotated with an unknown executor fails before it runs (no start or
# stop time); the erred task stays until the client leaves.
SCENARIOS["after-bad_executor_annotation-b"] = bad_executor_annotation()


# --- test_wait_for_outgoing ----------------------------------------------------------
# A 10-million-float array (80 MB, above both the 50 MB message limit and the 10 MB
# throttling threshold) is scattered to a; b computes inc of it.


def wait_for_outgoing():
    c = Clock(t=1_700_100_200.0, run_id=400)
    size = 80_000_000
    x = "ndarray-7d2f9c4b1e0a3d5c6b8a9f0e1d2c3b4a"
    y = "inc-3b9e2a7c5d1f4e6a8b0c2d4e6f8a0b1c"
    ev = c.compute(
        y,
        who_has={x: [A]},
        nbytes={x: size},
        annotations={"workers": [B]},
    )
    array = value(None, typename="numpy.ndarray", sizeof=size)
    events = [
        ev,
        gather_success(A, {x: array}, c.sid("gather-dep-success"), total_nbytes=size),
        c.finished(ev, array),
    ]
    # The test errs at its last line; the closing client frees y, then x.
    events += c.client_gone([y, x])
    events.append(c.closing())
    return cluster_worker(B, 2, events)


# Worker b: a single dependency larger than the message limit is fetched in one transfer
# (the first one always goes), the result is as large; both are freed at the end.
SCENARIOS["after-wait_for_outgoing-b"] = wait_for_outgoing()
