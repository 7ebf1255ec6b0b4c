"""Streams after the second half of Dask's `distributed/tests/test_worker_state_machine.py`.

Only the tests driving a bare WorkerState are here; the cluster tests of that part
(`gen_cluster`) and the tests already among the public vectors are left out.
"""
from __future__ import annotations

from events import (
    EXECUTE_DONE_KINDS,
    RUNNING_FLAVOURS as RUNNING,
    RUNNING_TASK_CONFIG as WITH_R,
    execute_done,
    running_task as running_x,
    acquire_replicas,
    compute,
    free,
    gather_success,
    pause,
    remove_replicas,
    scatter,
    success,
    unpause,
    value,
)

WS2 = "127.0.0.1:2"
WS3 = "127.0.0.1:3"


def str_value(s):
    """A str value with the size Dask's sizeof gives it (sys.getsizeof)."""
    return value(s, sizeof=49 + len(s))


SCENARIOS = {}

# Fetch order: priority first, then local peers, then the busiest peer, then the seeded rng.
SCENARIOS["gather_priority"] = {
    "config": {"transfer_incoming_count_limit": 4},
    "events": [
        pause("pause"),
        acquire_replicas(
            {
                "x1": ["127.0.0.2:1", "127.0.0.1:2"],
                "x2": ["127.0.0.2:1"],
                "x3": ["127.0.0.3:1"],
                "x4": ["127.0.0.3:1"],
                "x5": ["127.0.0.4:1"],
                "x6": ["127.0.0.5:1"],
                "x7": ["127.0.0.6:1"],
                "x8": ["127.0.0.7:1"],
            },
            "compute1",
            nbytes={f"x{i}": 4 * 2**20 for i in range(1, 9)},
        ),
        compute("z", "compute2", who_has={"y": ["127.0.0.7:1"]}, prio=(0,)),
        unpause("unpause"),
    ],
}

for _state in RUNNING:
    # A running task stays running through cancelled and resumed.
    SCENARIOS[f"running_task_in_all_running_tasks-{_state}"] = {
        "config": WITH_R,
        "events": running_x(_state)
        + [free(["x"], "s1"), compute("y", "s2", who_has={"x": [WS2]})],
    }
    for _name in EXECUTE_DONE_KINDS:
        # A running task that ends leaves the running set.
        SCENARIOS[f"done_task_not_in_all_running_tasks-{_state}-{_name}"] = {
            "config": WITH_R,
            "events": running_x(_state) + [execute_done(_name, "x", "s1")],
        }
        # A cancelled then resumed task that ends leaves the running set.
        SCENARIOS[f"done_resumed_task_not_in_all_running_tasks-{_state}-{_name}"] = {
            "config": WITH_R,
            "events": running_x(_state)
            + [
                free(["x"], "s1"),
                compute("y", "s2", who_has={"x": [WS2]}),
                execute_done(_name, "x", "s3"),
            ],
        }

# The per-message byte target does not hold back a first transfer from another peer.
SCENARIOS["message_target_does_not_affect_first_transfer_on_different_worker"] = {
    "config": {
        "transfer_incoming_count_limit": 100,
        "transfer_incoming_bytes_limit": 600,
        "transfer_message_bytes_limit": 100,
        "transfer_incoming_bytes_throttle_threshold": 1,
    },
    "events": [
        compute("c", "s1", who_has={"a": [WS2], "b": [WS3]}, nbytes={"a": 200, "b": 200}),
    ],
}

# One connection at a time: the second dependency waits until the first one lands.
# The test gathers whichever key went in flight; the reference picks a (from 127.0.0.1:2).
SCENARIOS["throttle_incoming_transfers_on_count_limit"] = {
    "config": {
        "transfer_incoming_count_limit": 1,
        "transfer_incoming_bytes_limit": 100_000,
        "transfer_incoming_bytes_throttle_threshold": 1,
    },
    "events": [
        compute("c", "s1", who_has={"a": [WS2], "b": [WS3]}, nbytes={"a": 100, "b": 100}),
        gather_success(WS2, {"a": 123}, "s2", total_nbytes=100),
    ],
}

