"""Capability questions ("Can I use packed sequences with CP=2?", "Is dynamic CP supported?"): yes, no,
partly or "from version X", with the upstream source, from the support table (knowledge_base/support.json).

Pure apart from `load_table`: the caller passes the table, the version, and for the computed features the
catalog's recipes and the rule module's precision check. A question the table does not cover gets None, so
the caller falls back to the guide; "not known" is an answer the table can give, an invented yes is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assistant.kb import KnowledgeBase
from assistant.messages import words
from assistant.model_names import split_recipe_name
from assistant.records import Finding, RecipeRecord
from assistant.rules.versions import version_key
from assistant.understand import GPU_TYPES, normalise

# A row's status, and the message key that says it.
STATUS = {
    "yes": "support.status.yes",
    "partial": "support.status.partial",
    "experimental": "support.status.experimental",
    "no": "support.status.no",
    "unknown": "support.status.unknown",
}
# The GPUs a precision answer covers when the question names none.
DEFAULT_GPUS = ("a100", "h100", "b200")


@dataclass(frozen=True)
class SupportAnswer:
    feature: str
    status: str
    text: str  # Markdown, in the question's language


def load_table(kb: KnowledgeBase) -> dict[str, Any]:
    return kb.json("support.json")


def match_feature(text: str, table: dict[str, Any]) -> dict[str, Any] | None:
    """The feature whose every pattern the question matches; the one with most patterns wins."""
    t = normalise(text)
    matched = [f for f in table["features"] if all(re.search(p, t, re.IGNORECASE) for p in f["all"])]
    return max(matched, key=lambda f: len(f["all"]), default=None)


def _row_for(feature: dict[str, Any], version: str) -> dict[str, Any] | None:
    """The latest row that holds for `version` (rows are ordered by `since`)."""
    held = [r for r in feature["rows"] if version_key(r["since"]) <= version_key(version)]
    return held[-1] if held else None


def answer(
    text: str,
    version: str,
    lang: str,
    table: dict[str, Any],
    *,
    recipes: Sequence[RecipeRecord] = (),
    stems: Sequence[str] = (),
    precision_check: Callable[[str, str], Finding | None] | None = None,
    presets: Sequence[str] = (),
) -> SupportAnswer | None:
    """The table's answer for the version, or None when no feature matches. `stems`: the model stems the
    question names (for the PEFT and the per-model recipe lines); `precision_check(precision, gpu)`: the rule
    module's verdict on a precision for a GPU; `presets`: the release's mixed_precision preset names."""
    feature = match_feature(text, table)
    if feature is None:
        return None
    topic = feature["topic_zh"] if lang == "zh" else feature["topic_en"]
    row = _row_for(feature, version)
    if row is None:
        first = feature["rows"][0]["since"]
        status = feature.get("before", "no")
        if status == "no":
            head = words(lang, "support.head.no_before", topic=topic, version=version, first=first)
        else:
            head = words(lang, "support.head.unknown_before", topic=topic, version=version, first=first)
        later = _row_for(feature, "main") or feature["rows"][-1]
        lines = [head, _conditions(later, lang, when=later["since"])]
        return SupportAnswer(feature["id"], status, "\n\n".join(lines))
    status = row["status"]
    gpu_lines: list[str] = []
    if feature.get("computed") == "precision" and precision_check is not None:
        gpu_lines, status = _precision_lines(text, lang, precision_check, presets)
    head = words(lang, "support.head", topic=topic, version=version, status=words(lang, STATUS[status]))
    lines = [head, *gpu_lines, _conditions(row, lang)]
    later = _later_row(feature, row)
    if later is not None and later["status"] != row["status"]:
        # "No in 0.5.1, yes from 0.6.0": the release that changes the answer, so the user knows to upgrade
        # (or that a later release dropped it).
        lines.append(_conditions(later, lang, when=later["since"], status=later["status"]))
    if stems:
        lines += _recipe_lines(feature, stems, recipes, version, lang)
    return SupportAnswer(feature["id"], status, "\n\n".join(line for line in lines if line))


def _later_row(feature: dict[str, Any], row: dict[str, Any]) -> dict[str, Any] | None:
    """The row after `row` (the next release whose row differs), or None."""
    rows = feature["rows"]
    index = next(i for i, r in enumerate(rows) if r is row)
    return rows[index + 1] if index + 1 < len(rows) else None


def _conditions(row: dict[str, Any], lang: str, when: str | None = None, status: str | None = None) -> str:
    sources = "; ".join(f"`{s}`" for s in row["sources"])
    # The English row is a clause ("needs ..."); said on its own it starts with a capital.
    body = row["zh"] if lang == "zh" else row["en"][:1].upper() + row["en"][1:]
    if when and status:
        prefix = words(lang, "support.conditions.from_status", when=when, status=words(lang, STATUS[status]))
    else:
        prefix = words(lang, "support.conditions.from", when=when) if when else ""
    return words(lang, "support.conditions", prefix=prefix, body=body, sources=sources)


_LABEL = {"fp8cs": "FP8", "fp8mx": "MXFP8", "nvfp4": "NVFP4"}
_PRECISION_NAMES = (("fp8mx", r"mx[ _-]?fp8"), ("nvfp4", r"nv[ _-]?fp4|\bfp4\b"), ("fp8cs", r"\bfp8\b"))


def _precision_lines(
    text: str, lang: str, check: Callable[[str, str], Finding | None], presets: Sequence[str]
) -> tuple[list[str], str]:
    """Per GPU the question names (else A100, H100, B200): whether its tensor cores run the precision;
    and the overall status (yes on every GPU, no on none, else partial)."""
    t = normalise(text)
    precisions = [code for code, pattern in _PRECISION_NAMES if re.search(pattern, t)][:1] or ["fp8cs"]
    gpus = [g for g in GPU_TYPES if re.search(rf"(?<![a-z0-9]){g}(?![0-9])", t)] or list(DEFAULT_GPUS)
    lines, verdicts = [], []
    for precision in precisions:
        for gpu in gpus:
            ok = check(precision, gpu) is None
            verdicts.append(ok)
            mark = words(lang, "support.precision.yes" if ok else "support.precision.no")
            lines.append(f"- {_LABEL[precision]} · {gpu.upper()}: {mark}")
    matching = [p for p in presets if _LABEL[precisions[0]].lower() in p]
    if matching:
        listed = ", ".join(f"`{p}`" for p in matching)
        lines.append(words(lang, "support.precision.presets", listed=listed))
    status = "yes" if all(verdicts) else ("no" if not any(verdicts) else "partial")
    return ["\n".join(lines)], status


def _recipe_lines(
    feature: dict[str, Any], stems: Sequence[str], recipes: Sequence[RecipeRecord], version: str, lang: str
) -> list[str]:
    """The named model's recipes in this version (all of them, or its PEFT ones for a LoRA question)."""

    def stem(record: RecipeRecord) -> str | None:
        parts = split_recipe_name(record.name)
        return parts.stem if parts else None

    wanted = set(stems)
    mine = [r for r in recipes if r.kind == "library" and r.reachable and stem(r) in wanted]
    if feature.get("computed") == "peft":
        mine = [r for r in mine if r.mode == "peft"]
    names = sorted({r.name for r in mine}, key=lambda n: (len(n), n))
    model = ", ".join(f"`{s}`" for s in stems)
    if not names:
        if feature.get("computed") != "peft":
            return []
        return [words(lang, "support.recipes.no_peft", version=version, model=model)]
    shown = ", ".join(f"`{n}`" for n in names[:6])
    more = len(names) - 6
    tail = words(lang, "support.recipes.more", more=more) if more > 0 else ""
    return [
        words(lang, "support.recipes", version=version, count=len(names), model=model, shown=shown, tail=tail)
    ]


