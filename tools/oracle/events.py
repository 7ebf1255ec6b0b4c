"""Events in the vectors' dict form (../shared/conformance/FORMAT.md), for hand-written
streams (`scenarios.py`, `dasktests/`).

The defaults are those of the seed's `dummy` constructors, so a stream written from a
Dask test that uses `ComputeTaskEvent.dummy(...)` reads the same here.
"""
from __future__ import annotations

# The configuration of the reference's `ws` test fixture (a WorkerState on its own).
WS_CONFIG = {
    "nthreads": 1,
    "address": "127.0.0.1:1",
    "resources": {},
    "transfer_incoming_count_limit": 9999,
    "transfer_incoming_bytes_limit": None,
    "transfer_message_bytes_limit": None,
    "transfer_incoming_bytes_throttle_threshold": 10_000_000,
    "validate": True,
    "transition_counter_max": 50_000,
}

# The configuration of a worker of Dask's `gen_cluster` tests, as the published suite
# vectors recorded from them have it (the address is made up).
CLUSTER_WORKER_CONFIG = {
    "nthreads": 1,
    "address": "tcp://127.0.0.1:40001",
    "resources": {},
    "transfer_incoming_count_limit": 50,
    "transfer_incoming_bytes_limit": 2_527_651_020,
    "transfer_message_bytes_limit": 50_000_000,
    "transfer_incoming_bytes_throttle_threshold": 10_000_000,
    "validate": True,
    "transition_counter_max": 50_000,
}


def cluster_worker(address, nthreads, events, **config):
    """One gen_cluster worker's stream: its events, and `CLUSTER_WORKER_CONFIG` with this
    address, thread count and any other overrides."""
    return {
        "events": events,
        "config": {**CLUSTER_WORKER_CONFIG, "address": address, "nthreads": nthreads, **config},
    }


def value(v=None, typename=None, sizeof=None):
    """A task's value: the recorded type name and size, and the value itself."""
    if typename is None:
        typename = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(v), "NoneType")
    if sizeof is None:
        sizeof = {"NoneType": 16, "int": 28, "float": 24, "bool": 28}.get(typename, 49)
    return {"typename": typename, "sizeof": sizeof, "value": v}


def as_value(v):
    """`v` as a task's value: a `value(...)` dict as it is, a plain value through `value`."""
    return v if isinstance(v, dict) and "typename" in v else value(v)


def compute(
    key,
    sid,
    *,
    run_id=0,
    who_has=None,
    nbytes=None,
    prio=(0,),
    duration=1.0,
    rr=None,
    actor=False,
    annotations=None,
):
    who_has = {k: list(v) for k, v in (who_has or {}).items()}
    return {
        "cls": "ComputeTaskEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "who_has": who_has,
        "nbytes": nbytes if nbytes is not None else {k: 1 for k in who_has},
        "priority": list(prio),
        "duration": duration,
        "run_spec": None,
        "function": None,
        "args": None,
        "kwargs": None,
        "resource_restrictions": rr or {},
        "actor": actor,
        "annotations": annotations or {},
        "span_id": None,
    }


def success(key, sid, *, run_id=1, v=None, nbytes=1, start=0.0, stop=1.0, type_=None):
    return {
        "cls": "ExecuteSuccessEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "value": as_value(v),
        "start": start,
        "stop": stop,
        "nbytes": nbytes,
        "type": type_,
    }


def failure(
    key, sid, *, run_id=1, exception_text="", traceback_text="", start=None, stop=None
):
    return {
        "cls": "ExecuteFailureEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "start": start,
        "stop": stop,
        "exception": None,
        "traceback": None,
        "exception_text": exception_text,
        "traceback_text": traceback_text,
    }


def reschedule(key, sid):
    return {"cls": "RescheduleEvent", "stimulus_id": sid, "key": key}


def secede(key, sid, compute_duration=1.0):
    return {"cls": "SecedeEvent", "stimulus_id": sid, "key": key, "compute_duration": compute_duration}


