"""The JSON shape of `ask --json` is a contract: key paths, their order and value types stay as pinned.

The pinned shapes (tests/fixtures/answer_json_shape.json) were recorded from the untyped Answer before the
typed records replaced its dicts; a renamed, dropped, reordered or retyped key fails here, an added one
does not. The full content of every
golden answer is compared by `python -m evals.answer_snapshot --diff BEFORE AFTER`.
Re-record (only for an intended, announced contract change): `python -m tests.test_answer_json`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant.service import ask
from assistant.session import Conversation
from assistant.settings import Settings
from evals.run import DEFAULT_SET, load_golden

# runs the whole answer service on one golden row per answer kind: 35 s of the fast set
pytestmark = pytest.mark.integration

SHAPE_FILE = Path(__file__).parent / "fixtures" / "answer_json_shape.json"
# One row per answer kind: several setups in one question, a recommendation with a faster layout, one
# with fit and speed, a LoRA alternative, the fewest GPUs that fit, the fastest layout (zh), a config check,
# an error message, a conversation (zh), a version comparison, a decline.
SHAPE_ROWS = (
    "upstream-060-en-combined",
    "tree-en-deepseek-v3-1024",
    "tree-en-qwen3-8b-sft-8gpu",
    "ovr-en-qwen3-moe-4gpu",
    "adv-en-dsv3-2gpus",
    "est-zh-fastest-layout-70b-gb200-mxfp8",
    "est-en-valid-but-oom-70b-16k",
    "troubleshoot-en-glm45-pp8-broken",
    "multi-zh-lora-then-1gpu",
    "ver-en-qwen3-30b-compare",
    "adv-zh-weather",
)


def key_paths(value: Any, path: str = "") -> list[str]:
    """Every "path: type" in the value, in first-seen order; list items share the path `key[]`."""
    seen: dict[str, None] = {}
    if isinstance(value, dict):
        seen[f"{path or '.'}: object"] = None
        for key, item in value.items():
            seen.update(dict.fromkeys(key_paths(item, f"{path}.{key}")))
    elif isinstance(value, list):
        seen[f"{path}: array"] = None
        for item in value:
            seen.update(dict.fromkeys(key_paths(item, f"{path}[]")))
    else:
        seen[f"{path}: {type(value).__name__}"] = None
    return list(seen)


def answer_shapes(settings: Settings) -> dict[str, list[str]]:
    rows = {row.id: row for row in load_golden(DEFAULT_SET)}
    shapes: dict[str, list[str]] = {}
    for row_id in SHAPE_ROWS:
        row = rows[row_id]
        conversation = Conversation() if row.turns else None
        for turn in row.turns:
            ask(turn, version=row.version, conversation=conversation, settings=settings)
        answer = ask(row.question, version=row.version, conversation=conversation, settings=settings)
        # Through the JSON text, as `ask --json` prints it (a float that is whole stays a float).
        shapes[row_id] = key_paths(json.loads(json.dumps(answer.to_json())))
    return shapes


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> dict[str, list[str]]:
    return answer_shapes(Settings(data_dir=tmp_path_factory.mktemp("no-index")))


@pytest.mark.parametrize("row_id", SHAPE_ROWS)
def test_answer_json_shape_is_pinned(row_id: str, shapes: dict[str, list[str]]) -> None:
    """Keys may be added (the contract is "add, don't rename"); every pinned path stays, in its order."""
    pinned = json.loads(SHAPE_FILE.read_text(encoding="utf-8"))[row_id]
    missing = [path for path in pinned if path not in shapes[row_id]]
    assert missing == []
    assert [path for path in shapes[row_id] if path in set(pinned)] == pinned


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as empty:
        recorded = answer_shapes(Settings(data_dir=Path(empty)))
    SHAPE_FILE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.write(
        f"{sum(map(len, recorded.values()))} key paths over {len(recorded)} answers -> {SHAPE_FILE}\n"
    )
