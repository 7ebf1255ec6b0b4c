"""Record a conformance vector (../shared/conformance/FORMAT.md) from the reference.

    python3 tools/oracle/record.py [--ordered] TRACE.json OUT.json

TRACE is `{"name", "config", "events": [...], "data_store_errors": {step: [...]},
"config_before": {step: {...}}}` (the last two optional): a configuration and events in
the vectors' own forms, the data store's failures and the attributes set before a step. Each event is replayed through
the reference worker state machine; the instructions and the state snapshot after it
are written as a vector step, or `raises` and the end of the vector when it raises.
"""
from __future__ import annotations

import copy
import json
import logging
import math
import sys
from collections import UserDict

from seed import load_seed

# The reference logs the story of every task that fails validation before it raises;
# the vector records what was raised, and the conformance runner shows the port's story.
logging.disable(logging.CRITICAL)

ORDERED = "--ordered" in sys.argv
wsm = load_seed(ordered=ORDERED)


class Recorded:
    """Stand-in for a recorded task value: only its type name and size are known."""

    def __init__(self, recorded: dict):
        self.recorded = recorded


_TYPES: dict[str, type] = {}


def recorded_type(name: str) -> type:
    """A class whose dask `typename` is `name`."""
    if name not in _TYPES:
        module, _, qual = name.rpartition(".")
        _TYPES[name] = type(qual, (Recorded,), {"__module__": module or "builtins"})
    return _TYPES[name]


def value_of(v):
    if isinstance(v, dict) and "typename" in v and "sizeof" in v:
        return recorded_type(v["typename"])(v)
    return v


def recorded_sizeof(v, default_size=1e6):
    if isinstance(v, Recorded):
        return v.recorded["sizeof"]
    return sys.getsizeof(v)


wsm.sizeof = recorded_sizeof


# Attributes whose null in a vector means infinity (FORMAT.md `config`).
INFINITE_WHEN_NULL = {"transfer_incoming_bytes_limit", "transfer_message_bytes_limit"}


def inf(x):
    return math.inf if x is None else x


def event_of(d: dict):
    kwargs = {k: v for k, v in d.items() if k not in ("cls", "handled")}
    cls = getattr(wsm, d["cls"])
    if "priority" in kwargs and kwargs["priority"] is not None:
        kwargs["priority"] = tuple(kwargs["priority"])
    if "value" in kwargs:
        kwargs["value"] = value_of(kwargs["value"])
    if "data" in kwargs:
        kwargs["data"] = {k: value_of(v) for k, v in kwargs["data"].items()}
    if "exception" in kwargs:
        # Recorded as null; the reference only needs a (truthy) serialised exception.
        if kwargs["exception"] is None:
            kwargs["exception"] = wsm.Serialize(kwargs.get("exception_text", ""))
        if kwargs.get("traceback") is None:
            kwargs["traceback"] = wsm.Serialize(kwargs.get("traceback_text", ""))
    if d["cls"] == "ExecuteSuccessEvent":
        kwargs["type"] = None if kwargs.get("type") is None else recorded_type(kwargs["type"])
    return cls(**kwargs)


