"""Benchmark: the time each hostile input of tests/adversarial/ takes (issue 20).

Targets (2 cores): in process, no input over 5 s; through the CLI, no input more than 5 s beyond a plain cold
answer (`ask` of an ordinary question, whole process, median of 3 from the same run; the cold `plan` is
printed beside it as the yardstick). In-process figures are CPU seconds of this process (`time.process_time`),
so other work on a shared machine does not inflate them; wall seconds are printed too. Uses the index in
AUTORECIPE_DATA_DIR when there is one. Prints; asserts nothing (the tests check the messages).

    python -m benchmarks.bench_adversarial [--no-cli]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assistant.rules.versions import DEFAULT_VERSION
from assistant.service import ask
from assistant.settings import get_settings
from benchmarks.bench_cold import PLAN, ROOT, seconds
from tests.adversarial.test_bounds import CLI_CASES as BOUND_CLI_CASES
from tests.adversarial.test_bounds import SERVICE_CASES
from tests.adversarial.test_corpus import QUESTIONS, _cli_cases
from ui.gradio_app import respond

TARGET_IN_PROCESS_S = 5.0
TARGET_CLI_EXCESS_S = 5.0
PLAIN_ASK = ["ask", "Llama3 8B SFT on 8 H100"]
# Issue 20's heaviest messages, beyond the corpus: 1,000 listed setups and a huge TP through `check`.
EXTRA_QUESTIONS = [
    "cases: " + ", ".join(f"Llama3 8B SFT on {n} H100" for n in range(1, 1001)),
    "check llama3_8b_sft_config on 8 H100 model.tensor_model_parallel_size=99999999999999999999",
]
EXTRA_CLI = [
    [
        "check",
        "--recipe",
        "llama3_8b_sft_config",
        "--gpus",
        "8",
        "model.tensor_model_parallel_size=" + "9" * 20,
    ],
    ["ask", "Llama3 8B SFT on 999999999999 nodes"],
]


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def in_process() -> None:
    ask("Llama3 8B SFT on 8 H100")  # imports, catalog, index: paid once, as by a running front end
    questions = [q for q, *_ in SERVICE_CASES] + [q for q, *_ in QUESTIONS] + EXTRA_QUESTIONS
    rows = [("service", q, *_timed(lambda q=q: ask(q))) for q in questions]
    rows += [
        ("gradio", q, *_timed(lambda q=q: list(respond(q, [], DEFAULT_VERSION, "auto", get_settings()))))
        for q, *_ in QUESTIONS[:8]
    ]
    front_end, question, cpu_s, _ = max(rows, key=lambda row: row[2])
    wall_s = max(row[3] for row in rows)
    median_ms = statistics.median(row[2] for row in rows) * 1000
    print(
        f"in process, {len(rows)} hostile inputs (service and Gradio handler): max {cpu_s:.2f} CPU s / "
        f"{wall_s:.2f} wall s (target <= {TARGET_IN_PROCESS_S:.0f} s), median {median_ms:.0f} CPU ms; "
        f"slowest: {front_end} {question[:70]!r}"
    )


def through_cli() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = statistics.median(seconds(PLAIN_ASK, env) for _ in range(3))
    plan = statistics.median(seconds(PLAN, env) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        cases = (
            [args for args, _ in _cli_cases(Path(tmp))] + [args for args, _ in BOUND_CLI_CASES] + EXTRA_CLI
        )
        timings = []
        for args in cases:
            started = time.perf_counter()
            # Bad input exits non-zero by design: time the process, whatever its code.
            subprocess.run(
                [sys.executable, "-m", "ui.cli", *args], cwd=ROOT, env=env, capture_output=True, timeout=600
            )
            timings.append((time.perf_counter() - started, args))
    worst, worst_args = max(timings, key=lambda row: row[0])
    print(
        f"through the CLI, {len(timings)} hostile inputs: max {worst:.2f} s = plain cold answer "
        f"{plain:.2f} s "
        f"+ {worst - plain:.2f} s (target <= +{TARGET_CLI_EXCESS_S:.0f} s); "
        f"median {statistics.median(t for t, _ in timings):.2f} s; slowest: {' '.join(worst_args)[:90]!r}; "
        f"yardstick cold `plan` {plan:.2f} s"
    )


def main() -> None:
    load = os.getloadavg()[0]
    in_process()
    if "--no-cli" not in sys.argv:
        through_cli()
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
