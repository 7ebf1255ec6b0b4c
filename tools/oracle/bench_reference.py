"""Time the reference worker state machine on the benchmark streams, on this machine.

    python3 tools/oracle/bench_reference.py [--runs N] STREAM.jsonl.gz...

The figures in ../shared/bench/README.md were measured on another machine of this
kind at another time; this measures the reference here and now, so that
`npm run bench:state -- --reference-here` can give ratios of two measurements taken
side by side. As the published figures: validation off, events decoded before timing,
only `handle_stimulus` timed, median of the runs. The clock the reference logs with is
the real `time.time` (the oracle's shim returns 0.0), and the reference is the
original (its sets iterate in hash order), not the insertion-ordered variant.

Prints one JSON line per stream: {"stream", "events", "transitions", "runs",
"median_s", "events_per_s", "transitions_per_s", "final_check"}.
"""
from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import statistics
import sys
import time

sys.argv = [a for a in sys.argv if a != "--ordered"]
import record  # noqa: E402  (loads the reference, unordered)

record.wsm.time = time.time


def load(path: str):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        lines = [line for line in f if line.strip()]
    header = json.loads(lines[0])
    final = json.loads(lines[-1]).get("final")
    if final is None:
        raise ValueError(f'{path}: the last line has no "final" record')
    events = [record.event_of(json.loads(line)) for line in lines[1:-1]]
    config = header.get("config")
    if not isinstance(config, dict):
        raise ValueError(f"{path}: the header has no config")
    try:
        record.worker_state(config, record.FailingStore())
    except KeyError as e:
        raise ValueError(f"{path}: the config has no {e.args[0]!r}") from None
    return header, events, final


def replay_once(header: dict, events: list):
    # The previous run's state machine is a web of reference cycles (dependencies and
    # dependents): collect it now, or the cycle collector would do it during this run.
    # bench:state collects weft's before each run too.
    gc.collect()
    ws = record.worker_state(header["config"], record.FailingStore())
    ws.validate = False
    instructions = 0
    t0 = time.perf_counter()
    for ev in events:
        instructions += len(ws.handle_stimulus(ev))
    return time.perf_counter() - t0, ws, instructions


def positive_int(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return n


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_reference.py",
        description="Time the reference worker state machine on benchmark streams.",
    )
    parser.add_argument("--runs", type=positive_int, default=3, help="runs per stream (median)")
    parser.add_argument("paths", nargs="+", metavar="STREAM", help="a *.jsonl.gz stream")
    args = parser.parse_args(argv)
    runs = args.runs
    paths = args.paths
    failed = False
    for path in paths:
        try:
            header, events, final = load(path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"bench_reference.py: cannot read the stream {path}: {e}", file=sys.stderr)
            return 2
        times = []
        check = "ok"
        for _ in range(runs):
            seconds, ws, instructions = replay_once(header, events)
            times.append(seconds)
            got = {
                "instructions": instructions,
                "transition_counter": ws.transition_counter,
                "tasks": len(ws.tasks),
            }
            want = {k: final[k] for k in got}
            if got != want:
                check = f"MISMATCH: got {json.dumps(got)}, expected {json.dumps(want)}"
                failed = True
            del ws
        t = statistics.median(times)
        name = header.get("name") or os.path.basename(path).split(".")[0]
        print(
            json.dumps(
                {
                    "stream": name,
                    "events": len(events),
                    "transitions": final["transition_counter"],
                    "runs": runs,
                    "median_s": round(t, 4),
                    "events_per_s": round(len(events) / t),
                    "transitions_per_s": round(final["transition_counter"] / t),
                    "final_check": check,
                }
            ),
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
