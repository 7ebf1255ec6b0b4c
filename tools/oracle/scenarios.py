"""Hand-written stimulus streams for what the public vectors do not exercise.

    python3 tools/oracle/scenarios.py OUTDIR   # writes OUTDIR/<name>.trace.json

Record each with `record.py --ordered` (test/vectors/oracle/scenario-*.json.gz).
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import events  # noqa: E402
from events import free, gather_success, remove_replicas, scatter, steal  # noqa: E402
from events import gather_network_failure as network_failure  # noqa: E402

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
PEER3 = "127.0.0.1:4"


# This file's streams were recorded with these event fields; `events.py` has the
# seed's `dummy` defaults, which differ in run_id, nbytes and the failure's texts.
def compute(key, sid, run_id=1, who_has=None, prio=(0,), actor=False, rr=None):
    return events.compute(key, sid, run_id=run_id, who_has=who_has, prio=prio, actor=actor, rr=rr)


def success(key, sid, run_id=1):
    return events.success(key, sid, run_id=run_id, v=1, nbytes=8, type_="int")


def failure(key, sid, run_id=1):
    return events.failure(
        key, sid, run_id=run_id, start=0.0, stop=1.0, exception_text="ValueError()",
        traceback_text="tb",
    )


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
    # A second reference bug the cluster simulator found (docs/sim.md, seed 601484):
    # x runs on k, is cancelled (still executing), and k, no longer protected, is
    # dropped as a replica; y's compute-task then names this worker alone for k,
    # which goes missing; x's compute-task again gives k a holder, but x only
    # resumes (cancelled -> executing) and nothing moves k out of missing.
    "missing-dep-of-recomputed": [
        compute("x", "s1", who_has={"k": [PEER]}),
        gather_success(PEER, {"k": {"typename": "int", "sizeof": 28, "value": 1}}, "s2"),
        free(["x"], "s3"),
        remove_replicas(["k"], "s4"),
        compute("y", "s5", who_has={"k": ["127.0.0.1:1"]}),
        compute("x", "s6", who_has={"k": [PEER]}),
    ],
    # The same bug with x resumed from flight (the simulator's `configured` workload,
    # seed 878 with --tasks 200): x is in flight as s's input and k in flight for y;
    # k's only holder fails on the network (k missing), s is freed (x cancelled), and
    # x's own compute-task gives k a holder, but x only resumes (cancelled ->
    # resumed(flight->waiting)) and nothing moves k out of missing.
    "missing-dep-of-resumed-flight": [
        compute("s", "s1", who_has={"x": [PEER]}),
        compute("y", "s2", who_has={"k": [PEER2]}),
        network_failure(PEER2, "s3"),
        free(["s"], "s4"),
        compute("x", "s5", who_has={"k": [PEER3]}),
    ],
    # A third, also found by the simulator (seed 910607, restarts): a compute-task
    # of an actor for a key this worker is fetching as another task's input puts
    # the key in `actors` (for its object to come) while it is still in flight:
    # validate_state fails (`_validate_task_flight`: not in actors; with the
    # input's nbytes set, the total of nbytes too). Without validation all goes on.
    "actor-of-fetched-input": [
        compute("b", "s1", who_has={"a": [PEER]}),
        compute("a", "s2", actor=True),
    ],
    # A fourth, also found by the simulator (seed 5318): the actor a, executing here,
    # is freed (cancelled) and the scheduler computes it elsewhere; b, asked of this
    # worker with a on a peer, resumes a (executing -> fetch). a stays in `actors`
    # (compute-task put it there; only `_purge_state` takes it out), so b's
    # `_validate_task_waiting` fails: a is in `waiting_for_data` but, in `actors`,
    # counts as present. Without validation all goes on.
    "actor-resumed-for-fetch": [
        compute("a", "s1", actor=True),
        free(["a"], "s2"),
        compute("b", "s3", who_has={"a": [PEER]}),
    ],
    # The same without validation (CONFIG_OVERRIDES): a's execution ends, resumed ->
    # memory (add-keys to the scheduler; the object into `actors`), and b runs on it.
    "actor-resumed-for-fetch-unvalidated": [
        compute("a", "s1", actor=True),
        free(["a"], "s2"),
        compute("b", "s3", who_has={"a": [PEER]}),
        success("a", "s4"),
        success("b", "s5"),
    ],
    # A transfer that exactly fills what a limit allows still goes (the seed compares
    # with `>`): both inputs in one message of exactly transfer_message_bytes_limit...
    "message-limit-filled-exactly": [
        events.compute("y", "s1", who_has={"a": [PEER], "b": [PEER]}, nbytes={"a": 50, "b": 50}),
    ],
    # ... and from a second peer up to exactly transfer_incoming_bytes_limit.
    "incoming-bytes-limit-filled-exactly": [
        events.compute("y", "s1", who_has={"a": [PEER], "b": [PEER2]}, nbytes={"a": 50, "b": 50}),
    ],
    # Dropping the replica of an input whose dependent has seceded raises, as for one
    # executing.
    "remove-replicas-of-long-running-input": [
        compute("x", "s1"),
        success("x", "s2"),
        compute("y", "s3", who_has={"x": ["127.0.0.1:1"]}),
        events.secede("y", "s4"),
        remove_replicas(["x"], "s5"),
    ],
    # A transition_counter_max of 0 is no limit (the seed tests its truthiness).
    "transition-counter-max-zero": [
        compute("a", "s1"),
        success("a", "s2"),
        compute("b", "s3", who_has={"a": ["127.0.0.1:1"]}),
    ],
    "update-data": [
        scatter({"x": {"typename": "int", "sizeof": 28, "value": 1}}, "s1"),
        compute("y", "s2", who_has={"x": [PEER]}),
        scatter({"y": {"typename": "float", "sizeof": 24, "value": 1.5}}, "s3"),
        free(["x", "y"], "s4"),
    ],
}

# Scenarios recorded with other settings than CONFIG's.
CONFIG_OVERRIDES = {
    "actor-resumed-for-fetch-unvalidated": {"validate": False},
    "message-limit-filled-exactly": {"transfer_message_bytes_limit": 100},
    "incoming-bytes-limit-filled-exactly": {"transfer_incoming_bytes_limit": 100},
    "transition-counter-max-zero": {"transition_counter_max": 0},
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, events in SCENARIOS.items():
        config = {**CONFIG, **CONFIG_OVERRIDES.get(name, {})}
        trace = {"name": f"scenario-{name}", "config": config, "events": events}
        with open(os.path.join(out, f"{name}.trace.json"), "w") as f:
            json.dump(trace, f)
