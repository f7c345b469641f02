"""Scoring of the real-question set (golden/real.jsonl): questions mined from public upstream issues and PRs.

Pure, like evals/metrics.py: rows and answers in, checks and numbers out. Each check is a small metric class
with one `evaluate` method (the pattern of azure-search-openai-demo's evals), so a test can drive each one
with a hand-made answer. A row passes when the answer says what the maintainers said (must-include), claims
nothing they ruled out (must-not-include), is about what was asked (relevance), invents no identifier and
offers only commands the version accepts; where the row allows it, an honest "I don't know, see <file>"
passes instead of an answer.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assistant.answer import Answer
from assistant.rules.versions import BUNDLED_VERSIONS
from evals.metrics import (
    Gate,
    Thresholds,
    VersionFacts,
    answer_text,
    check_command,
    command_blocks,
    command_texts,
    invented_identifiers,
    launcher_argv,
)

Topic = Literal[
    "recipe_choice",
    "error_on_config",
    "intent_only",
    "variant",
    "capability",
    "checkpoint",
    "data_prep",
    "moe_dispatch",
    "comm_overlap",
    "fsdp",
    "recompute",
    "cuda_graphs",
    "microbatch",
    "seq_divisibility",
    "precision",
    "vlm",
    "fixed_later",
    "follow_up",
    "greeting",
]
Split = Literal["dev", "heldout"]

# The public upstreams a real question may come from (NeMo's issues live on under NVIDIA-NeMo/Speech).
SOURCE_RE = re.compile(
    r"^https://github\.com/(NVIDIA-NeMo/Megatron-Bridge|NVIDIA/Megatron-LM|NVIDIA-NeMo/Speech|NVIDIA/NeMo"
    r"|NVIDIA-NeMo/RL|verl-project/verl|volcengine/verl|modelscope/ms-swift)/(issues|pull|discussions)/\d+$"
)

# An honest abstention says it does not know (or that the knowledge base has nothing) ...
_ABSTAIN_RE = re.compile(
    r"\b(I (do not|don't) know|not (covered|answered|documented) (by|in)|nothing (in|relevant)|"
    r"no (answer|information) (in|about|on)|cannot answer|can't answer|outside what I know)\b"
    r"|不知道|无法回答|没有找到|未涵盖|没有相关|不在.{0,12}(知识库|范围)",
    re.IGNORECASE,
)
# ... and points at where the answer lives: a file path in the user's version or a docs address.
_POINTER_RE = re.compile(
    r"(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.(?:md|py|yaml|yml|sh|json)\b|https?://\S+|\bdocs/[\w./-]+", re.ASCII
)
_QUOTE_HEADING_RE = re.compile(r"^\*\*[^*\n]+\*\*\s*\[\d+\]\s*$")
_SOURCES_HEADING_RE = re.compile(r"^\s*\*\*(Sources|参考来源)\*\*\s*$", re.MULTILINE)
_SPACE_RE = re.compile(r"\s+")


# ---------------------------------------------------------------- rows


def _compiled(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as error:  # pydantic reports ValueErrors only
            raise ValueError(f"regex /{pattern}/ does not compile: {error}") from None
    return patterns


class RealChecks(BaseModel):
    """Derived from the maintainers' answer, never from the assistant's output."""

    model_config = ConfigDict(extra="forbid")

    must_include: list[str] = Field(min_length=1)
    must_not_include: list[str] = Field(default_factory=list)
    abstain_ok: bool = False  # "I don't know, see <file>" is an acceptable answer to this question

    @field_validator("must_include", "must_not_include")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return _compiled(patterns)


class RealRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str  # the public issue, PR or discussion the question and the answer come from
    question: str
    lang: Literal["en", "zh"]
    version: Literal[BUNDLED_VERSIONS]  # type: ignore[valid-type]  # Literal of a tuple: one of its items
    topic: Topic
    maintainer_answer: str  # one line, in our own words
    about: list[str] = Field(min_length=1)  # regexes; one must appear in the answer's own text
    checks: RealChecks
    split: Split
    turns: list[str] = Field(default_factory=list)  # earlier user messages of the same conversation
    version_note: str | None = None  # how the upstream release was mapped to a bundled one
    note: str | None = None

    @field_validator("source")
    @classmethod
    def _public_upstream(cls, source: str) -> str:
        if not SOURCE_RE.match(source):
            raise ValueError(f"not an issue, PR or discussion of a known upstream: {source}")
        return source

    @field_validator("about")
    @classmethod
    def _about_compiles(cls, patterns: list[str]) -> list[str]:
        return _compiled(patterns)


# ---------------------------------------------------------------- what the metrics read


def _normalised(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


def own_text(answer: Answer) -> str:
    """The assistant's own words: its Markdown without the quoted guide passages and the source list.

    A paragraph counts as quoted when it is a passage heading (`**Section** [n]`) or its text appears in a
    cited passage, so an answer cannot look relevant just by quoting a section that names the entity.
    """
    markdown = _SOURCES_HEADING_RE.split(answer.answer_markdown, maxsplit=1)[0]
    cited = [_normalised(c.text or "") for c in answer.citations if c.text]
    kept: list[str] = []
    for paragraph in re.split(r"\n\s*\n", markdown):
        flat = _normalised(paragraph)
        if not flat or _QUOTE_HEADING_RE.match(paragraph.strip()):
            continue
        if len(flat) >= 12 and any(flat in passage for passage in cited):
            continue
        kept.append(paragraph)
    return "\n\n".join(kept)


@dataclass(frozen=True)
class RealCase:
    """One answered row, with the texts each metric searches."""

    row: RealRow
    answer: Answer
    facts: VersionFacts
    shown: str  # Markdown + commands: what must-not-include searches
    with_follow_up: str  # ... + follow-up questions: what must-include searches
    own: str  # the assistant's own sentences + its commands: what relevance searches

    @classmethod
    def of(cls, row: RealRow, answer: Answer, facts: VersionFacts) -> RealCase:
        commands = "\n".join(v for _, v in command_texts(answer))
        return cls(
            row=row,
            answer=answer,
            facts=facts,
            shown=answer_text(answer, include_follow_up=False),
            with_follow_up=answer_text(answer, include_follow_up=True),
            own="\n".join(t for t in (own_text(answer), commands) if t),
        )


def _search(pattern: str, text: str) -> bool:
    """Case-insensitive with ASCII word rules, so `\\b92\\b` still matches `92层` in Chinese prose."""
    return re.search(pattern, text, re.IGNORECASE | re.MULTILINE | re.ASCII) is not None


# ---------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Check:
    metric: str
    passed: bool
    detail: str = ""


class RealMetric(Protocol):
    name: str

    def evaluate(self, case: RealCase) -> Check: ...


class MustInclude:
    """Every fact the maintainers' answer hinges on (a recipe, key, value or word) is in the answer."""

    name = "must_include"

    def evaluate(self, case: RealCase) -> Check:
        missing = [p for p in case.row.checks.must_include if not _search(p, case.with_follow_up)]
        return Check(self.name, not missing, "; ".join(f"missing /{p}/" for p in missing))


