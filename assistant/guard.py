"""The guard on LLM phrasing: the rephrased text may state only the facts of the computed answer.

Every number (digits, English number words or Chinese numerals), identifier, flag, config assignment,
path, URL, command, parallel size and fit verdict in the candidate must appear in the deterministic answer;
raw HTML and over-long replies are refused. Any doubt keeps the deterministic text. Hand-written because
no library checks the facts of one text against another; each check is one small pattern below.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from assistant.understand import cn_to_int

# ---------------------------------------------------------------- number words -> digits

_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_EN_WORD = "|".join([*_EN_UNITS, *_EN_SCALES])
_EN_NUMBER = re.compile(rf"\b(?:{_EN_WORD})(?:(?:\s+and)?[\s-]+(?:{_EN_WORD}))*\b", re.IGNORECASE)
# "one" alone is as often a pronoun ("the one that fits") as a count: it counts only before a unit.
_EN_COUNTED = re.compile(
    r"\s*(?:[×x*]\s*)?(?:gpus?|nodes?|layers?|stages?|ways?|gb|gib|tb|h100s?|a100s?|b200s?|gb200s?|"
    r"gb300s?|b300s?|h200s?|h800s?|a800s?|h20s?|micro-?batch(?:es)?|experts?|epochs?|steps?)\b",
    re.IGNORECASE,
)

_ZH_DIGITS = "零〇一二两三四五六七八九"
_ZH_SCALES = "十百千万"
_ZH_NUMBER = re.compile(f"[{_ZH_DIGITS}{_ZH_SCALES}]+")
# A lone numeral is a count only before a measure word; "一" also starts many plain words (一些, 一下).
_ZH_MEASURE = re.compile(r"\s*(?:张|块|卡|台|节点|层|路|倍|个|组|份|位|级)")
_ZH_ONE_MEASURE = re.compile(r"\s*(?:张|块|卡|台|节点|层|路)")


def _en_value(words: str) -> int:
    total = current = 0
    for word in re.split(r"[\s-]+", words.lower()):
        if word == "and":
            continue
        if word in _EN_UNITS:
            current += _EN_UNITS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _EN_SCALES[word]
            current = 0
    return total + current


def _en_to_digits(match: re.Match[str]) -> str:
    words, after = match.group(0), match.string[match.end() :]
    if words.lower() == "one" and not _EN_COUNTED.match(after):
        return words
    return str(_en_value(words))


def _zh_to_digits(match: re.Match[str]) -> str:
    """Numerals with a digit (十六, 两百) always count; 一 alone, or scales alone (十, 千万 = "by all
    means"), only before a measure word."""
    numerals, after = match.group(0), match.string[match.end() :]
    if numerals == "一" or not any(char in _ZH_DIGITS for char in numerals):
        measure = _ZH_ONE_MEASURE if numerals == "一" else _ZH_MEASURE
        if not measure.match(after):
            return numerals
    return str(cn_to_int(numerals))


def normalise(text: str) -> str:
    """Full-width forms folded, number words and Chinese numerals written as digits, lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = _EN_NUMBER.sub(_en_to_digits, text)
    text = _ZH_NUMBER.sub(_zh_to_digits, text)
    return text.lower()


# ---------------------------------------------------------------- the facts of a text

# ASCII boundaries, not \b: a Chinese character is a word character, and 用8张卡 must still yield 8.
_NOT_BEFORE, _NOT_AFTER = r"(?<![a-z0-9_.])", r"(?![a-z0-9_])"
_FACT_PATTERNS = (
    re.compile(rf"{_NOT_BEFORE}[a-z][a-z0-9]*(?:_[a-z0-9]+)+{_NOT_AFTER}"),  # recipe names, keys, env vars
    re.compile(r"(?<![a-z0-9_-])--?[a-z][a-z0-9_-]*"),  # command-line flags
    re.compile(rf"{_NOT_BEFORE}[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)+\s*=\s*[^\s'`|,;)]+"),  # key=value overrides
    re.compile(rf"{_NOT_BEFORE}[a-z0-9_.-]*[a-z0-9_]/[a-z0-9_./-]*[a-z0-9_]{_NOT_AFTER}"),  # paths
    re.compile(
        rf"{_NOT_BEFORE}[a-z0-9_-]+\.(?:py|sh|sbatch|ya?ml|json|md|toml|txt){_NOT_AFTER}"
    ),  # file names
    re.compile(rf"{_NOT_BEFORE}\d+(?:[.,]\d+)*(?:\s?[kmgt]i?b?{_NOT_AFTER})?"),  # numbers and sizes
)
_SIZE_LABELS = {
    "tp": "tp", "pp": "pp", "vp": "vp", "vpp": "vp", "cp": "cp", "ep": "ep", "etp": "etp", "dp": "dp",
    "mbs": "mbs", "gbs": "gbs", "ga": "ga", "张量并行": "tp", "流水线并行": "pp", "虚拟流水线": "vp",
    "上下文并行": "cp", "专家并行": "ep", "数据并行": "dp",
}  # fmt: skip
_SIZE_LABEL = "|".join(sorted(_SIZE_LABELS, key=len, reverse=True))
_SIZE_JOIN = r"(?:=|:|of|to|is|at|设为|设成|改为|改成|为|是)?"
_SIZE = re.compile(rf"{_NOT_BEFORE}({_SIZE_LABEL})\s*{_SIZE_JOIN}\s*(\d+)(?!\.?\d)")
_COUNTED = re.compile(
    rf"{_NOT_BEFORE}(\d+)\s*(?:[×x*]\s*)?(gpus?|nodes?|layers?|h100|a100|b200|gb200|gb300|b300|h200|h800|a800|"
    r"h20|张|块|卡|台|节点|层)"
)
# What a count counts, in either language: "16 × H100" and "十六张卡" are both 16 GPUs.
_COUNT_KIND = {"node": "node", "台": "node", "节点": "node", "layer": "layer", "层": "layer"}
_URL = re.compile(r"(?:https?|ftp|file)://\S+|\bwww\.\S+|\]\([^)]*\)")
_HTML = re.compile(r"<\s*/?\s*[a-z][^>]*>|\bon[a-z]+\s*=|javascript:", re.IGNORECASE)
_SHELL = re.compile(
    r"\b(?:curl|wget|sudo|chmod|chown|rm|eval|exec|nc|ssh|scp|apt(?:-get)?|pip3?|npm|bash|sh|zsh)\b"
    r"|\|\s*(?:sh|bash|zsh|python3?|perl)\b|\$\(|&&"
)
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_LIST_MARKER = re.compile(r"^\s*(?:\d+[.)]|\[\d+\])\s", re.MULTILINE)
_CITATION = re.compile(r"\[\d+\]")
_NEGATIVE_FIT = re.compile(
    r"does\s*n[o']t\s+fit|do\s*n[o']t\s+fit|won'?t\s+fit|will\s+not\s+fit|cannot\s+fit|can'?t\s+fit|not\s+fit|"
    r"out\s+of\s+memory|\boom\b|will\s+it\s+fit\?\W*no\b|放不下|装不下|不够|显存不足|溢出"
)
_POSITIVE_FIT = re.compile(
    r"\bfits\b|\b(?:will|would|can|does)\s+fit\b(?!\?)|will\s+it\s+fit\?\W*yes\b|放得下|装得下|能放下|能装下|"
    r"可以放下|够用"
)
_MARKERS = ("❌", "⚠️")


def facts(text: str) -> set[str]:
    """The checkable identifiers, paths, numbers, sizes and counts of a text, normalised for comparison."""
    text = _CITATION.sub(" ", _LIST_MARKER.sub(" ", normalise(text)))
    found: set[str] = set()
    for pattern in _FACT_PATTERNS:
        found.update(re.sub(r"\s+", "", match.group(0)) for match in pattern.finditer(text))
    found.update(f"{_SIZE_LABELS[label]}={value}" for label, value in _SIZE.findall(text))
    found.update(
        f"{value}×{_COUNT_KIND.get(unit.rstrip('s'), 'gpu')}" for value, unit in _COUNTED.findall(text)
    )
    found.update(re.sub(r"\s+", "", url) for url in _URL.findall(text))
    return found


def invented(candidate: str, reference: str) -> list[str]:
    """Facts in `candidate` that `reference` (the computed answer) does not state, sorted."""
    allowed = facts(reference)
    return sorted(fact for fact in facts(candidate) if fact not in allowed)


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one phrasing: `reason` is None when the text may be shown."""

    reason: str | None

    @property
    def accepted(self) -> bool:
        return self.reason is None


def _code_spans(text: str) -> set[str]:
    return {re.sub(r"\s+", " ", span.strip("`").strip()) for span in _CODE.findall(text)}


def check(candidate: str, reference: str, max_chars: int) -> Verdict:
    """Whether `candidate` states only what `reference` states; the first doubt found is the reason."""
    if not candidate.strip():
        return Verdict("empty reply")
    if len(candidate) > max_chars:
        return Verdict(f"reply of {len(candidate):,} characters is over the {max_chars:,} cap")
    ref_norm, cand_norm = normalise(reference), normalise(candidate)
    prose = _CODE.sub(" ", cand_norm)
    for pattern, what in ((_HTML, "raw HTML"), (_URL, "a link"), (_SHELL, "a shell command")):
        added = {m.group(0) for m in pattern.finditer(prose)} - {
            m.group(0) for m in pattern.finditer(ref_norm)
        }
        if added:
            return Verdict(f"{what} the answer does not contain: {min(added)[:60]}")
    flat_reference = re.sub(r"\s+", " ", ref_norm)
    for span in _code_spans(cand_norm) - _code_spans(ref_norm):
        if span not in flat_reference:
            return Verdict(f"code the answer does not contain: {span[:60]}")
    extra = invented(candidate, reference)
    if extra:
        return Verdict("facts the answer does not state: " + ", ".join(extra[:8]))
    if len(_NEGATIVE_FIT.findall(cand_norm)) != len(_NEGATIVE_FIT.findall(ref_norm)):
        return Verdict("the 'does not fit' verdicts differ from the answer's")
    if len(_POSITIVE_FIT.findall(cand_norm)) > len(_POSITIVE_FIT.findall(ref_norm)):
        return Verdict("a 'fits' verdict the answer does not give")
    for marker in _MARKERS:
        if candidate.count(marker) < reference.count(marker):
            return Verdict(f"a {marker} finding was dropped")
    return Verdict(None)