# "Does Megatron Bridge support Gemma 3?", "Is Qwen3 supported?", "支持 Gemma 3 吗？": about a model.
_MODEL_SUPPORT_ASK = re.compile(
    r"\bsupport(?:s|ed)?\b|\bis there (?:a|any) recipe\b|\bany recipes?\b"
    r"|支持|有没有.{0,12}配方|有.{0,6}配方吗",
    re.IGNORECASE,
)
MAX_LISTED = 8


def asks_model_support(text: str) -> bool:
    return _MODEL_SUPPORT_ASK.search(text) is not None


def model_support(
    named: str, stems: Sequence[str], recipes: Sequence[RecipeRecord], version: str, lang: str
) -> str:
    """Yes, with the catalog's recipes of the model (or of every size of its family), per goal; "" when the
    catalog has none, so the caller's no-recipe answer stands."""

    def stem(record: RecipeRecord) -> str | None:
        parts = split_recipe_name(record.name)
        return parts.stem if parts else None

    wanted = set(stems)
    mine = [r for r in recipes if r.kind == "library" and r.reachable and stem(r) in wanted]
    if not mine:
        return ""
    modes = sorted({r.mode for r in mine if r.mode})
    names = sorted({r.name for r in mine}, key=lambda n: (len(n), n))
    shown = ", ".join(f"`{n}`" for n in names[:MAX_LISTED])
    sizes = ", ".join(f"`{s}`" for s in sorted(wanted & {stem(r) for r in mine}))
    counts = {"count": len(names), "extra": len(names) - MAX_LISTED}
    more = words(lang, "support.model.more" if len(names) > MAX_LISTED else "support.model.all", **counts)
    return words(
        lang,
        "support.model",
        named=named,
        version=version,
        sizes=sizes,
        modes=words(lang, "sep.list").join(modes),
        shown=shown,
        more=more,
    )
