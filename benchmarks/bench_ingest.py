"""Benchmark: bundled ingest from an empty data dir and re-ingest with nothing changed (issue 22).

Targets: ingest from empty <= 30 s (the ONNX export included), re-ingest <= 1 s. Whole processes
(`python -m ui.cli ...`), with the cold `plan` of the same run as the yardstick and the load average, because
the machine may be shared. CPU seconds are the children's user + system time. Prints; asserts nothing.
`--runs N` repeats ingest from empty (default 1: each costs about 30 s).

    python -m benchmarks.bench_ingest [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.bench_cold import PLAN, ROOT

INGEST = ["ingest", "--json"]


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one whole process (bench_cold's `seconds` gives the wall time only; ingest
    also needs its CPU time and its own report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ui.cli", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=900,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def show(name: str, values: list[tuple[float, float, str]], plan: float) -> None:
    wall = statistics.median(v[0] for v in values)
    cpu = statistics.median(v[1] for v in values)
    runs = ", ".join(f"{v[0]:.2f}" for v in values)
    line = f"  {name}: {wall:.2f} s wall, {cpu:.1f} CPU s ({wall / plan:.1f}x plan; runs {runs})"
    if name != "plan":  # the time ingest itself reports, without the process start
        line += (
            f"; ingest's own report {statistics.median(json.loads(v[2])['seconds'] for v in values):.2f} s"
        )
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k != "AUTORECIPE_EMBEDDING_EXPORT_DIR"}
    base["PYTHONPATH"] = str(ROOT)
    timings: dict[str, list[tuple[float, float, str]]] = {
        "plan": [],
        "ingest from empty": [],
        "re-ingest": [],
    }
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as data_dir:
            env = {**base, "AUTORECIPE_DATA_DIR": data_dir}
            timings["plan"].append(run(PLAN, env))
            timings["ingest from empty"].append(run(INGEST, env))
            for _ in range(3):
                timings["re-ingest"].append(run(INGEST, env))
            timings["plan"].append(run(PLAN, env))
    load_after = os.getloadavg()[0]
    plan = statistics.median(v[0] for v in timings["plan"])
    print(
        f"whole processes, medians; load average {load_before:.1f} -> {load_after:.1f} "
        f"on {os.cpu_count()} cores"
    )
    for name, values in timings.items():
        show(name, values, plan)
    print("targets: ingest from empty <= 30 s, re-ingest <= 1 s")


if __name__ == "__main__":
    main()