# The incoming byte limit caps one peer's message at two of its three keys; the test gathers
# those in flight, which the reference makes b and c.
SCENARIOS["throttling_incoming_transfer_on_transfer_bytes_same_worker"] = {
    "config": {
        "transfer_incoming_count_limit": 100,
        "transfer_incoming_bytes_limit": 250,
        "transfer_incoming_bytes_throttle_threshold": 1,
    },
    "events": [
        compute(
            "d",
            "s1",
            who_has={"a": [WS2], "b": [WS2], "c": [WS2]},
            nbytes={"a": 100, "b": 100, "c": 100},
        ),
        gather_success(WS2, {"b": 123, "c": 123}, "s2", total_nbytes=200),
    ],
}

# The incoming byte limit holds back a second peer until the first transfer lands (the
# reference puts a in flight first, so the test gathers a from 127.0.0.1:2).
SCENARIOS["throttling_incoming_transfer_on_transfer_bytes_different_workers"] = {
    "config": {
        "transfer_incoming_count_limit": 100,
        "transfer_incoming_bytes_limit": 150,
        "transfer_incoming_bytes_throttle_threshold": 1,
    },
    "events": [
        compute("c", "s1", who_has={"a": [WS2], "b": [WS3]}, nbytes={"a": 100, "b": 100}),
        gather_success(WS2, {"a": 123}, "s2", total_nbytes=100),
    ],
}

# The incoming byte limit holds a transfer back even while in-flight bytes are under the
# throttle threshold (which otherwise lifts the count limit).
SCENARIOS["throttle_on_transfer_bytes_regardless_of_threshold"] = {
    "config": {
        "transfer_incoming_count_limit": 1,
        "transfer_incoming_bytes_limit": 100,
        "transfer_incoming_bytes_throttle_threshold": 50,
    },
    "events": [
        compute("b", "s1", who_has={"a": [WS2]}, nbytes={"a": 1}),
        compute("d", "s2", who_has={"c": [WS3]}, nbytes={"c": 100}),
    ],
}

for _state in RUNNING:
    # Stored bytes through execute, gather, scatter, actors, free and remove-replicas.
    SCENARIOS[f"worker_nbytes-{_state}"] = {
        "config": WITH_R,
        "events": running_x(_state)
        + [
            success("x", "s1", nbytes=12),
            acquire_replicas({"y": [WS2]}, "s2", nbytes={"y": 13}),
            gather_success(WS2, {"y": str_value("foo")}, "s3", total_nbytes=13),
            scatter({"z": str_value("bar")}, "s3"),
            compute("w", "s4", actor=True),
            success("w", "s5", nbytes=14),
            free(["z"], "s6"),
            remove_replicas(["x", "y", "w"], "s7"),
        ],
    }

# fetch_count through fetch, flight, missing and back to fetch, with no connection slots.
SCENARIOS["fetch_count"] = {
    "config": {"transfer_incoming_count_limit": 0},
    "events": [
        acquire_replicas({"a": [WS2]}, "s1"),
        acquire_replicas({"b": [WS2, WS3]}, "s2"),
        acquire_replicas({"c": [WS2], "d": [WS2, WS3]}, "s3"),
        free(["c", "d"], "s4"),
        gather_success(WS2, {}, "s5", total_nbytes=0),
        compute("clog", "s6", who_has={"clog_dep": [WS2]}, prio=(-1,)),
        gather_success(WS3, {}, "s7", total_nbytes=0),
    ],
}

# Tuple-like keys fetched and computed, then the dependent freed (the test reads timers).
SCENARIOS["task_counter"] = [
    compute("('y-123', 7)", "s1", who_has={"('x-456', 8)": [WS2]}),
    acquire_replicas({"('x-789', 0)": [WS3], "z": [WS3]}, "s2"),
    free(["('y-123', 7)"], "s3"),
]
