"""Write one evaluation run to disk: summary.json, report.md (gates, tables, every failure), accuracy.png."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.atomic import write_atomic

if TYPE_CHECKING:
    from evals.real import RealScore
    from evals.run_record import EvalRun


def write_report(run: EvalRun, report_dir: Path) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(report_dir / "summary.json", _json(run.summary.data))
    write_atomic(report_dir / "answers.json", _json(run.answers))
    write_atomic(report_dir / "report.md", render_markdown(run).encode("utf-8"))
    write_atomic(report_dir / "accuracy.png", render_chart(run.summary.data))


def write_real_report(
    real: dict[str, Any], scores: Sequence[RealScore], answers: dict, report_dir: Path
) -> None:
    """The real-question set on its own (`python -m evals.run_real`): summary, dev answers, report."""
    write_atomic(report_dir / "real_summary.json", _json(real))
    write_atomic(report_dir / "real_answers.json", _json(answers))
    text = "\n".join(["# Real-question evaluation", "", *render_real_section(real, scores)]) + "\n"
    write_atomic(report_dir / "real_report.md", text.encode("utf-8"))


def archive_summary(summary: dict[str, Any], results_dir: Path, name: str) -> Path:
    """Keep this run's summary under evals/results/ so runs can be compared over time."""
    path = results_dir / f"{name}.json"
    write_atomic(path, _json(summary))
    return path


def _json(data: Any) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n").encode("utf-8")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render_markdown(run: EvalRun) -> str:
    d = run.summary.data
    lines = ["# Golden Q&A evaluation", ""]
    meta = d.get("run", {})
    if meta:
        lines += [f"Run {meta.get('utc')} at `{meta.get('git')}` on `{meta.get('set')}`.", ""]
    lines += ["## Gates", "", "| gate | value | threshold | result |", "|---|---|---|---|"]
    for g in run.summary.gates:
        lines.append(
            f"| {g.name} | {g.value if g.value is not None else 'not run'} | {g.threshold} | "
            f"{'PASS' if g.ok else 'FAIL'} |"
        )
    ra, sa = d["recipe_accuracy"], d["slot_accuracy"]
    lines += [
        "",
        f"**Overall: {'PASS' if run.summary.ok else 'FAIL'}**: "
        f"{d['rows_passed']}/{d['rows']} rows fully correct.",
        "",
        "## Metrics",
        "",
        "| metric | value |",
        "|---|---|",
        f"| recipe accuracy (overall, {ra['rows']} rows) | {_pct(ra['overall'])} |",
        *(f"| recipe accuracy [{k}] | {_pct(v)} |" for k, v in ra["by_lang"].items()),
        *(f"| recipe accuracy [{k}] | {_pct(v)} |" for k, v in ra["by_version"].items()),
        f"| slot accuracy (overall) | {_pct(sa['overall'])} |",
        *(f"| slot accuracy [{k}] | {_pct(v)} |" for k, v in {**sa["by_lang"], **sa["by_version"]}.items()),
        *(f"| slot `{k}` | {_pct(v)} |" for k, v in sa["by_slot"].items()),
        f"| command validity ({d['command_validity']['checked']} commands) | "
        f"{_pct(d['command_validity']['rate'])} |",
        f"| must-include coverage ({d['must_include']['patterns']} patterns) | "
        f"{_pct(d['must_include']['coverage'])} |",
        f"| must-not violations | {d['must_not_violations']} |",
        f"| invented identifiers | {d['invented_identifiers']['count']} |",
        f"| retrieval recall@5 ({d['retrieval']['queries']} queries) | "
        f"{_pct(d['retrieval']['recall_at_5'])} |",
        f"| retrieval MRR | {d['retrieval']['mrr'] if d['retrieval']['mrr'] is not None else 'n/a'} |",
        f"| citation presence | {_pct(d['citations']['presence'])} |",
        f"| expected sources cited | {_pct(d['citations']['expected_sources_cited'])} |",
        f"| latency p50 / p95 (ms) | {d['latency_ms']['p50']} / {d['latency_ms']['p95']} |",
        f"| answer errors (exceptions) | {d['errors']} |",
    ]
    for k, v in d.get("llm_judge", {}).items():
        lines.append(f"| LLM judge {k} (1-5) | {v} |")
    lines += ["", "## Rows", "", "| by | counts |", "|---|---|"]
    lines += [f"| {k} | {', '.join(f'{n}: {c}' for n, c in v.items())} |" for k, v in d["rows_by"].items()]
    lines += ["", "## Pass rate by category and language", "", "| category | en | zh |", "|---|---|---|"]
    for cat, by in d["pass_rate_by_category_lang"].items():
        lines.append(f"| {cat} | {_pct(by.get('en'))} | {_pct(by.get('zh'))} |")
    if "real" in d:
        lines += ["", *render_real_section(d["real"], run.real or [])]
    failed = [s for s in run.scores if not s.passed]
    lines += ["", f"## Failures ({len(failed)})", ""]
    for s in failed:
        lines.append(f"- **{s.id}** ({s.lang}, {s.version}, {s.category}): {s.question[:140]!r}")
        lines += [f"  - {f}" for f in s.failures()]
    if d["retrieval"].get("not_run_because"):
        lines += ["", f"Retrieval was not run: {d['retrieval']['not_run_because']}"]
    if run.retrieval:
        missed = [r for r in run.retrieval if r.rank is None or r.rank > 5]
        lines += ["", f"## Retrieval misses ({len(missed)} of {len(run.retrieval)})", ""]
        for r in missed:
            lines.append(
                f"- **{r.id}** ({r.origin}) {r.query[:100]!r}: wanted {r.expected_sources}, got {r.hits}"
            )
    return "\n".join(lines) + "\n"


