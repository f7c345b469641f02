"""Benchmark: one answer from a fresh process, next to `plan` from the same run (issue 22).

Target: cold `ask` at most 3x the cold `plan`. Whole processes (`python -m ui.cli ...`), interleaved, median
of 5 each; the load average is printed because the machine may be shared. Uses the index in
AUTORECIPE_DATA_DIR (run `autorecipe ingest` first). `--fallback` adds `ask` with no ONNX export
(sentence-transformers). Prints; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5
PLAN = ["plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--json"]
CHECK = ["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--json"]
ASK = ["ask", "Qwen3 30B-A3B SFT on 16 H100", "--json"]


def seconds(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ui.cli", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return time.perf_counter() - started


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = {"plan": PLAN, "check": CHECK, "ask": ASK}
    with tempfile.TemporaryDirectory() as empty:
        if "--fallback" in sys.argv:
            commands["ask (no export: sentence-transformers)"] = ASK
        timings: dict[str, list[float]] = {name: [] for name in commands}
        load_before = os.getloadavg()[0]
        for _ in range(RUNS):
            for name, args in commands.items():
                run_env = {**env, "AUTORECIPE_EMBEDDING_EXPORT_DIR": empty} if "no export" in name else env
                timings[name].append(seconds(args, run_env))
        load_after = os.getloadavg()[0]
    plan = statistics.median(timings["plan"])
    print(
        f"cold processes, median of {RUNS}; "
        f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} cores"
    )
    for name, values in timings.items():
        print(
            f"  {name}: {statistics.median(values):.2f} s ({statistics.median(values) / plan:.1f}x plan; "
            f"runs {', '.join(f'{v:.2f}' for v in values)})"
        )
    print("target: ask <= 3.0x plan")


if __name__ == "__main__":
    main()
