"""Hand-written stimulus streams for what the public vectors do not exercise.

    python3 tools/oracle/scenarios.py OUTDIR   # writes OUTDIR/<name>.trace.json

Record each with `record.py --ordered` (test/vectors/oracle/scenario-*.json.gz).
"""
from __future__ import annotations

import json
import os
import sys

CONFIG = {
    "nthreads": 1,
    "address": "127.0.0.1:1",
    "resources": {"R": 1.0},
    "transfer_incoming_count_limit": 4,
    "transfer_incoming_bytes_limit": None,
    "transfer_message_bytes_limit": None,
    "transfer_incoming_bytes_throttle_threshold": 10_000_000,
    "validate": True,
    "transition_counter_max": False,
}
PEER = "127.0.0.1:2"
PEER2 = "127.0.0.1:3"


def compute(key, sid, run_id=1, who_has=None, prio=(0,), actor=False, rr=None):
    who_has = who_has or {}
    return {
        "cls": "ComputeTaskEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "who_has": who_has,
        "nbytes": {k: 1 for k in who_has},
        "priority": list(prio),
        "duration": 1.0,
        "run_spec": None,
        "function": None,
        "args": None,
        "kwargs": None,
        "resource_restrictions": rr or {},
        "actor": actor,
        "annotations": {},
        "span_id": None,
    }


def success(key, sid, run_id=1):
    return {
        "cls": "ExecuteSuccessEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "value": {"typename": "int", "sizeof": 28, "value": 1},
        "start": 0.0,
        "stop": 1.0,
        "nbytes": 8,
        "type": "int",
    }


def failure(key, sid, run_id=1):
    return {
        "cls": "ExecuteFailureEvent",
        "stimulus_id": sid,
        "key": key,
        "run_id": run_id,
        "start": 0.0,
        "stop": 1.0,
        "exception": None,
        "traceback": None,
        "exception_text": "ValueError()",
        "traceback_text": "tb",
    }


def free(keys, sid):
    return {"cls": "FreeKeysEvent", "stimulus_id": sid, "keys": keys}


def steal(key, sid):
    return {"cls": "StealRequestEvent", "stimulus_id": sid, "key": key}


def scatter(data, sid):
    return {"cls": "UpdateDataEvent", "stimulus_id": sid, "data": data}


def network_failure(worker, sid, total_nbytes=1):
    return {
        "cls": "GatherDepNetworkFailureEvent",
        "stimulus_id": sid,
        "worker": worker,
        "total_nbytes": total_nbytes,
    }


SCENARIOS = {
    "actor": [
        compute("a", "s1", actor=True),
        success("a", "s2"),
        compute("b", "s3", who_has={"a": [PEER]}),
        free(["b"], "s4"),
        free(["a"], "s5"),
    ],
    "actor-dep": [
        compute("a", "s1", actor=True),
        success("a", "s2"),
        compute("b", "s3", who_has={"a": ["127.0.0.1:1"]}),
        success("b", "s4"),
        free(["a", "b"], "s5"),
    ],
    "actor-err": [
        compute("a", "s1", actor=True),
        failure("a", "s2"),
        free(["a"], "s3"),
        compute("a", "s4", actor=True, run_id=2),
        success("a", "s5", run_id=2),
    ],
    "actor-steal": [
        compute("x", "s0"),
        compute("a", "s1", actor=True),
        steal("a", "s2"),
        success("x", "s3"),
        steal("a", "s4"),
    ],
    "actor-cancel": [
        compute("a", "s1", actor=True),
        free(["a"], "s2"),
        compute("a", "s3", actor=True, run_id=2),
        success("a", "s4", run_id=1),
        success("a", "s5", run_id=2),
    ],
    "resources": [
        compute("a", "s1", rr={"R": 1.0}),
        compute("b", "s2", rr={"R": 1.0}, prio=(-1,)),
        compute("c", "s3"),
        success("a", "s4"),
        {"cls": "SecedeEvent", "stimulus_id": "s5", "key": "b", "compute_duration": 0.5},
        success("b", "s6"),
        success("c", "s7"),
    ],
    # The known reference bug the cluster simulator found (docs/sim.md): a gather
    # of d and r fails on the network after d was cancelled and r resumed with d
    # as its input. d, cancelled and done, ends released under the waiting r.
    "cancelled-dep-of-resumed": [
        compute("a", "s1", who_has={"r": [PEER], "d": [PEER2, PEER]}),
        free(["a"], "s2"),
        compute("r", "s3", who_has={"d": [PEER2]}, rr={"R": 1.0}),
        network_failure(PEER, "s4", total_nbytes=2),
    ],
    "update-data": [
        scatter({"x": {"typename": "int", "sizeof": 28, "value": 1}}, "s1"),
        compute("y", "s2", who_has={"x": [PEER]}),
        scatter({"y": {"typename": "float", "sizeof": 24, "value": 1.5}}, "s3"),
        free(["x", "y"], "s4"),
    ],
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, events in SCENARIOS.items():
        trace = {"name": f"scenario-{name}", "config": CONFIG, "events": events}
        with open(os.path.join(out, f"{name}.trace.json"), "w") as f:
            json.dump(trace, f)
