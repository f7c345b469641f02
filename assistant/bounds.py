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
        raise UserError(
            f"the GPU count must be a positive number no larger than {MAX_GPUS:,} (2^20), got {num_gpus:,}",
            zh=f"GPU 数量必须在 1 到 {MAX_GPUS:,}（2^20）之间，收到的是 {num_gpus:,}",
        )
    if gpus_per_node is not None and not 1 <= gpus_per_node <= MAX_GPUS_PER_NODE:
        raise UserError(
            f"GPUs per node must be positive and at most {MAX_GPUS_PER_NODE:,}, got {gpus_per_node:,}",
            zh=f"每个节点的 GPU 数必须在 1 到 {MAX_GPUS_PER_NODE:,} 之间，收到的是 {gpus_per_node:,}",
        )


def check_question(text: str) -> None:
    if len(text) > MAX_QUESTION_CHARS:
        raise UserError(
            f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. "
            "Ask about one setup at a time, or paste only the config lines and the error",
            zh=f"问题长度为 {len(text):,} 个字符，上限是 {MAX_QUESTION_CHARS:,}。"
            "请一次只问一个配置，或只粘贴配置行和报错信息",
        )


def check_setups(count: int) -> None:
    if count > MAX_SETUPS:
        raise UserError(
            f"the question lists {count} setups; at most {MAX_SETUPS} are answered at once. Split it",
            zh=f"问题列出了 {count} 个配置，一次最多回答 {MAX_SETUPS} 个，请拆开提问",
        )


def check_count_text(text: str) -> None:
    """A question's GPU or node count must be a plain positive number."""
    if _SIGNED_COUNT.search(text):
        raise UserError(
            "a GPU or node count cannot be negative; write how many you have as a plain number, e.g. 8 H100",
            zh="GPU 或节点数量不能为负数；请直接写出数量，例如 8 张 H100",
        )
    if _EXPRESSION_COUNT.search(text):
        raise UserError(
            "write the GPU or node count as a plain number (e.g. 1024 H100), not as a power or an exponent",
            zh="请用普通数字写出 GPU 或节点数量（例如 1024 张 H100），不要写成乘方或科学计数法",
        )


def check_seq_len(seq_len: int | None) -> None:
    if seq_len is not None and not 1 <= seq_len <= MAX_SEQ_LEN:
        raise UserError(
            f"the sequence length must be between 1 and {MAX_SEQ_LEN:,} (2^24) tokens, got {seq_len:,}",
            zh=f"序列长度必须在 1 到 {MAX_SEQ_LEN:,}（2^24）之间，收到的是 {seq_len:,}",
        )


def check_top_k(top_k: int) -> None:
    if not 1 <= top_k <= MAX_TOP_K:
        raise UserError(f"--top-k must be between 1 and {MAX_TOP_K}, got {top_k}")


def check_tokens(tokens: float | None) -> None:
    """A token budget: a positive, finite number of tokens."""
    if tokens is not None and not (math.isfinite(tokens) and 0 < tokens <= MAX_TOKENS):
        raise UserError(
            f"--tokens must be a positive number of tokens no larger than {MAX_TOKENS:.0e}, got {tokens}"
        )


def valid_text(text: str) -> tuple[str, int]:
    """(text with every lone surrogate replaced by U+FFFD, how many were replaced). Invalid UTF-8 in argv
    or a JSON "\\ud800" escape arrive as lone surrogates, which tokenizers and encoders reject."""
    return _SURROGATE.subn("\ufffd", text)


def batch_line(raw: bytes) -> str:
    """One `--batch` line as text: at most 64 KB of UTF-8, else a UserError for that line only."""
    if len(raw) > MAX_BATCH_LINE_BYTES:
        raise UserError(f"the line is {len(raw):,} bytes; a batch line is at most {MAX_BATCH_LINE_BYTES:,}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"the line is not UTF-8 text ({error.reason} at byte {error.start})") from error
