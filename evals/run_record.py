"""The record of one evaluation run, shared by evals/run.py (which fills it) and evals/report.py (which
writes it), so neither imports the other's module for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.metrics import RetrievalScore, RowScore, Summary
from evals.real import RealScore


@dataclass
class EvalRun:
    scores: list[RowScore]
    retrieval: list[RetrievalScore] | None
    summary: Summary
    answers: dict[str, dict[str, Any]]
    real: list[RealScore] | None = None  # the real-question rows, when that set ran
