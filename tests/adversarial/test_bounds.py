"""Inputs past the documented bounds are refused with a clear message, quickly, through the service and
the CLI; the algorithms they used to drive (divisors, mesh fixes) no longer depend on the magnitude."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assistant.bounds import MAX_GPUS, MAX_QUESTION_CHARS, MAX_SETUPS
from assistant.rules.findings import divisors
from assistant.service import ask
from assistant.settings import Settings

pytestmark = pytest.mark.integration  # the whole answer service under hostile input

TIME_BOUND_S = 30  # a hang fails here; speed itself is measured in benchmarks, not asserted

TWENTY_SETUPS = "cases: " + ", ".join(f"Llama3 8B SFT on {n} H100" for n in range(1, 21))
SERVICE_CASES = [
    ("Llama3 8B SFT on 1000000000000 H100", "no larger than 1,048,576"),
    ("Llama3 8B SFT on 999999999999 nodes", "no larger than 1,048,576"),
    ("用 1000000000000 张 H100 做 Llama3 8B SFT", "GPU 数量必须在 1 到 1,048,576"),
    ("x" * (MAX_QUESTION_CHARS + 1), "the limit is 8,000"),
    (TWENTY_SETUPS, f"at most {MAX_SETUPS} are answered at once"),
]


@pytest.mark.timeout(TIME_BOUND_S)
@pytest.mark.parametrize(("question", "message"), SERVICE_CASES, ids=[m for _, m in SERVICE_CASES])
def test_the_service_refuses_past_the_bounds(tmp_path, question, message):
    answer = ask(question, settings=Settings(data_dir=tmp_path))
    assert message in answer.answer_markdown
    assert answer.recipe is None and not answer.commands.to_json().get("torchrun")


CLI_CASES = [
    (["plan", "--recipe", "llama3_8b_sft_config", "--gpus", "1000000000000"], "no larger than 1,048,576"),
    (["check", "--recipe", "llama3_8b_sft_config", "--gpus", str(MAX_GPUS + 1)], "no larger than 1,048,576"),
    (["plan", "--recipe", "llama3_8b_sft_config", "--gpus", "8", "--gpus-per-node", "100000"], "per node"),
]


@pytest.mark.timeout(TIME_BOUND_S)
@pytest.mark.parametrize(("args", "message"), CLI_CASES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CLI_CASES])
def test_the_cli_refuses_past_the_bounds(args, message):
    command = [sys.executable, "-m", "ui.cli", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.timeout(TIME_BOUND_S)
def test_a_huge_tensor_parallel_size_gets_a_computed_fix():
    done = subprocess.run(
        [sys.executable, "-m", "ui.cli", "check", "--recipe", "llama3_8b_sft_config", "--gpus", "8", "--json",
         "model.tensor_model_parallel_size=99999999999999999999"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert "model.tensor_model_parallel_size=" in done.stdout and "error" in done.stdout


@pytest.mark.parametrize("value", [1, 2, 12, 36, 97, 2**20, 10**12, 2**40 + 15])
def test_divisors_are_every_divisor_in_order(value):
    found = divisors(value)
    assert found == sorted(found) and found[0] == 1 and found[-1] == value
    assert all(value % d == 0 for d in found)
    if value <= 10**6:
        assert found == [d for d in range(1, value + 1) if value % d == 0]
