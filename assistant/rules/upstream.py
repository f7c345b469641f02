"""Exact error texts raised by Megatron-Core / Megatron-Bridge, formatted with the user's numbers.

Kept verbatim (including upstream typos and spacing) so a user can match them against a log.
Locations are at Bridge main 067f987 / Megatron-Core 2a75ac1 unless a version is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod


def heads_tp(heads: int, tp: int) -> str:
    # megatron/core/transformer/transformer_config.py (ValueError)
    return f"num_attention_heads ({heads}) must be a multiple of tensor_model_parallel_size ({tp})."


def query_groups_tp(groups: int, tp: int, multiple_or_divisor: bool) -> str:
    # same file; "or divisor" since core_v0.16.0
    relation = "a multiple or divisor of" if multiple_or_divisor else "a multiple of"
    return f"num_query_groups ({groups}) must be {relation} tensor_model_parallel_size ({tp})."


# megatron/core/ssm/mamba_mixer.py (AssertionError; "divisble" is upstream's spelling)
MAMBA_HEADS_TP = "nheads must be evenly divisble by tp_size"
MAMBA_GROUPS_TP = "ngroups must be evenly divisible by tp_size"

SP_WITHOUT_TP = "Cannot use sequence parallelism without tensor parallelism"  # model_parallel_config.py


# megatron/core/transformer/transformer_config.py (ValueError), same texts in cores 0.14 to 0.19
def offload_layers(layers: int) -> str:
    return f"CPU offloading can be done only for layers less than {layers}"


OFFLOAD_PP = "Currently there is no support for Pipeline parallelism with CPU offloading"
OFFLOAD_RECOMPUTE = "CPU offloading does not work when activation recomputation is enabled"
OFFLOAD_GRAPHS = "CUDA graphs not supported with CPU offloading."

VP_WITHOUT_PP = "pipeline-model-parallel size should be greater than 1 with interleaved schedule"


def layers_pp(layers: int, pp: int, with_numbers: bool = True) -> str:
    # transformer_block.py; cores before 0.17 (the v0.3.1 pin, core 0.15/0.16) print no numbers
    if not with_numbers:
        return "num_layers should be divisible by pipeline_model_parallel_size"
    return f"num_layers={layers} should be divisible by config.pipeline_model_parallel_size={pp}"


# Bridge models/gpt_provider.py checks (layers // PP) % VP before Megatron-Core builds the block.
VP_CHUNKS = "Make sure the number of model chunks is the same across all pipeline stages."


# megatron/core/transformer/transformer_config.py (ValueError): uneven PP via num_layers_in_first/last_
# pipeline_stage, alone or with a virtual pipeline; the missing spaces are upstream's (core main).
def uneven_edge_vp(edge: str, layers: int, vp: int) -> str:
    return (
        f"number of layers at {edge} stage: {layers}must be divisible by virtual pipelineparallel degree {vp}"
    )


def uneven_middle_pp(layers: int, middle_pp: int) -> str:
    return (
        f"number of layers at middle stage: {layers} must be divisible by"
        f"the middle pipeline model parallel size {middle_pp}"
    )


def uneven_middle_vp(per_rank: int, vp: int) -> str:
    return (
        f"number of layers on each middle pipeline rank:{per_rank} must be divisible by virtual"
        f"pipeline parallel degree {vp}"
    )


def uneven_mismatch(layers: int, middle_pp: int) -> str:
    # same file (ValueError), core_v0.16.0+ (transformer_config.py:2342 main): the edge stages leave layers
    # but no middle stage, or middle stages but no layers
    return f"Mismatch: {layers} middle layers remaining but {middle_pp} middle PP stages available."


# megatron/core/transformer/pipeline_parallel_layer_layout.py:37 (core_v0.15.0; :42 main, same text): an
# explicit layout's stage count must divide by PP; PP x VP is then its number of stages.
def layout_pp(stages: int, pp: int) -> str:
    return (
        "pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size "
        f"(len(layout)={stages}, pipeline_model_parallel_size={pp})"
    )


# megatron/core/transformer/transformer_config.py:1069 (core_v0.15.0; :2280 main), AssertionError; the two
# spaces are upstream's
def layout_vp(vp: int, detected: int) -> str:
    return (
        "virtual_pipeline_model_parallel_size conflicts with pipeline_model_parallel_layout, "
        f"(self.virtual_pipeline_model_parallel_size={vp},  detected_vpp_size={detected})"
    )


CP_SEQ = "Sequence length must be divisible by 2 * context parallel size if context parallel is used."
FINETUNE_CP_PER_TOKEN = "When finetuning with CP>1, calculate_per_token_loss must be True"
FINETUNE_CP_AVERAGE = "When finetuning with CP>1, average_in_collective must be False"

HIERARCHICAL_CP_MISSING = (
    "hierarchical_context_parallel_sizes must be set when cp_comm_type "
    "contains 'a2a+p2p'. Without it, CP communication is silently disabled "
    "and each rank attends only to its local chunk, producing artificially "
    "high throughput but broken training. Example: for cp=16 across 4 nodes "
    "of 8 GPUs, set hierarchical_context_parallel_sizes=[8, 2]."
)


def hierarchical_cp_product(sizes: Sequence[int], cp: int) -> str:
    return (
        f"Product of hierarchical_context_parallel_sizes {list(sizes)} "
        f"(={prod(sizes)}) must equal context_parallel_size (={cp})."
    )


def dense_world(world: int, tp: int, pp: int, cp: int) -> str:
    # Bridge training/config.py (AssertionError; f-string "=" specifiers)
    return (
        f"world size ({world}) is not divisible by total_model_size "
        f"(model_cfg.tensor_model_parallel_size={tp} * model_cfg.pipeline_model_parallel_size={pp} "
        f"* model_cfg.context_parallel_size={cp})"
    )


def expert_world(world: int, expert_size: int) -> str:
    # megatron/core/parallel_state.py (RuntimeError)
    return (
        f"world_size ({world}) is not divisible by expert_tensor_model_pipeline_parallel size ({expert_size})"
    )


def batch(gbs: int, mbs: int, dp: int) -> str:
    # megatron/core/num_microbatches_calculator.py (AssertionError)
    return (
        f"global batch size ({gbs}) is not divisible by micro batch size ({mbs}) "
        f"times data parallel size ({dp})"
    )


def packed_mbs(mbs: int, gbs: int | None, packed_size: int | None) -> str:
    """Bridge training/config.py (ValueError), identical in 0.3.1 .. main. Without the global batch and the
    pack length (a question that states only the micro batch) only its first sentence is certain."""
    first = "Micro batch size should be 1 when training with packed sequence, but your micro batch size "
    first += f"is {mbs}."
    if not gbs or not packed_size:
        return first
    return (
        f"{first} \nThe following config is equivalent to your current setting for "
        f"a packed dataset. Please update your config to the following: \n"
        f"Set micro batch size to 1 (currently {mbs})\n"
        f"Set global batch size to {gbs // mbs} "
        f"(currently {gbs}) \n"
        f"Set packed sequence length to {packed_size * mbs} "
        f"(currently {packed_size}) \n"
        f"For details please visit "
        f"https://docs.nvidia.com/nemo-framework/user-guide/latest/sft_peft/packed_sequence.html"
    )


# src/megatron/bridge/training/config.py:1196 (v0.6.0; :1319 main), ValueError
def energon_micro_batch(dataset_mbs: int, train_mbs: int) -> str:
    return (
        "EnergonDatasetConfig.micro_batch_size must match train.micro_batch_size "
        f"({dataset_mbs} != {train_mbs})."
    )


def seq_mismatch(model_seq: int, dataset_seq: int) -> str:
    return (
        "Please ensure sequence length configuration in model config and "
        f"dataset config match.\nSequence length in model config: {model_seq}, "
        f"Sequence length in dataset config: {dataset_seq}"
    )


def mode_dataset(mode: str, dataset: str) -> str:
    # scripts/training/run_recipe.py, 0.6.0 and later
    return f"Mode '{mode}' is incompatible with dataset '{dataset}'."


PEFT_NO_CHECKPOINT = "PEFT requires a pretrained checkpoint path"


def peft_invalid_checkpoint(path: str) -> str:
    return f"Invalid pretrained checkpoint directory found: {path}"


CUDA_GRAPH_PACKED = (
    "CUDA graph accepts only Tensor inputs. "
    "inference_context and packed_seq_params are excluded from input list. "
    "For inference cuda graph, please use cuda_graph_impl=local instead."
)
OFFLINE_PACKING_GRAPH_PAD = "Offline packing with CUDA graphs requires dataset pad_to_max_length=True."
PACKED_GRAPH_CU_SEQLENS = (
    "Packed attention CUDA graphs require offline_packing_specs.pad_cu_seqlens=True. "
    "Enable it for full-iteration, whole-layer, or attention-scoped capture."
)
CUDA_GRAPH_FULL_RECOMPUTE = "full recompute is only supported with full iteration CUDA graph."
CUDA_GRAPH_RNG = (
    "Transformer engine's RNG tracker is required for cudagraphs, it can be "
    "enabled with use_te_rng_tracker=True'."
)
CUDA_GRAPH_NAN_CHECK = (
    "check_for_nan_in_loss must be disabled when using full_iteration CUDA graph. "
    "Set rerun_state_machine.check_for_nan_in_loss=False."
)

# model_parallel_config.py, a warnings.warn
EP_TP_NEEDS_SP = (
    "When using expert parallelism and tensor parallelism for training, sequence parallelism must be used"
)
EP_NEEDS_MOE = "num_moe_experts must be non None to use expert-parallel."  # transformer_config.py
# moe/moe_layer.py asserts without a message; the traceback shows this source line.
EXPERTS_EP_ASSERT = "assert self.config.num_moe_experts % ep_size == 0"


def invalid_choice(flag: str, value: str, choices: list[str]) -> str:
    """argparse's own message for a value outside `choices` (Python 3.10+ wording)."""
    listed = ", ".join(repr(choice) for choice in choices)
    return f"argument {flag}: invalid choice: {value!r} (choose from {listed})"


# Transformer Engine's check_fp8_support on a GPU older than Ada/Hopper (raised when an FP8 recipe starts).
FP8_DEVICE = "Device compute capability 8.9 or higher required for FP8 execution."


def unknown_mixed_precision(name: str, presets: list[str]) -> str:
    """Bridge training/mixed_precision.py get_mixed_precision_config (ValueError), identical in 0.3.1 .. main;
    its registry holds every preset under its name and, when the name has "_", its hyphenated spelling."""
    keys = set(presets) | {p.replace("_", "-") for p in presets if "_" in p}
    valid = ", ".join(sorted(keys))
    return f"Unknown mixed-precision recipe '{name.replace('-', '_')}'. Available recipes: {valid}."