class MustNotInclude:
    """No claim the maintainers ruled out (an invented yes, a wrong limit) appears in the answer."""

    name = "must_not_include"

    def evaluate(self, case: RealCase) -> Check:
        hits = [p for p in case.row.checks.must_not_include if _search(p, case.shown)]
        return Check(self.name, not hits, "; ".join(f"forbidden /{p}/ present" for p in hits))


class Relevance:
    """The answer's own text (not only a quoted passage) is about the entity and topic asked about."""

    name = "relevance"

    def evaluate(self, case: RealCase) -> Check:
        ok = any(_search(p, case.own) for p in case.row.about)
        return Check(self.name, ok, "" if ok else f"own text mentions none of {case.row.about}")


class HonestAbstention:
    """The answer says it does not know and points at the file or doc where the answer lives."""

    name = "abstention"

    def evaluate(self, case: RealCase) -> Check:
        says = _ABSTAIN_RE.search(case.own) is not None
        points = _POINTER_RE.search(case.own) is not None
        return Check(self.name, says and points, "" if says and points else "no abstention with a pointer")


def launcher_flags_used(answer: Answer, facts: VersionFacts) -> set[str]:
    """The flags the answer passes to the version's own launchers (run_recipe.py, the benchmark script)."""
    used: set[str] = set()
    for block in command_blocks(answer):
        for script in (facts.launcher_script, facts.benchmark_script):
            for argv in launcher_argv(block, script) if script else []:
                used.update(token.split("=", 1)[0] for token in argv if token.startswith("--"))
    return used


class NoInventedIdentifiers:
    """Every recipe name, launcher flag and dataset preset exists in the row's version.

    Real questions about checkpoints and data are answered with other upstream tools (the conversion
    script, the data preprocessor); their flags cannot be judged against run_recipe.py, so a flag counts
    only where it is passed to one of the version's launchers.
    """

    name = "identifiers"

    def evaluate(self, case: RealCase) -> Check:
        user_text = "\n".join([*case.row.turns, case.row.question])
        judged = launcher_flags_used(case.answer, case.facts)
        invented = [
            i
            for i in invented_identifiers(case.answer, case.facts, user_text=user_text)
            if not i.startswith("flag:") or i.removeprefix("flag:") in judged
        ]
        return Check(self.name, not invented, "; ".join(f"invented {i}" for i in invented))


