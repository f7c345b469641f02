"""The CLI as a training engineer meets it (issue 21): wrong keys and numbers refused with the closest real
ones, copyable identifiers at 80 and 200 columns, help on every option, a busy port named."""

from __future__ import annotations

import json
import re
import socket

import click
import pytest
import typer
from typer.testing import CliRunner

from assistant.errors import UserError
from ui.cli import app

pytestmark = pytest.mark.integration  # CLI commands end to end on the bundled catalogs
runner = CliRunner()
WIDTHS = ("80", "200")


def run(*args: str, columns: str = "200") -> tuple[int, str, BaseException | None]:
    result = runner.invoke(app, list(args), env={"COLUMNS": columns})
    return result.exit_code, result.output, result.exception


def refused(*args: str) -> str:
    code, _, error = run(*args)
    assert isinstance(error, UserError), (args, error)
    return str(error)


@pytest.mark.parametrize("command", ["check", "plan", "estimate"])
@pytest.mark.parametrize(
    ("override", "closest"),
    [
        ("model.tensor_model_paralel_size=2", "model.tensor_model_parallel_size"),
        ("trian.global_batch_size=7", "train.global_batch_size"),
        ("foo.bar=1", None),
        ("__class__.__init__=1", None),
        ("foo=1", None),
    ],
)
def test_unknown_override_keys_are_refused_with_closest(
    command: str, override: str, closest: str | None
) -> None:
    message = refused(command, "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", override)
    assert "unknown override key" in message and override.split("=")[0] in message
    if closest:
        assert f"closest: {closest}" in message
    else:
        assert "no similar key" in message


def test_ask_refuses_unknown_key_in_question() -> None:
    from assistant.service import ask

    question = "is this valid: llama3_8b_pretrain_config 8 H100 model.tensor_model_paralel_size=2"
    answer = ask(question)
    assert "model.tensor_model_paralel_size" in answer.answer_markdown
    assert "closest: model.tensor_model_parallel_size" in answer.answer_markdown


def test_real_keys_pass_and_check_gives_the_memory_verdict() -> None:
    code, out, _ = run(
        "check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "train.train_iters=10"
    )
    assert code == 0, out
    assert re.search(r"memory: \S+.* GB of [\d.]+ GB usable", out)
    data = json.loads(run("check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--json")[1])
    assert data["fit"]["status"] in ("fits", "does-not-fit", "unknown") or data["fit"]["status"]


@pytest.mark.parametrize("command", ["plan", "check"])
def test_bad_numbers_refused(command: str) -> None:
    """--seq-len is bounded in one place (check_plan._inputs) for both commands."""
    assert "the sequence length must be between 1 and" in refused(
        command, "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--seq-len", "0"
    )


def test_version_flag() -> None:
    code, out, _ = run("--version")
    assert code == 0 and re.fullmatch(r"autorecipe \d+\.\d+\.\d+\S*\n", out)


def test_every_option_has_help() -> None:
    missing: list[str] = []

    def walk(command: click.Command, path: str) -> None:
        for param in command.params:
            if param.name != "help" and not getattr(param, "help", None):
                missing.append(f"{path} {param.name}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "autorecipe")
    assert not missing


def test_mode_lora_and_family() -> None:
    lora = json.loads(run("recipes", "list", "--mode", "lora", "--family", "llama", "--json")[1])
    assert lora and {r["mode"] for r in lora} == {"peft"}
    assert "did you mean llama" in refused("recipes", "list", "--family", "lama")
    nope = refused("recipes", "list", "--family", "nope")
    assert "did you mean" not in nope and "families:" in nope
    assert "Closest names" not in refused("recipes", "show", "nope")


def test_busy_port_is_named() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        message = refused("chat", "--port", port)
    assert "busy" in message and "--port" in message and "GRADIO_SERVER_PORT" in message


@pytest.mark.parametrize("columns", WIDTHS)
def test_recipe_names_stay_whole(columns: str) -> None:
    names = [r["name"] for r in json.loads(run("recipes", "list", "--family", "qwen", "--json")[1])]
    code, out, _ = run("recipes", "list", "--family", "qwen", columns=columns)
    assert code == 0
    assert all(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", out) for name in names)
    assert all(len(line) <= int(columns) for line in out.splitlines() if "config" not in line)
    assert "None" not in out


@pytest.mark.parametrize("columns", WIDTHS)
def test_plan_and_diff_keep_identifiers(columns: str) -> None:
    code, out, _ = run("plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", columns=columns)
    assert code == 0 and "None" not in out
    assert "model.recompute_granularity=full" in out
    changes = json.loads(
        run("recipes", "diff", "llama3_8b_pretrain_config", "--from", "0.3.1", "--to", "0.6.0", "--json")[1]
    )
    code, out, _ = run("recipes", "diff", "llama3_8b_pretrain_config", "--from", "0.3.1", "--to", "0.6.0",
                       columns=columns)  # fmt: skip
    assert code == 0 and all(change["field"] in out for change in changes)
    assert "…" not in out


@pytest.mark.parametrize("columns", WIDTHS)
def test_ask_renders_line_breaks_and_wraps_commands(columns: str) -> None:
    code, out, _ = run("ask", "llama3 8b pretrain on 8 H100", columns=columns)
    assert code == 0
    lines = [line.strip() for line in out.splitlines()]
    assert any(line.startswith("Recipe defaults:") for line in lines)  # its own line, not run together
    launch = [line for line in lines if "torch.distributed.run" in line]
    assert launch and launch[0].endswith("\\")
    assert any(line.startswith("--recipe llama3_8b_pretrain_config") for line in lines)


def test_one_memory_unit_everywhere() -> None:
    """GB (10^9 bytes) in estimate, plan and check, as in the chat; never GiB."""
    est = run("estimate", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8")[1]
    plan = run("plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8")[1]
    assert "GiB" not in est + plan
    usable = re.search(r"of ([\d.]+) GB usable", est).group(1)
    assert f"of {usable} GB usable" in plan
