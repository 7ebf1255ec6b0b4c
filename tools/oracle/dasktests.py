"""Streams written after Dask's own tests: those that drive a WorkerState on its own,
and the stimuli one worker's state machine receives in cluster (gen_cluster) tests.

    python3 tools/oracle/dasktests.py OUTDIR   # writes OUTDIR/traces/<name>.trace.json
    tools/oracle/record-and-replay.sh OUTDIR   # the reference records, the port replays

The published vectors were recorded from some of Dask's tests; those not published are
checked against the reference here. Each module of `dasktests/` holds the streams after
one Dask test file (`misc` after several), named after the test they follow: `SCENARIOS = {name: spec}`, where spec
is a list of events (`events.py`) or a dict with `events` and optionally `config`
(overrides of the `ws` fixture's configuration), `config_before` and `data_store_errors`
(`{step index: ...}`, as in `record.py`'s traces). The streams feed the events the test
feeds; where a test changes an attribute directly, `config_before` does it.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from events import WS_CONFIG  # noqa: E402

import dasktests  # noqa: E402


def traces():
    for info in sorted(pkgutil.iter_modules(dasktests.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"dasktests.{info.name}")
        for name, spec in module.SCENARIOS.items():
            if isinstance(spec, list):
                spec = {"events": spec}
            unknown = set(spec) - {"events", "config", "config_before", "data_store_errors"}
            if unknown:
                raise ValueError(f"{info.name}.{name}: unknown fields {sorted(unknown)}")
            trace = {
                "name": f"dask-{info.name}-{name}",
                "config": {**WS_CONFIG, **spec.get("config", {})},
                "events": spec["events"],
            }
            for field in ("config_before", "data_store_errors"):
                if field in spec:
                    trace[field] = {str(k): v for k, v in spec[field].items()}
            yield trace


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    out = os.path.join(sys.argv[1], "traces")
    os.makedirs(out, exist_ok=True)
    n = 0
    for trace in traces():
        with open(os.path.join(out, f"{trace['name']}.trace.json"), "w") as f:
            json.dump(trace, f)
        n += 1
    print(f"{n} traces in {out}")
