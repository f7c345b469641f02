"""The documented bounds on user input: past them a request is refused with a clear message, so no
question, flag or batch line can make the service work without end (README, "Bounds")."""

from __future__ import annotations

from assistant.errors import UserError

MAX_GPUS = 2**20  # about a million GPUs: past any cluster built, and every search stays well under a second
MAX_GPUS_PER_NODE = 1_024
MAX_QUESTION_CHARS = 8_000
MAX_SETUPS = 16  # setups listed in one question ("cases: A on 16 GPUs, B on 8 GPUs, ...")
MAX_BATCH_LINE_BYTES = 64 * 1024


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