class ValidCommands:
    """Every launch command parses with the version's own launcher flags."""

    name = "commands"

    def evaluate(self, case: RealCase) -> Check:
        bad = []
        for kind, text in command_texts(case.answer):
            check = check_command(kind, text, case.facts)
            if check is not None and not check.valid:
                bad.append(f"invalid {kind} command: {check.detail}")
        return Check(self.name, not bad, "; ".join(bad))


METRICS: tuple[RealMetric, ...] = (
    MustInclude(),
    MustNotInclude(),
    Relevance(),
    HonestAbstention(),
    NoInventedIdentifiers(),
    ValidCommands(),
)


# ---------------------------------------------------------------- one row


class RealScore(BaseModel):
    id: str
    lang: str
    version: str
    topic: str
    split: str
    question: str
    checks: dict[str, bool] = Field(default_factory=dict)
    details: dict[str, str] = Field(default_factory=dict)
    abstain_ok: bool = False
    latency_ms: float | None = None
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.checks.get("must_include", False) and self.checks.get("relevance", False)

    @property
    def abstained(self) -> bool:
        return self.checks.get("abstention", False)

    @property
    def passed(self) -> bool:
        guards = all(self.checks.get(k, False) for k in ("must_not_include", "identifiers", "commands"))
        return self.error is None and guards and (self.answered or (self.abstain_ok and self.abstained))

    def failures(self) -> list[str]:
        if self.error:
            return [f"error: {self.error}"]
        excused = self.abstain_ok and self.abstained  # an honest abstention need not answer
        skip = {"abstention"} | ({"must_include", "relevance"} if excused else set())
        out = [self.details[k] or k for k, ok in self.checks.items() if not ok and k not in skip]
        if self.abstain_ok and not self.answered and not self.abstained:
            out.append("neither answered nor abstained with a pointer")
        return out


def score_real_row(
    row: RealRow,
    answer: Answer | None,
    facts: VersionFacts,
    *,
    latency_ms: float | None = None,
    error: str | None = None,
    metrics: Sequence[RealMetric] = METRICS,
) -> RealScore:
    score = RealScore(
        id=row.id,
        lang=row.lang,
        version=row.version,
        topic=row.topic,
        split=row.split,
        question=row.question,
        abstain_ok=row.checks.abstain_ok,
        latency_ms=latency_ms,
    )
    if answer is None:
        score.error = error or "no answer"
        return score
    case = RealCase.of(row, answer, facts)
    for metric in metrics:
        check = metric.evaluate(case)
        score.checks[check.metric] = check.passed
        score.details[check.metric] = check.detail
    return score


# ---------------------------------------------------------------- aggregation


def _rate(values: Iterable[bool]) -> float | None:
    vals = list(values)
    return round(sum(vals) / len(vals), 4) if vals else None


def _counts(scores: Sequence[RealScore]) -> dict[str, int | float | None]:
    passed = sum(s.passed for s in scores)
    return {"rows": len(scores), "passed": passed, "pass_rate": _rate(s.passed for s in scores)}


def _by(scores: Sequence[RealScore], key: str) -> dict[str, dict[str, int | float | None]]:
    groups: dict[str, list[RealScore]] = defaultdict(list)
    for s in scores:
        groups[getattr(s, key)].append(s)
    return {k: _counts(v) for k, v in sorted(groups.items())}


def _split_block(scores: Sequence[RealScore]) -> dict:
    answered = [s for s in scores if s.error is None]
    return {
        **_counts(scores),
        "relevance": _rate(s.checks.get("relevance", False) for s in answered),
        "must_include": _rate(s.checks.get("must_include", False) for s in answered),
        "must_not_violations": sum(not s.checks.get("must_not_include", True) for s in answered),
        "invented": sum(not s.checks.get("identifiers", True) for s in answered),
        "abstained": sum(s.abstained for s in answered),
        "errors": sum(s.error is not None for s in scores),
        "by_topic": _by(scores, "topic"),
        "by_lang": _by(scores, "lang"),
    }


def summarize_real(scores: Sequence[RealScore]) -> dict:
    """Pass counts and rates per split (dev, heldout), each also per topic and per language."""
    by_split: dict[str, list[RealScore]] = {"dev": [], "heldout": []}
    for s in scores:
        by_split[s.split].append(s)
    return {
        "rows": len(scores),
        "by_split": {name: _split_block(rows) for name, rows in by_split.items()},
    }


def real_gates(real: dict, thresholds: Thresholds) -> list[Gate]:
    """Only the dev split is gated: held-out rows are scored and reported, never a target."""
    value = real["by_split"]["dev"]["pass_rate"]
    minimum = thresholds.real_dev_pass_rate
    return [Gate("real_pass_rate[dev]", value, f">= {minimum}", value is not None and value >= minimum)]
