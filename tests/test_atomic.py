"""The atomic writer: whole content or the old file, normal permissions, and no other hand-written writer."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from ingest import atomic
from ingest.atomic import write_atomic

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def umask():
    """Set the process umask for one test and put the old one back."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


def test_it_writes_text_and_bytes_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    text = tmp_path / "deep" / "table.json"
    assert write_atomic(text, '{"π": 3.14}\n') == text
    assert text.read_text(encoding="utf-8") == '{"π": 3.14}\n'
    blob = write_atomic(tmp_path / "chart.png", b"\x89PNG\x00")
    assert blob.read_bytes() == b"\x89PNG\x00"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["chart.png", "deep", "table.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failure_keeps_the_old_file_intact(tmp_path: Path, monkeypatch, failing: str) -> None:
    target = tmp_path / "catalog.json"
    target.write_text("old, complete\n")

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, failing, crash)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new " * 10_000)
    assert target.read_text() == "old, complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["catalog.json"]


def test_permissions_follow_the_umask_like_open(tmp_path: Path, umask) -> None:
    target = tmp_path / "model.json"
    target.write_text("{}")
    target.chmod(0o600)  # what the old mkstemp writer left behind
    write_atomic(target, "{}")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    umask(0o077)
    write_atomic(target, "{}")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_no_other_module_hand_writes_a_temp_file_and_rename() -> None:
    signs = ["mkstemp", "NamedTemporaryFile", r'with_suffix\("\.tmp"\)', "_atomic_write", "_write_atomic"]
    hand_written = re.compile("|".join(signs))
    sources = [p for d in ("assistant", "ingest", "ui", "evals") for p in (REPO / d).rglob("*.py")]
    found = [p for p in sources if p.name != "atomic.py" and hand_written.search(p.read_text())]
    assert [str(p.relative_to(REPO)) for p in found] == []
