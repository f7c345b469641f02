"""Thumbs up/down on an answer, kept locally so a maintainer can turn a thumbs-down into a golden row.

One JSON object per line in `<data_dir>/feedback.jsonl`: the question, the whole answer JSON, the
version, the verdict and an optional comment. Each record is one `write` on an O_APPEND file followed by
fsync, so concurrent front ends never interleave or lose a line and a crash leaves whole lines only.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from assistant.errors import UserError
from assistant.records import Record
from assistant.settings import Settings

FILE_NAME = "feedback.jsonl"
MAX_COMMENT = 2_000

Verdict = Literal["up", "down"]


class FeedbackEntry(Record):
    at: str
    source: str  # which front end: gradio, slack, cli
    verdict: Verdict
    question: str
    version: str
    answer: dict[str, Any]
    comment: str = ""


def feedback_path(settings: Settings) -> Path:
    return settings.data_dir / FILE_NAME


def record_feedback(
    settings: Settings,
    *,
    question: str,
    answer: dict[str, Any],
    verdict: Verdict,
    source: str,
    comment: str = "",
) -> Path | None:
    """Append one entry; None (nothing written) when the feedback setting is off."""
    if not settings.feedback:
        return None
    entry = FeedbackEntry(
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        source=source,
        verdict=verdict,
        question=question,
        version=str(answer.get("version", "")),
        answer=answer,
        comment=comment.strip()[:MAX_COMMENT],
    )
    path = feedback_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def read_feedback(settings: Settings) -> list[FeedbackEntry]:
    """Every stored entry, oldest first; a line that does not parse is skipped rather than fatal."""
    path = feedback_path(settings)
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UserError(f"cannot read {path}: {error}") from error
    entries = []
    for line in lines:
        try:
            entries.append(FeedbackEntry.model_validate_json(line))
        except ValueError:
            continue
    return entries


def golden_row(entry: FeedbackEntry) -> dict[str, Any]:
    """A starting point for evals/golden/qa.jsonl: the maintainer fills `expected` from the catalog."""
    return {
        "id": f"feedback-{entry.at}",
        "question": entry.question,
        "lang": entry.answer.get("language", "en"),
        "version": entry.version,
        "category": "feedback",
        "expected": {},
        "note": f"thumbs {entry.verdict}: {entry.comment}".strip(),
    }
