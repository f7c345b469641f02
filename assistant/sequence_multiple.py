"""The smallest sequence length multiple that context and sequence parallelism accept, in the user's numbers.

Two upstream checks constrain the sequence length S. Context parallelism cuts each sequence into 2·CP chunks
(Bridge `training/config.py`: "Sequence length must be divisible by 2 * context parallel size ..."); sequence
parallelism then splits the CP-local sequence S / CP over the TP ranks (Megatron-Core
`tensor_parallel/mappings.py`: "First dimension of the tensor should be divisible by tensor parallel size"),
so S must be divisible by CP·TP. The smallest S that satisfies both is lcm(2·CP, CP·TP) = CP·lcm(2, TP), not
2·CP·TP (NVIDIA-NeMo/RL PR 3563 derives the same factor). Pure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from assistant.messages import words

SOURCES = (
    "src/megatron/bridge/training/config.py (2 * context parallel size)",
    "Megatron-LM megatron/core/tensor_parallel/mappings.py (divisible by tensor parallel size)",
)
# "what must my sequence length be divisible by", "pad to a multiple of", "序列长度需要能被多少整除"
_ASKS = re.compile(
    r"(?:seq(?:uence)?[ _-]?(?:length|len)|seq_length|序列长度|序列长)[^.?!。？！]{0,90}"
    r"(?:divisib|divide|multiple|pad|整除|倍数|补齐|对齐)"
    r"|(?:divisib|multiple|pad)[^.?!]{0,40}seq(?:uence)?[ _-]?(?:length|len)",
    re.IGNORECASE,
)
_SP_ON = re.compile(
    r"sequence[ _-]?parallel(?:ism)?(?! *(?:=|is)? *(?:off|false|disabled))|\bSP\b|序列并行", re.I
)
_SP_OFF = re.compile(
    r"sequence[ _-]?parallel(?:ism)?\s*(?:=|is|:)?\s*(?:off|false|disabled)|without (?:SP|sequence parallel)",
    re.I,
)


@dataclass(frozen=True)
class SequenceMultiple:
    cp: int
    tp: int
    sp: bool | None  # None: the question does not say; both figures are given
    for_cp: int  # 2·CP (1 without CP)
    for_sp: int  # CP·TP (1 without SP or with TP 1)
    multiple: int  # the smallest length both accept (with SP when sp is None)
    without_sp: int  # the smallest length without SP


def asks_sequence_multiple(text: str) -> bool:
    return _ASKS.search(text) is not None


def sequence_multiple(cp: int, tp: int, sp: bool | None) -> SequenceMultiple:
    for_cp = 2 * cp if cp > 1 else 1
    for_sp = cp * tp if tp > 1 and sp is not False else 1
    return SequenceMultiple(
        cp=cp, tp=tp, sp=sp, for_cp=for_cp, for_sp=for_sp,
        multiple=math.lcm(for_cp, for_sp), without_sp=for_cp,
    )  # fmt: skip


def sp_stated(text: str, overrides: dict[str, str]) -> bool | None:
    """Whether the question turns sequence parallelism on (True), off (False), or does not say (None)."""
    value = overrides.get("model.sequence_parallel")
    if value is not None:
        return value.strip().lower() in ("true", "1", "yes")
    if _SP_OFF.search(text):
        return False
    return True if _SP_ON.search(text) else None


def sentence(result: SequenceMultiple, lang: str) -> str:
    """The answer in the user's numbers, with its two reasons and the sources."""
    cp, tp = result.cp, result.tp
    sources = "; ".join(f"`{s}`" for s in SOURCES)
    parts = [words(lang, "sequence_multiple.for_cp", for_cp=result.for_cp)] if cp > 1 else []
    if result.for_sp > 1:
        parts.append(words(lang, "sequence_multiple.for_sp", for_sp=result.for_sp))
    head = words(lang, "sequence_multiple.head", cp=cp, tp=tp)
    head += words(lang, "sequence_multiple.head.sp") if result.sp else ""
    line = words(
        lang,
        "sequence_multiple.line",
        head=head,
        multiple=result.multiple,
        reasons=words(lang, "sep.clause").join(parts),
    )
    if result.sp is None and result.multiple != result.without_sp:
        line += words(lang, "sequence_multiple.without_sp", without_sp=result.without_sp)
    return words(lang, "sequence_multiple.sourced", line=line, sources=sources)


def answer_line(text: str, overrides: dict[str, str], lang: str, seq: int | None = None) -> str:
    """The computed line for a question on sequence-length divisibility that states CP or TP; "" otherwise.
    `seq`: the length the question states, checked against the multiple (with the two nearest that pass)."""
    if not asks_sequence_multiple(text):
        return ""
    cp = _size(overrides.get("model.context_parallel_size"))
    tp = _size(overrides.get("model.tensor_model_parallel_size"))
    if cp <= 1 and tp <= 1:
        return ""
    result = sequence_multiple(cp, tp, sp_stated(text, overrides))
    line = sentence(result, lang)
    if seq and seq % result.multiple:
        below, above = seq // result.multiple * result.multiple, -(-seq // result.multiple) * result.multiple
        near = f"{below} / {above}" if below else f"{above}"
        head, _, tail = line.partition("\n\n")
        extra = words(lang, "sequence_multiple.not_multiple", seq=seq, multiple=result.multiple, near=near)
        line = f"{head} {extra}\n\n{tail}"
    return line


def _size(value: str | None) -> int:
    text = (value or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else 1