def free(keys, sid):
    return {"cls": "FreeKeysEvent", "stimulus_id": sid, "keys": list(keys)}


def cancel(key, sid):
    return {"cls": "CancelComputeEvent", "stimulus_id": sid, "key": key}


def steal(key, sid):
    return {"cls": "StealRequestEvent", "stimulus_id": sid, "key": key}


def scatter(data, sid):
    """UpdateDataEvent; `data` maps keys to plain values or to `value(...)` dicts."""
    return {
        "cls": "UpdateDataEvent",
        "stimulus_id": sid,
        "data": {k: as_value(v) for k, v in data.items()},
    }


def acquire_replicas(who_has, sid, nbytes=None):
    who_has = {k: list(v) for k, v in who_has.items()}
    return {
        "cls": "AcquireReplicasEvent",
        "stimulus_id": sid,
        "who_has": who_has,
        "nbytes": nbytes if nbytes is not None else {k: 1 for k in who_has},
    }


def remove_replicas(keys, sid):
    return {"cls": "RemoveReplicasEvent", "stimulus_id": sid, "keys": list(keys)}


def refresh_who_has(who_has, sid):
    return {
        "cls": "RefreshWhoHasEvent",
        "stimulus_id": sid,
        "who_has": {k: list(v) for k, v in who_has.items()},
    }


def gather_success(worker, data, sid, total_nbytes=1):
    """GatherDepSuccessEvent; `data` maps keys to plain values or `value(...)` dicts."""
    return {
        "cls": "GatherDepSuccessEvent",
        "stimulus_id": sid,
        "worker": worker,
        "total_nbytes": total_nbytes,
        "data": {k: as_value(v) for k, v in data.items()},
    }


def gather_busy(worker, sid, total_nbytes=1):
    return {"cls": "GatherDepBusyEvent", "stimulus_id": sid, "worker": worker, "total_nbytes": total_nbytes}


def gather_network_failure(worker, sid, total_nbytes=1):
    return {
        "cls": "GatherDepNetworkFailureEvent",
        "stimulus_id": sid,
        "worker": worker,
        "total_nbytes": total_nbytes,
    }


def gather_failure(worker, sid, total_nbytes=1, exception_text="", traceback_text=""):
    return {
        "cls": "GatherDepFailureEvent",
        "stimulus_id": sid,
        "worker": worker,
        "total_nbytes": total_nbytes,
        "exception": None,
        "traceback": None,
        "exception_text": exception_text,
        "traceback_text": traceback_text,
    }


def retry_busy_worker(worker, sid):
    return {"cls": "RetryBusyWorkerEvent", "stimulus_id": sid, "worker": worker}


def remove_worker(worker, sid):
    return {"cls": "RemoveWorkerEvent", "stimulus_id": sid, "worker": worker}


def find_missing(sid):
    return {"cls": "FindMissingEvent", "stimulus_id": sid}


def pause(sid):
    return {"cls": "PauseEvent", "stimulus_id": sid}


def unpause(sid):
    return {"cls": "UnpauseEvent", "stimulus_id": sid}


# Dask's `ws_with_running_task` fixture: the `ws` fixture with one unit of resource R,
# running "x", which needs it; the "long-running" flavour makes x secede as well.
RUNNING_FLAVOURS = ("executing", "long-running")
RUNNING_TASK_CONFIG = {"resources": {"R": 1}}


def running_task(flavour):
    events = [compute("x", "compute", rr={"R": 1})]
    if flavour == "long-running":
        events.append(secede("x", "secede", compute_duration=1.0))
    return events


# The three ways an execution ends, as Dask's tests build them with `.dummy(...)`.
EXECUTE_DONE_KINDS = ("ExecuteSuccessEvent", "ExecuteFailureEvent", "RescheduleEvent")


def execute_done(kind, key, sid):
    if kind == "ExecuteSuccessEvent":
        return success(key, sid)
    if kind == "ExecuteFailureEvent":
        return failure(key, sid)
    return reschedule(key, sid)
