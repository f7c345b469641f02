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
    if lang == "zh":
        parts = [f"CP 要求能被 2 × CP = {result.for_cp} 整除"] if cp > 1 else []
        if result.for_sp > 1:
            parts.append(
                f"序列并行要求每个 CP rank 上的 S / CP 能被 TP 整除，即 S 能被 CP × TP = {result.for_sp} 整除"
            )
        head = f"CP {cp}、TP {tp}" + ("、开启序列并行" if result.sp else "")
        reasons = "；".join(parts)
        line = f"**序列长度**：{head} 时，序列长度必须是 {result.multiple} 的倍数（{reasons}）。"
        if result.sp is None and result.multiple != result.without_sp:
            line += f"不开启序列并行时只需是 {result.without_sp} 的倍数。"
        return f"{line}\n\n来源：{sources}"
    parts = [f"2 × CP = {result.for_cp} for context parallelism"] if cp > 1 else []
    if result.for_sp > 1:
        parts.append(
            f"CP × TP = {result.for_sp} for sequence parallelism, which splits S / CP over the TP ranks"
        )
    head = f"CP {cp} and TP {tp}" + (" with sequence parallelism" if result.sp else "")
    line = (
        f"**Sequence length**: with {head}, the sequence length must be a multiple of {result.multiple} "
        f"({'; '.join(parts)}; the smallest length both accept)."
    )
    if result.sp is None and result.multiple != result.without_sp:
        line += f" Without sequence parallelism a multiple of {result.without_sp} is enough."
    return f"{line}\n\nSource: {sources}"


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
        extra = (
            f"{seq} 不是 {result.multiple} 的倍数；最近的可用长度：{near}。"
            if lang == "zh"
            else f"{seq} is not a multiple of {result.multiple}; the nearest lengths that pass: {near}."
        )
        line = f"{head} {extra}\n\n{tail}"
    return line


def _size(value: str | None) -> int:
    text = (value or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else 1