def num(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def keys(tss):
    return sorted(ts.key for ts in tss)


def resources(m):
    return {k: num(m[k]) for k in sorted(m)}


def task_snapshot(ts):
    return {
        "state": ts.state,
        "previous": ts.previous,
        "next": ts.next,
        "done": ts.done,
        "priority": None if ts.priority is None else list(ts.priority),
        "run_id": ts.run_id,
        "nbytes": ts.nbytes,
        "who_has": sorted(ts.who_has),
        "dependencies": keys(ts.dependencies),
        "dependents": keys(ts.dependents),
        "waiting_for_data": keys(ts.waiting_for_data),
        "waiters": keys(ts.waiters),
        "coming_from": ts.coming_from,
        "resource_restrictions": resources(ts.resource_restrictions or {}),
        "exception_text": ts.exception_text,
    }


def state_snapshot(ws):
    return {
        "tasks": {k: task_snapshot(ws.tasks[k]) for k in sorted(ws.tasks)},
        "ready": [ts.key for ts in ws.ready.sorted()],
        "constrained": [ts.key for ts in ws.constrained.sorted()],
        "waiting": keys(ws.waiting),
        "executing": keys(ws.executing),
        "long_running": keys(ws.long_running),
        "in_flight_tasks": keys(ws.in_flight_tasks),
        "in_flight_workers": {w: sorted(ks) for w, ks in sorted(ws.in_flight_workers.items())},
        "missing_dep_flight": keys(ws.missing_dep_flight),
        "busy_workers": sorted(ws.busy_workers),
        "data_needed": {w: keys(h) for w, h in sorted(ws.data_needed.items()) if h},
        "has_what": {w: sorted(ks) for w, ks in sorted(ws.has_what.items()) if ks},
        "data": sorted(ws.data),
        "actors": sorted(ws.actors),
        "fetch_count": ws.fetch_count,
        "transfer_incoming_bytes": ws.transfer_incoming_bytes,
        "transfer_incoming_count_total": ws.transfer_incoming_count_total,
        "nbytes": ws.nbytes,
        "executed_count": ws.executed_count,
        "generation": ws.generation,
        "running": ws.running,
        "available_resources": resources(ws.available_resources),
        "transition_counter": ws.transition_counter,
    }


def instruction_dict(inst):
    d = {"cls": type(inst).__name__, "stimulus_id": inst.stimulus_id}
    op = getattr(inst, "op", None)
    if op is not None:
        d["op"] = op
    name = d["cls"]
    if name == "GatherDep":
        d.update(worker=inst.worker, to_gather=sorted(inst.to_gather), total_nbytes=inst.total_nbytes)
    elif name == "Execute":
        d.update(key=inst.key)
    elif name == "RetryBusyWorkerLater":
        d.update(worker=inst.worker)
    elif name == "TaskFinishedMsg":
        d.update(key=inst.key, run_id=inst.run_id, nbytes=inst.nbytes, typename=inst.typename)
    elif name == "TaskErredMsg":
        d.update(
            key=inst.key,
            run_id=inst.run_id,
            exception_text=inst.exception_text,
            traceback_text=inst.traceback_text,
        )
    elif name in ("ReleaseWorkerDataMsg", "RescheduleMsg"):
        d.update(key=inst.key)
    elif name == "LongRunningMsg":
        d.update(key=inst.key, compute_duration=inst.compute_duration)
    elif name in ("AddKeysMsg", "RequestRefreshWhoHasMsg"):
        d.update(keys=sorted(inst.keys))
    elif name == "StealResponseMsg":
        d.update(key=inst.key, state=inst.state)
    else:
        raise TypeError(f"unknown instruction {name}")
    return d


class StoreError(Exception):
    def __init__(self, exception_text: str, traceback_text: str):
        super().__init__(exception_text)
        self.exception_text = exception_text
        self.traceback_text = traceback_text


class FailingStore(UserDict):
    """The worker's data store; storing a key listed for the current step raises."""

    def __init__(self):
        super().__init__()
        self.failures: dict[str, dict] = {}

    def __setitem__(self, key, value):
        err = self.failures.get(key)
        if err is not None:
            raise StoreError(err["exception_text"], err["traceback_text"])
        super().__setitem__(key, value)


def worker_state(config: dict, data: FailingStore):
    ws = wsm.WorkerState(
        nthreads=config.get("nthreads", 1),
        address=config.get("address"),
        data=data,
        resources=config.get("resources"),
        validate=config.get("validate", True),
        transition_counter_max=config.get("transition_counter_max", False),
        transfer_incoming_count_limit=config["transfer_incoming_count_limit"],
        transfer_incoming_bytes_limit=inf(config["transfer_incoming_bytes_limit"]),
        transfer_message_bytes_limit=inf(config["transfer_message_bytes_limit"]),
    )
    ws.transfer_incoming_bytes_throttle_threshold = config[
        "transfer_incoming_bytes_throttle_threshold"
    ]
    # Set after construction when they differ from what it gives (FORMAT.md `config`).
    for name in ("available_resources", "running", "generation"):
        if name in config:
            setattr(ws, name, copy.deepcopy(config[name]))
    return ws


def record(trace: dict) -> dict:
    data = FailingStore()
    ws = worker_state(trace["config"], data)
    failures = trace.get("data_store_errors", {})
    tampering = trace.get("config_before", {})
    steps = []
    for i, event in enumerate(trace["events"]):
        step = {"event": event}
        if str(i) in tampering:
            step["config_before"] = tampering[str(i)]
            # A copy: the vector keeps the value as set, the state machine mutates its own.
            for name, value in copy.deepcopy(tampering[str(i)]).items():
                setattr(ws, name, inf(value) if name in INFINITE_WHEN_NULL else value)
        errs = failures.get(str(i), [])
        if errs:
            step["data_store_errors"] = errs
        data.failures = {e["key"]: e for e in errs}
        try:
            instructions = ws.handle_stimulus(event_of(event))
        except Exception as exc:  # the vector records what the reference raised
            step["raises"] = type(exc).__name__
            steps.append(step)
            break
        finally:
            data.failures = {}
        step["instructions"] = [instruction_dict(x) for x in instructions]
        step["state"] = state_snapshot(ws)
        steps.append(step)
    return {
        "name": trace["name"],
        "source": "tools/oracle (reference worker_state_machine.py)",
        "config": trace["config"],
        "order_sensitive": False,
        "steps": steps,
    }


if __name__ == "__main__":
    paths = [a for a in sys.argv[1:] if a != "--ordered"]
    if len(paths) != 2 or paths[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(paths) != 2 else sys.stdout)
        sys.exit(0 if paths[:1] in (["-h"], ["--help"]) else 2)
    try:
        with open(paths[0]) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print(f"record.py: cannot read the trace {paths[0]}: {e}", file=sys.stderr)
        sys.exit(2)
    with open(paths[1], "w") as f:
        json.dump(record(trace), f)