def _cell(block: dict[str, Any] | None) -> str:
    if not block or not block.get("rows"):
        return "–"
    return f"{block['passed']}/{block['rows']} ({_pct(block['pass_rate'])})"


def render_real_section(real: dict[str, Any], scores: Sequence[RealScore]) -> list[str]:
    """The real-question rows: dev and held-out side by side, per topic, then the failing dev rows only.

    Held-out rows are counted, never listed, so nobody tunes on them.
    """
    dev, held = real["by_split"]["dev"], real["by_split"]["heldout"]
    lines = [
        "## Real questions (golden/real.jsonl)",
        "",
        "| metric | dev | heldout |",
        "|---|---|---|",
        f"| rows passed | {_cell(dev)} | {_cell(held)} |",
        f"| relevance (own text is about the asked entity/topic) | {_pct(dev['relevance'])} | "
        f"{_pct(held['relevance'])} |",
        f"| must-include coverage (rows) | {_pct(dev['must_include'])} | {_pct(held['must_include'])} |",
        f"| must-not violations | {dev['must_not_violations']} | {held['must_not_violations']} |",
        f"| answers with invented identifiers | {dev['invented']} | {held['invented']} |",
        f"| honest abstentions (with a pointer) | {dev['abstained']} | {held['abstained']} |",
        f"| answer errors (exceptions) | {dev['errors']} | {held['errors']} |",
        "",
        "| topic | dev | heldout |",
        "|---|---|---|",
    ]
    topics = sorted({*dev["by_topic"], *held["by_topic"]})
    lines += [f"| {t} | {_cell(dev['by_topic'].get(t))} | {_cell(held['by_topic'].get(t))} |" for t in topics]
    lines += [
        f"| [{lang}] | {_cell(dev['by_lang'].get(lang))} | {_cell(held['by_lang'].get(lang))} |"
        for lang in ("en", "zh")
    ]
    failed = [s for s in scores if s.split == "dev" and not s.passed]
    lines += ["", f"### Failing dev rows ({len(failed)})", ""]
    for score in failed:
        lines.append(
            f"- **{score.id}** ({score.lang}, {score.version}, {score.topic}): {score.question[:140]!r}"
        )
        lines += [f"  - {f}" for f in score.failures()]
    return lines


def render_chart(data: dict[str, Any]) -> bytes:
    """Bar chart: pass rate per category and language (left), recipe accuracy per language and version."""
    # lazy: matplotlib loads only on this path (start-up time)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after the backend is chosen

    per_cat = data["pass_rate_by_category_lang"]
    cats = list(per_cat)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(max(10, 0.7 * len(cats) + 6), 5), gridspec_kw={"width_ratios": [max(3, len(cats)), 2]}
    )
    width = 0.4
    for i, lang in enumerate(("en", "zh")):
        xs = [c + (i - 0.5) * width for c in range(len(cats))]
        left.bar(xs, [100 * (per_cat[c].get(lang) or 0) for c in cats], width, label=lang)
    left.set_xticks(range(len(cats)), cats, rotation=45, ha="right")
    left.set_ylim(0, 105)
    left.set_ylabel("rows fully correct (%)")
    left.set_title("Pass rate by category")
    left.legend()

    acc = data["recipe_accuracy"]
    bars = {**acc["by_lang"], **acc["by_version"]}  # en, zh, then each version
    labels = list(bars)
    right.bar(range(len(labels)), [100 * (bars[k] or 0) for k in labels], 0.6, color="tab:green")
    right.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    right.set_ylim(0, 105)
    right.axhline(95, color="tab:red", linestyle="--", linewidth=1)
    right.set_title("Recipe accuracy (%)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()
