"""The documented bounds on user input: past them a request is refused with a clear message, so no
question, flag or batch line can make the service work without end (README, "Bounds")."""

from __future__ import annotations

import math
import re

from assistant.errors import UserError
from assistant.understand import GPU_TYPES

MAX_GPUS = 2**20  # about a million GPUs: past any cluster built, and every search stays well under a second
MAX_GPUS_PER_NODE = 1_024
MAX_QUESTION_CHARS = 8_000
MAX_SETUPS = 16  # setups listed in one question ("cases: A on 16 GPUs, B on 8 GPUs, ...")
MAX_BATCH_LINE_BYTES = 64 * 1024
MAX_SEQ_LEN = 2**24  # 16M tokens: past any published context length
MAX_TOP_K = 50  # layouts or passages listed at once
MAX_TOKENS = 1e16  # a token budget: 10 quadrillion, a thousand times the largest published runs
_SURROGATE = re.compile("[\ud800-\udfff]")

_GPU_NOUN = rf"(?:x\s*)?(?:gpus?|cards?|nodes?|{'|'.join(GPU_TYPES)}|张|卡|台|节点)"
# A GPU count written as an expression or with a sign: read literally, "-8 H100" would be planned for 8
# GPUs and "10**12 H100" for 12, so such a count is refused instead of guessed.
_SIGNED_COUNT = re.compile(rf"(?<![\w.])[-−–]\s*\d[\d,_]*\s*{_GPU_NOUN}", re.IGNORECASE)
_EXPRESSION_COUNT = re.compile(
    rf"\d\s*(?:\*\*|\^|[eE][+-]?\d|[x×*]\s*10\s*(?:\*\*|\^))[\d\s+-]*\s*{_GPU_NOUN}", re.IGNORECASE
)


def check_gpus(num_gpus: int, gpus_per_node: int | None = None) -> None:
    """A GPU count (and node size) the planner can work with."""
    if not 1 <= num_gpus <= MAX_GPUS:
        raise UserError.keyed("bounds.gpus", limit=MAX_GPUS, got=num_gpus)
    if gpus_per_node is not None and not 1 <= gpus_per_node <= MAX_GPUS_PER_NODE:
        raise UserError.keyed("bounds.gpus_per_node", limit=MAX_GPUS_PER_NODE, got=gpus_per_node)


def check_question(text: str) -> None:
    if len(text) > MAX_QUESTION_CHARS:
        raise UserError.keyed("bounds.question", length=len(text), limit=MAX_QUESTION_CHARS)


def check_setups(count: int) -> None:
    if count > MAX_SETUPS:
        raise UserError.keyed("bounds.setups", count=count, limit=MAX_SETUPS)


def check_count_text(text: str) -> None:
    """A question's GPU or node count must be a plain positive number."""
    if _SIGNED_COUNT.search(text):
        raise UserError.keyed("bounds.count_negative")
    if _EXPRESSION_COUNT.search(text):
        raise UserError.keyed("bounds.count_expression")


def check_seq_len(seq_len: int | None) -> None:
    if seq_len is not None and not 1 <= seq_len <= MAX_SEQ_LEN:
        raise UserError.keyed("bounds.seq_len", limit=MAX_SEQ_LEN, got=seq_len)


def check_top_k(top_k: int) -> None:
    if not 1 <= top_k <= MAX_TOP_K:
        raise UserError.keyed("bounds.top_k", limit=MAX_TOP_K, got=top_k)


def check_tokens(tokens: float | None) -> None:
    """A token budget: a positive, finite number of tokens."""
    if tokens is not None and not (math.isfinite(tokens) and 0 < tokens <= MAX_TOKENS):
        raise UserError.keyed("bounds.tokens", limit=MAX_TOKENS, got=tokens)


def valid_text(text: str) -> tuple[str, int]:
    """(text with every lone surrogate replaced by U+FFFD, how many were replaced). Invalid UTF-8 in argv
    or a JSON "\\ud800" escape arrive as lone surrogates, which tokenizers and encoders reject."""
    return _SURROGATE.subn("\ufffd", text)


def batch_line(raw: bytes) -> str:
    """One `--batch` line as text: at most 64 KB of UTF-8, else a UserError for that line only."""
    if len(raw) > MAX_BATCH_LINE_BYTES:
        raise UserError.keyed("bounds.batch_line_size", size=len(raw), limit=MAX_BATCH_LINE_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError.keyed("bounds.batch_line_utf8", reason=error.reason, at=error.start) from error
