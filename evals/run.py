"""Batch runner: ask every golden question, score it, run the retrieval set, write the report, apply the gate.

Everything the runner calls out to (the answer function, the catalog, the retriever, the conversation
factory) is a parameter, so a test can drive it with a deliberately broken assistant.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from assistant.answer import Answer
from assistant.errors import UserError
from assistant.records import Catalog
from evals.metrics import (
    THRESHOLDS,
    GoldenRow,
    RetrievalRow,
    RetrievalScore,
    RowScore,
    Summary,
    Thresholds,
    VersionFacts,
    rank_of_first_hit,
    score_row,
    summarize,
)
from evals.real import RealRow, RealScore, real_gates, score_real_row, summarize_real
from evals.report import archive_summary, write_report
from evals.run_record import EvalRun

EVALS_DIR = Path(__file__).resolve().parent
DEFAULT_SET = EVALS_DIR / "golden" / "qa.jsonl"
DEFAULT_RETRIEVAL_SET = EVALS_DIR / "golden" / "retrieval.jsonl"
DEFAULT_REAL_SET = EVALS_DIR / "golden" / "real.jsonl"
RESULTS_DIR = EVALS_DIR / "results"
RETRIEVAL_K = 5

AnswerFn = Callable[..., Answer]  # ask(question, *, version=..., conversation=...) -> Answer


class Retriever(Protocol):
    """`search` returns hits with a `.source`, either as a list or as a result object with `.hits`."""

    def search(
        self,
        query: str,
        k: int = 5,
        lang: str | None = None,
        version: str | None = None,
        doc_type: str | None = None,
    ) -> Any: ...


# ---------------------------------------------------------------- loading


RowT = TypeVar("RowT", GoldenRow, RealRow)


def _load_rows(path: Path, model: type[RowT], what: str) -> list[RowT]:
    """Read a JSONL set of `model` rows: a malformed line is reported with its number; ids are unique."""
    rows: list[RowT] = []
    for number, line in _jsonl_lines(path):
        try:
            rows.append(model.model_validate_json(line))
        except ValidationError as error:
            raise UserError(f"{path}:{number}: not a valid {what}: {error}") from None
    ids = [r.id for r in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise UserError(f"{path}: duplicate ids {duplicates}")
    return rows


def load_golden(path: Path) -> list[GoldenRow]:
    return _load_rows(path, GoldenRow, "golden row")


def load_real(path: Path) -> list[RealRow]:
    """The real-question set (golden/real.jsonl)."""
    return _load_rows(path, RealRow, "real-question row")


def load_retrieval(path: Path) -> list[RetrievalRow]:
    rows: list[RetrievalRow] = []
    for number, line in _jsonl_lines(path):
        try:
            raw = json.loads(line)
            raw.setdefault("query", raw.get("question"))
            expected = raw.get("expected")
            if isinstance(expected, dict):
                expected = expected.get("expected_sources")
            raw.setdefault("expected_sources", expected)
            raw.setdefault("id", f"retrieval-{number}")
            rows.append(RetrievalRow.model_validate(raw))
        except (ValueError, ValidationError) as error:
            raise UserError(f"{path}:{number}: not a valid retrieval row: {error}") from None
    return rows


def _jsonl_lines(path: Path) -> list[tuple[int, str]]:
    if not path.is_file():
        raise UserError(f"{path} does not exist; pass --set with a golden JSONL file.")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        (n, line)
        for n, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("//")
    ]


# ---------------------------------------------------------------- the real assistant (defaults)


def default_answer_fn() -> AnswerFn:
    # deferred: the answer stack loads when an eval runs, not when evals are imported
    from assistant.service import ask

    return ask


def default_conversation_factory() -> Callable[[], Any]:
    # deferred: the answer stack loads when an eval runs, not when evals are imported
    from assistant.session import Conversation

    return Conversation


@lru_cache(maxsize=8)
def default_facts(version: str) -> VersionFacts:
    # deferred: the answer stack loads when an eval runs, not when evals are imported
    from assistant.catalog import load_catalog

    catalog: Catalog = load_catalog(version)
    return VersionFacts.from_catalog(catalog)


def default_retriever() -> Retriever:
    # deferred: the answer stack loads when an eval runs, not when evals are imported
    from assistant.retrieval import make_retriever
    from assistant.settings import get_settings

    return make_retriever(get_settings())


# ---------------------------------------------------------------- running


def ask_row(
    row: GoldenRow | RealRow, answer_fn: AnswerFn, new_conversation: Callable[[], Any] | None
) -> tuple[Answer, float]:
    """Answer one row (replaying earlier turns into one conversation); returns the answer and its latency."""
    conversation = new_conversation() if (row.turns and new_conversation) else None
    for turn in row.turns:
        answer_fn(turn, version=row.version, conversation=conversation)
    start = time.perf_counter()
    answer = answer_fn(row.question, version=row.version, conversation=conversation)
    return answer, (time.perf_counter() - start) * 1000


def run_rows(
    rows: Sequence[GoldenRow],
    *,
    answer_fn: AnswerFn,
    facts_for: Callable[[str], VersionFacts],
    new_conversation: Callable[[], Any] | None = None,
    judge: Callable[[GoldenRow, Answer], dict[str, float]] | None = None,
) -> tuple[list[RowScore], dict[str, dict[str, Any]]]:
    scores: list[RowScore] = []
    answers: dict[str, dict[str, Any]] = {}
    for row in rows:
        facts = facts_for(row.version)
        try:
            answer, latency = ask_row(row, answer_fn, new_conversation)
        except Exception as error:  # noqa: BLE001 - a crash is a scored failure, not the end of the run
            scores.append(score_row(row, None, facts, error=f"{type(error).__name__}: {error}"))
            continue
        score = score_row(row, answer, facts, latency_ms=latency)
        if judge is not None:
            score.judge = judge(row, answer)
        scores.append(score)
        answers[row.id] = answer.to_json()
    return scores, answers


def run_real_rows(
    rows: Sequence[RealRow],
    *,
    answer_fn: AnswerFn,
    facts_for: Callable[[str], VersionFacts],
    new_conversation: Callable[[], Any] | None = None,
) -> tuple[list[RealScore], dict[str, dict[str, Any]]]:
    """Ask and score the real questions; only dev answers are kept, so held-out answers are never shown."""
    scores: list[RealScore] = []
    answers: dict[str, dict[str, Any]] = {}
    for row in rows:
        facts = facts_for(row.version)
        try:
            answer, latency = ask_row(row, answer_fn, new_conversation)
        except Exception as error:  # noqa: BLE001 - a crash is a scored failure, not the end of the run
            scores.append(score_real_row(row, None, facts, error=f"{type(error).__name__}: {error}"))
            continue
        scores.append(score_real_row(row, answer, facts, latency_ms=latency))
        if row.split == "dev":
            answers[row.id] = answer.to_json()
    return scores, answers


def add_real_scores(
    summary: Summary, scores: Sequence[RealScore], thresholds: Thresholds, *, gated: bool = True
) -> None:
    """Report the real-question rows as their own category and add their dev gate to the run's gates.

    The threshold was measured on the whole dev split, so a run over part of it (one version) is reported
    but not gated.
    """
    summary.data["real"] = summarize_real(scores)
    summary.data["real"]["gated"] = gated
    if gated:
        summary.gates.extend(real_gates(summary.data["real"], thresholds))
    summary.data["gates"] = [g.__dict__ for g in summary.gates]
    summary.data["ok"] = summary.ok


def run_retrieval(
    queries: Sequence[RetrievalRow], retriever: Retriever, k: int = RETRIEVAL_K, origin: str = "retrieval"
) -> list[RetrievalScore]:
    results: list[RetrievalScore] = []
    for q in queries:
        # Expected sources are guide sections, and guide passages are what the assistant cites; a question
        # about one release searches that release's passages, as the assistant does.
        result = retriever.search(q.query, k=k, lang=q.lang, version=q.version, doc_type="guide")
        hits = [h.source for h in getattr(result, "hits", result)][:k]
        results.append(
            RetrievalScore(
                id=q.id,
                query=q.query,
                lang=q.lang,
                expected_sources=q.expected_sources,
                hits=hits,
                rank=rank_of_first_hit(q.expected_sources, hits),
                origin=origin,
            )
        )
    return results


def qa_retrieval_rows(rows: Sequence[GoldenRow]) -> list[RetrievalRow]:
    """Golden Q&A rows that name expected sources double as retrieval queries."""
    return [
        RetrievalRow(
            id=r.id,
            query=r.question,
            lang=r.lang,
            version=r.version,
            expected_sources=r.expected.expected_sources,
        )
        for r in rows
        if r.expected.expected_sources and not r.turns
    ]


def evaluate(
    rows: Sequence[GoldenRow],
    *,
    answer_fn: AnswerFn,
    facts_for: Callable[[str], VersionFacts],
    retriever: Retriever | None,
    retrieval_rows: Sequence[RetrievalRow] = (),
    new_conversation: Callable[[], Any] | None = None,
    thresholds: Thresholds = THRESHOLDS,
    judge: Callable[[GoldenRow, Answer], dict[str, float]] | None = None,
    real_rows: Sequence[RealRow] = (),
    gate_real: bool = True,
) -> EvalRun:
    scores, answers = run_rows(
        rows, answer_fn=answer_fn, facts_for=facts_for, new_conversation=new_conversation, judge=judge
    )
    retrieval: list[RetrievalScore] | None = None
    if retriever is not None:
        retrieval = run_retrieval(retrieval_rows, retriever) + run_retrieval(
            qa_retrieval_rows(rows), retriever, origin="qa"
        )
    summary = summarize(scores, retrieval, thresholds)
    real: list[RealScore] | None = None
    if real_rows:
        real, real_answers = run_real_rows(
            real_rows, answer_fn=answer_fn, facts_for=facts_for, new_conversation=new_conversation
        )
        answers.update(real_answers)
        add_real_scores(summary, real, thresholds, gated=gate_real)
    return EvalRun(scores, retrieval, summary, answers, real)


# ---------------------------------------------------------------- optional LLM judge


def llm_judge_from_env() -> Callable[[GoldenRow, Answer], dict[str, float]] | None:
    """Faithfulness and relevance scored 1-5 by an OpenAI-compatible model, only when one is configured."""
    base_url = os.environ.get("AUTORECIPE_LLM_BASE_URL")
    if not base_url:
        return None
    # lazy: langchain-openai loads only on this path (start-up time)
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(
        base_url=base_url,
        model=os.environ.get("AUTORECIPE_LLM_MODEL", "default"),
        api_key=os.environ.get("AUTORECIPE_LLM_API_KEY", "none"),
        temperature=0,
        timeout=60,
    )

    def judge(row: GoldenRow, answer: Answer) -> dict[str, float]:
        passages = (
            "\n\n".join(f"[{c.n}] {c.source}\n{c.text or c.heading}" for c in answer.citations) or "(none)"
        )
        prompt = (
            "Rate the ANSWER on two 1-5 scales and reply with JSON only, like "
            '{"faithfulness": 4, "relevance": 5}.\nfaithfulness: every claim is supported by the PASSAGES.\n'
            "relevance: the ANSWER addresses the QUESTION.\n\n"
            f"QUESTION:\n{row.question}\n\nPASSAGES:\n{passages}\n\nANSWER:\n{answer.answer_markdown}"
        )
        try:
            reply = llm.invoke(prompt).content
            text = reply if isinstance(reply, str) else json.dumps(reply)
            parsed = json.loads(text[text.index("{") : text.rindex("}") + 1])
            return {k: float(parsed[k]) for k in ("faithfulness", "relevance") if k in parsed}
        except Exception:  # noqa: BLE001 - the judge is optional; a bad reply scores nothing
            return {}

    return judge


# ---------------------------------------------------------------- entry point used by `autorecipe eval`


def _shown(path: Path) -> str:
    """A path as the summary shows it: relative to the repository when inside it, so runs compare cleanly."""
    resolved = path.resolve()
    return (
        str(resolved.relative_to(EVALS_DIR.parent))
        if resolved.is_relative_to(EVALS_DIR.parent)
        else str(path)
    )


def git_short_sha(repo: Path = EVALS_DIR.parent) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "local"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "local"


def main(
    *,
    set_path: Path = DEFAULT_SET,
    report_dir: Path,
    version: str | None = None,
    retrieval_path: Path | None = DEFAULT_RETRIEVAL_SET,
    results_dir: Path | None = RESULTS_DIR,
    answer_fn: AnswerFn | None = None,
    facts_for: Callable[[str], VersionFacts] | None = None,
    retriever: Retriever | None = None,
    skip_retrieval: bool = False,
    new_conversation: Callable[[], Any] | None = None,
    real_path: Path | None = None,
) -> tuple[int, EvalRun]:
    """Run one evaluation and write its report; the exit code is 0 only when every gate passes.

    The shipped golden set runs together with the shipped real-question set; another `set_path` runs alone
    unless `real_path` is given.
    """

    rows = load_golden(set_path)
    if real_path is None and set_path == DEFAULT_SET and DEFAULT_REAL_SET.is_file():
        real_path = DEFAULT_REAL_SET
    real_rows = load_real(real_path) if real_path is not None else []
    if version is not None:
        rows = [r for r in rows if r.version == version]
        real_rows = [r for r in real_rows if r.version == version]
        if not rows:
            raise UserError(f"{set_path} has no rows for version {version!r}.")
    retrieval_rows = load_retrieval(retrieval_path) if retrieval_path and retrieval_path.is_file() else []
    retrieval_error = "skipped (--skip-retrieval)" if skip_retrieval else None
    if not skip_retrieval and retriever is None:
        try:
            retriever = default_retriever()
        except UserError as error:  # no index yet: still score the answers; the retrieval gate then fails
            retrieval_error = str(error)
    run = evaluate(
        rows,
        answer_fn=answer_fn or default_answer_fn(),
        facts_for=facts_for or default_facts,
        retriever=None if skip_retrieval else retriever,
        retrieval_rows=retrieval_rows,
        new_conversation=new_conversation or (default_conversation_factory() if answer_fn is None else None),
        judge=llm_judge_from_env(),
        real_rows=real_rows,
        gate_real=version is None,
    )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    run.summary.data["run"] = {
        "utc": stamp,
        "git": git_short_sha(),
        "set": _shown(set_path),
        "version_filter": version,
        "retrieval_set": _shown(retrieval_path) if retrieval_rows else None,
        "real_set": _shown(real_path) if real_rows and real_path is not None else None,
    }
    run.summary.data["retrieval"]["not_run_because"] = retrieval_error if run.retrieval is None else None
    write_report(run, report_dir)
    if results_dir is not None:
        archive_summary(run.summary.data, results_dir, f"{stamp}-{run.summary.data['run']['git']}")
    return (0 if run.summary.ok else 1), run
