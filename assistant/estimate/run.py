"""The settings of one training run that the memory and throughput estimators read (pure data).

The parallel layout itself is the `Plan`; the model is a `ModelArch`, the GPU a `GpuSpec`. Everything
else a recipe or a user sets that changes memory or speed is here, so both estimators take one record.
A frozen dataclass rather than a pydantic Record: the layout search builds thousands per question.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from assistant.estimate.features import RunFeatures

Recompute = Literal["selective", "full"] | None
# LoRA defaults of Megatron-Bridge's `LoRA` PEFT config (peft/lora.py): rank 32 on these linear layers.
LORA_RANK = 32
LORA_TARGETS = ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")


@dataclass(frozen=True, slots=True)
class PipelineSplit:
    """Decoder layers per model chunk that a recipe fixes (an explicit pipeline_model_parallel_layout or
    num_layers_in_first/last_pipeline_stage), for the PP and VP it was written for; chunk vp_stage·pp +
    pp_rank, as Megatron numbers them."""

    pp: int
    vp: int
    chunks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunSettings:
    seq_length: int
    micro_batch_size: int | None = None  # None: the plan's mbs
    global_batch_size: int | None = None  # None: the plan's gbs
    num_gpus: int | None = None  # None: the plan's GPU count
    gpus_per_node: int = 8
    mode: str = "pretrain"
    precision: str = "bf16"
    recompute: Recompute = None
    recompute_modules: list[str] | None = None
    recompute_num_layers: int | None = None
    recompute_method: str | None = None
    distributed_optimizer: bool = True
    grad_reduce_in_fp32: bool = True
    precision_aware_optimizer: bool = False
    optimizer_bytes: float | None = None  # optimizer state bytes per parameter; None: Adam's
    fp8_param: bool = False  # FP8 runs: the weights are FP8 tensors (fp8_param / fp8_param_gather)
    fp4_param: bool = False  # NVFP4 runs: the weights are NVFP4 tensors (fp4_param / fp4_param_gather)
    fsdp: bool = False
    cuda_graphs: bool = False  # any CUDA graph capture (memory: static pools; speed reads features)
    unfused_attention: bool = False
    # Dropout probabilities (TransformerConfig attention_dropout / hidden_dropout; Bridge's providers set 0):
    # above 0, autograd keeps each dropout's mask for backward (memory.py).
    attention_dropout: float = 0.0
    hidden_dropout: float = 0.0
    lora_rank: int = LORA_RANK
    offload_layers: int = 0  # Megatron's cpu_offloading_num_layers
    pipeline_split: PipelineSplit | None = None  # the recipe's own split; None: Megatron's even split
    # Speed features, plus what memory reads from them (mtp_layers, te_cross_entropy, lora_targets).
    features: RunFeatures = field(default_factory=RunFeatures)

    @property
    def language_model_frozen(self) -> bool:
        """The recipe freezes the language model (freeze_language_model) in a run that is not LoRA: it keeps
        its weights and trains nothing, like a LoRA base without adapters."""
        return self.mode != "peft" and "language_model" in self.features.frozen

    def but(self, **changes: object) -> RunSettings:
        """A copy with some settings changed (dataclasses.replace)."""
        return replace(self, **changes)  # type: ignore[arg-type]
