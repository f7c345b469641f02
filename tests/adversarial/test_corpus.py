"""The hostile-input corpus (issue 20, item 7): each input, the clear message it must get, run through the
service, the Gradio handler and the CLI. No input may end in an internal error, a traceback or a confident
wrong answer. Time per input is printed by benchmarks/bench_adversarial.py (load: bench_load.py); the timeouts
here only catch a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.service import ask
from assistant.settings import Settings

HANG_GUARD_S = 120

# (question, a phrase the answer must contain, whether the answer may still carry a plan)
QUESTIONS = [
    ("Llama3 8B SFT on -8 H100", "cannot be negative", False),
    ("用 -8 张 H100 做 Llama3 8B SFT", "不能为负数", False),
    ("Llama3 8B SFT on 10**12 H100", "not as a power or an exponent", False),
    ("Llama3 8B SFT on 1e12 H100", "not as a power or an exponent", False),
    ("Llama3 8B SFT on 10^6 GPUs", "not as a power or an exponent", False),
    ("llama3_8b_super_turbo_config on 8 H100", "no recipe named 'llama3_8b_super_turbo_config'", False),
    ("llama3_8b_super_turbo_config on 8 H100", "Closest names: llama3_8b_", False),
    ("check qwen3_999b_sft_config on 16 H100", "no recipe named 'qwen3_999b_sft_config'", False),
    ("Llama3 8B SFT on 8 H100 \udcff\udcfe", "not valid text", True),
    ("Llama3 8B \ud800 SFT on 8 H100", "not valid text", True),
    ("Llama3 8B SFT on 1000000000000 H100", "no larger than 1,048,576", False),
    (
        "Llama3 8B pretraining on 8 H100 seq_length=1000000000000",
        "sequence length must be between",
        False,
    ),
    # a size past any GPU count in a question form that reads sizes (assistant/intent_form.py)
    ("Qwen3 30B-A3B on 16 H100: why does it still run with EP=" + "9" * 5000 + "?", "**not valid**", False),
    ("\x00\x01\x02", "Tell me the model", False),
    ("   ", "Tell me the model", False),
]


def _assert_clear(text: str) -> None:
    lowered = text.lower()
    assert "traceback" not in lowered and "internal error" not in lowered
    assert "validation error" not in lowered  # pydantic's wording, never the user's


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("no-index"))


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize(("question", "message", "may_plan"), QUESTIONS, ids=[m for _, m, _ in QUESTIONS])
@pytest.mark.integration
def test_the_service_gives_a_clear_message(settings, question, message, may_plan):
    answer = ask(question, settings=settings)
    _assert_clear(answer.answer_markdown)
    assert message in answer.answer_markdown
    if not may_plan:
        assert answer.plan is None and not answer.commands.to_json().get("torchrun")
    json.dumps(answer.to_json(), ensure_ascii=False).encode("utf-8")  # printable: no lone surrogate left


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize("lang", ["fr", "", "EN", None, 7])
@pytest.mark.integration
def test_an_unsupported_answer_language_falls_back_with_a_notice(settings, lang):
    answer = ask("Llama3 8B SFT on 8 H100", lang=lang, settings=settings)
    assert answer.recipe is not None and answer.language == "en"
    assert answer.notices and "answers are in English or Chinese" in answer.notices[0]


SPECS = {
    "negative-ffn": ({"ffn_hidden_size": -1}, "model.ffn_hidden_size must be a whole number from 1"),
    "string-layers": ({"num_layers": "32"}, "model.num_layers must be a whole number from 1"),
    "list-hidden": ({"hidden_size": [4096]}, "model.hidden_size must be a whole number from 1"),
    "bool-heads": ({"num_attention_heads": True}, "model.num_attention_heads must be a whole number"),
    "zero-vocab": ({"vocab_size": 0}, "model.vocab_size must be a whole number from 1"),
    "huge-seq": ({"seq_length": 10**12}, "model.seq_length must be a whole number from 1 to 16,777,216"),
    "float-tp": ({"tensor_model_parallel_size": 2.5}, "model.tensor_model_parallel_size must be a whole"),
    "sp-string": ({"sequence_parallel": "yes"}, "model.sequence_parallel must be true or false"),
}
GOOD_MODEL = {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 128256,
              "seq_length": 8192, "ffn_hidden_size": 14336}  # fmt: skip


def _spec_files(root: Path) -> list[tuple[Path, str]]:
    files = []
    for name, (change, message) in SPECS.items():
        path = root / f"{name}.json"
        path.write_text(json.dumps({"model": {**GOOD_MODEL, **change}, "train": {"global_batch_size": 64}}))
        files.append((path, message))
    raw = {
        "nan": ('{"model": {"num_layers": NaN, "hidden_size": 4096}}', "NaN is not a number JSON allows"),
        "infinity": ('{"model": {"num_layers": Infinity}}', "Infinity is not a number JSON allows"),
        "deep": ('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests too deeply"),
        "nested-ten": ('{"model": {"a": ' + "[" * 10 + "]" * 10 + "}}", "nests too deeply"),
        "train-list": ('{"model": {"num_layers": 2}, "train": [1]}', "train must be an object"),
        "not-json": ("{model: 1", "is not valid JSON"),
        "top-level-list": ("[1, 2]", 'needs a "model" object'),
        "binary": ("\udcff\udcfe", "is not UTF-8 text"),
    }
    for name, (text, message) in raw.items():
        path = root / f"{name}.json"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        files.append((path, message))
    return files


def _cli(args: list[str], data_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "AUTORECIPE_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "ui.cli", *args]
    return subprocess.run(command, capture_output=True, timeout=HANG_GUARD_S, env=env)


def _cli_cases(root: Path) -> list[tuple[list[str], str]]:
    base = ["--recipe", "llama3_8b_sft_config", "--gpus", "8"]
    batch = root / "batch.jsonl"
    batch.write_bytes(
        b'{"id": 1, "question": "Llama3 8B SFT on 8 H100 \\ud800"}\n'
        b"\xff\xfe not utf-8\n"
        b'{"id": 3, "question": "' + b"a" * 70_000 + b'"}\n'
        b'{"id": 4, "question": "LoRA Llama 3 8B on one GPU"}\n'
    )
    return [
        (["estimate", *base, "--gpus-per-node", "0"], "GPUs per node must be positive"),
        (["estimate", *base, "--gpus-per-node", "-1"], "GPUs per node must be positive"),
        (["plan", *base, "--gpus-per-node", "0"], "GPUs per node must be positive"),
        (["check", *base, "--gpus-per-node", "-1"], "GPUs per node must be positive"),
        (["estimate", *base, "--search", "--top-k", "-1"], "--top-k must be between 1 and 50"),
        (["estimate", *base, "--tokens", "nan"], "--tokens must be a positive number"),
        (["estimate", *base, "--tokens", "-5"], "--tokens must be a positive number"),
        (["estimate", *base, "--tokens", "inf"], "--tokens must be a positive number"),
        (["check", *base, "train.global_batch_size=1e400"], "train.global_batch_size must be an integer"),
        (["check", *base, "train.global_batch_size=nan"], "train.global_batch_size must be an integer"),
        (["check", *base, "--seq-len", "1000000000000"], "sequence length must be between 1 and 16,777,216"),
        (["plan", *base, "--seq-len", "0"], "sequence length must be between 1"),
        (["plan", "--recipe", "llama3_8b_super_turbo_config", "--gpus", "8"], "Closest names"),
        (["ask", "Llama3 8B SFT on -8 H100"], "cannot be negative"),
        (["ask", "Llama3 8B SFT on 10**12 H100"], "not as a power or an exponent"),
        (["ask", "Llama3 8B SFT on 8 H100 \udcff"], "not valid text"),
        (["ask", "--json", "llama3_8b_super_turbo_config on 8 H100"], "no recipe named"),
        (["ask", "--batch", str(batch)], "a batch line is at most 65,536"),
        (["ask", "--batch", str(batch)], "the line is not UTF-8 text"),
        (["search", "tensor parallel", "--k", "-1"], "--k"),
        *[(["estimate", "--spec", str(path), "--gpus", "8"], message) for path, message in _spec_files(root)],
    ]


@pytest.mark.integration  # one CLI process per bad input: 190 s of the fast set
@pytest.mark.timeout(HANG_GUARD_S * 40)
def test_the_cli_gives_a_clear_message_for_every_bad_input(tmp_path):
    failures = []
    for args, message in _cli_cases(tmp_path):
        done = _cli(args, tmp_path / "data")
        out = (done.stdout + done.stderr).decode("utf-8", "replace")
        if "Traceback" in out or "internal error" in out or message not in out:
            failures.append(f"{' '.join(args)[:120]}: rc={done.returncode} {out[-400:]}")
    assert failures == []


@pytest.mark.integration  # the CLI end to end in a process
@pytest.mark.timeout(HANG_GUARD_S)
def test_a_batch_goes_on_past_its_bad_lines(tmp_path):
    args, _ = next(case for case in _cli_cases(tmp_path) if case[0][:2] == ["ask", "--batch"])
    done = _cli(args, tmp_path / "data")
    rows = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert [row.get("id") for row in rows] == [1, None, None, 4]
    assert rows[0]["recipe"]["name"] == "llama3_8b_sft_config" and "not valid text" in rows[0]["notices"][0]
    assert rows[3]["recipe"] is not None
    assert "2 line(s) could not be answered" in done.stderr.decode("utf-8")


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.integration
def test_a_refused_turn_leaves_the_conversation_as_it_was(settings):
    from assistant.session import Conversation

    conversation = Conversation()
    ask("Llama3 8B SFT on 8 H100", conversation=conversation, settings=settings)
    for bad in ("and with seq_length=1000000000000?", "and llama3_8b_super_turbo_config?", "x" * 9_000):
        refused = ask(bad, conversation=conversation, settings=settings)
        assert refused.plan is None and "I cannot use part of this request" in refused.answer_markdown
    after = ask("and with 16 GPUs?", conversation=conversation, settings=settings)
    assert after.slots.model_stem == "llama3_8b" and after.slots.num_gpus == 16 and after.plan is not None
    assert after.slots.seq_length is None
