"""The answer record: what `autorecipe ask --json` prints and every front end renders.

It lives apart from `assistant.records` because its parts (the fit verdict, the estimator's results) are
records of the rule and estimator layers, which themselves build on `assistant.records`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assistant.estimate.throughput import ThroughputEstimate
from assistant.planning.search import NearestFit, RankedLayout
from assistant.records import (
    Citation,
    Commands,
    Finding,
    Intent,
    Override,
    Plan,
    RecipeRecord,
    Record,
    Slots,
)
from assistant.rules.fit import FitVerdict


class PeftAlternative(Record):
    """Full fine-tuning does not fit the GPUs; the model's LoRA recipe does."""

    recipe: str  # the LoRA recipe's name
    plan: Plan
    fit: FitVerdict | None = None
    commands: Commands


def _absent(value: object) -> bool:
    return value is None


class AnswerEstimate(Record):
    """Estimator output; a part that was not computed is absent from the JSON (not null)."""

    throughput: ThroughputEstimate | None = Field(None, exclude_if=_absent)  # the plan's estimated speed
    # Nothing fits: how far off, and the fewest GPUs that fit.
    nearest_fit: NearestFit | None = Field(None, exclude_if=_absent)
    # A searched layout faster than the recipe's on these GPUs.
    faster_layout: RankedLayout | None = Field(None, exclude_if=_absent)
    searched_best: RankedLayout | None = Field(None, exclude_if=_absent)  # asked for the fastest layout
    peft_alternative: PeftAlternative | None = Field(None, exclude_if=_absent)


class Answer(Record):
    """What `autorecipe ask --json` prints; the Gradio panel, Slack blocks, MCP tools and evals read it."""

    language: Literal["en", "zh"]
    intent: Intent
    slots: Slots
    version: str
    recipe: RecipeRecord | None = None
    dataset: str | None = None
    plan: Plan | None = None
    commands: Commands = Field(default_factory=Commands)
    overrides: list[Override] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    checklist: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    fit: FitVerdict | None = None
    estimate: AnswerEstimate | None = None
    answer_markdown: str
    follow_up: list[str] = Field(default_factory=list)
    llm_used: bool = False
    # "llm" when the shown text is the guard-checked LLM rephrasing; else why the computed text is shown.
    phrasing: Literal["deterministic", "llm"] = "deterministic"
    phrasing_reason: str | None = None
    cases: list[Answer] = Field(default_factory=list)  # one answer per setup when a question lists several
    notices: list[str] = Field(default_factory=list)  # one-line notices: no citations, time budget spent
    # One line when the answered version is not the one selected: the question named another, or the
    # asked one is not bundled and a nearby release answers (assistant/version_resolve.py).
    version_note: str | None = None
