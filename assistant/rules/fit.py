"""The fit verdict record and the recipe values the memory estimate reads (pure).

assistant/planning/fit.py runs the estimator and returns a FitVerdict.
"""

from __future__ import annotations

from typing import Literal

from assistant.records import Record

FitStatus = Literal["fits", "does-not-fit", "unknown"]
DEFAULT_SEQ = 4096


class FitVerdict(Record):
    status: FitStatus
    peak_bytes: float | None = None
    usable_bytes: float | None = None
    margin_bytes: float | None = None
    tight: bool = False  # inside the memory estimator's typical error: it may go either way
    note: str | None = None  # why the fit is unknown
    note_zh: str | None = None


# Bytes per element of the optimizer dtypes a recipe can name; Megatron keeps each in fp32 unless told.
DTYPE_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.uint8": 1}
OPTIMIZER_DTYPES = ("optimizer.main_params_dtype", "optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype")


# Muon (Megatron-Core optimizer/muon.py, via emerging_optimizers) keeps one momentum buffer per weight
# matrix beside the fp32 master copy: 8 bytes per parameter instead of Adam's 12 (the few non-matrix
# parameters it hands to Adam are ignored).
MUON_STATE_BYTES = 8.0


def optimizer_state_bytes(values: dict) -> float | None:
    """Bytes per parameter of the optimizer's master weights and state: the precision-aware optimizer's
    dtypes as the recipe names them (Nemotron 3 Super's H100 recipe: fp16 + bf16 + bf16 = 6, not 12), or
    Muon's 8; None for the default Adam (12)."""
    if str(values.get("optimizer.optimizer") or "").removeprefix("dist_") == "muon":
        return MUON_STATE_BYTES
    if not values.get("optimizer.use_precision_aware_optimizer"):
        return None
    return float(sum(DTYPE_BYTES.get(str(values.get(key)), 4) for key in OPTIMIZER_DTYPES))


def shards_optimizer_state(values: dict) -> bool:
    """The optimizer state is split over the data-parallel ranks: Megatron's distributed optimizer, or the
    layer-wise one that "dist_*" optimizers and use_layer_wise_distributed_optimizer turn on
    (optimizer/layer_wise_optimizer.py: each rank keeps only its layers' state)."""
    if str(values.get("optimizer.optimizer") or "").startswith("dist_"):
        return True
    if values.get("optimizer.use_layer_wise_distributed_optimizer"):
        return True
    return (
        values.get("ddp.use_distributed_optimizer", values.get("optimizer.use_distributed_optimizer", True))
        is not False
    )
