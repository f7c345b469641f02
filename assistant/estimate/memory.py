"""Peak memory per GPU for the most loaded pipeline stage of a Megatron-Core training run (pure).

Weights/optimizer follow Megatron-LM `theoretical_memory_usage.py` with the Bridge DP·CP shard (research note
estimators.md 1.2, 1.5); activations are counted per saved tensor (Korthikanti et al. 2022, adapted to flash
attention, SwiGLU, GQA/MLA, MoE top-k and FP8-saved GEMM inputs); the in-flight micro-batches follow the
1F1B / interleaved warm-up counts of Megatron's schedules. Fixed overheads are calibrated constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import Field

from assistant.errors import UserError
from assistant.estimate.hardware import GIB, GpuSpec, precision_unit
from assistant.estimate.run import LORA_TARGETS, Recompute, RunSettings
from assistant.estimate.shapes import (
    Dims,
    LayerMix,
    LayerParams,
    attention_shapes,
    dims_of,
    layer_kinds,
    mix_of,
    mix_params,
    padded_vocab,
    unmodelled_reason,
)
from assistant.estimate.vision import vision_params
from assistant.records import ModelArch, Plan, Record, VisionTowerDims
from assistant.rules import upstream

# Measured peaks of real-sized runs fall within about 10% of the estimate (bench_estimate_calibration).
TIGHT_MARGIN = 0.10
# Share of the host memory per GPU that offloaded activations may use; the rest holds the OS, the data
# loader workers and pinned staging buffers.
HOST_MEMORY_SHARE = 0.8

# Bytes per logit element with Transformer Engine's cross-entropy (cross_entropy_fusion_impl="te",
# transformer_engine/pytorch/cross_entropy.py): loss and gradient are computed in place in the bf16 logits.
# Megatron-Core's own paths, fused or not, cast the logits to fp32 first (tensor_parallel/cross_entropy.py,
# calculate_logits_max), which the fitted logits_bytes_per_element covers.
TE_LOGITS_BYTES = 2.0

# NVFP4 tensors (Transformer Engine tensor/nvfp4_tensor.py, NVFP4Quantizer.make_empty): two 4-bit values per
# byte plus one E4M3 scale byte per block of 16 values, for each orientation a tensor is kept in.
NVFP4_BYTES_PER_ORIENTATION = 0.5 + 1 / 16
# A weight keeps both orientations: rowwise for the forward GEMM, columnwise for the data-gradient GEMM.
NVFP4_WEIGHT_BYTES = 2 * NVFP4_BYTES_PER_ORIENTATION
# A GEMM input saved for backward keeps the columnwise copy the weight-gradient GEMM reads (the linear
# modules drop the rowwise data after the forward GEMM: update_usage(rowwise_usage=False)).
NVFP4_SAVED_INPUT_BYTES = NVFP4_BYTES_PER_ORIENTATION


class MemoryOverheads(Record):
    """Constants that are not a function of the model; ingest/calibration.py fits them (defaults = priors)."""

    workspace_gib: float = 1.0  # cuBLAS/TE workspaces, allocator-visible
    activation_scale: float = 1.0  # multiplies the counted activations (unmodelled temporaries)
    logits_bytes_per_element: float = 6.0  # bf16 logits + fp32 copy for the cross-entropy
    non_torch_gib: float = 1.5  # CUDA context and NCCL buffers, outside the PyTorch allocator
    fragmentation: float = 0.05  # reserved / allocated - 1
    cuda_graph_gib: float = 3.0  # static graph pools, PP = 1 (Bridge docs: "a few GB")
    cuda_graph_pp_gib: float = 10.0  # with PP > 1 (Bridge docs: ">10 GB")
    source: str = "prior (uncalibrated)"


class MemoryBreakdown(Record):
    params: float
    grads: float
    optimizer: float
    activations: float
    logits: float
    overheads: float


class MemoryEstimate(Record):
    peak_bytes: float
    usable_bytes: float
    fits: bool
    margin_bytes: float
    breakdown: MemoryBreakdown
    tight: bool  # the margin is inside the estimator's typical error (TIGHT_MARGIN of the usable memory)
    allocated_bytes: float  # what torch.cuda.max_memory_allocated would report
    stage: str  # which pipeline stage is the most loaded: "first" or "last"
    offloaded_bytes: float = 0.0  # activations waiting in host memory (CPU offloading)
    # allocated_bytes of every pipeline stage checked ("first", "last", "stage N"): the busiest stage decides
    # the fit, but a measurement (Megatron's tests log the last rank) is of one stage
    stage_allocated_bytes: dict[str, float] = Field(default_factory=dict)
    assumptions: list[str] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Stage:
    mix: LayerMix  # the sublayers of the layers this pipeline rank holds
    has_embedding: bool
    has_output: bool
    inflight_layers: float  # sum over in-flight micro-batches of the layers each holds
    inflight_microbatches: int


def data_parallel_size(layout: Plan, num_gpus: int) -> int:
    model_parallel = layout.tp * layout.pp * layout.cp
    if num_gpus % model_parallel:
        raise UserError(f"{num_gpus} GPUs is not a multiple of TP·PP·CP = {model_parallel}")
    return num_gpus // model_parallel


def chunk_sizes(layers: int, chunks: int) -> list[int]:
    """Transformer layers per model chunk as Megatron splits them: evenly when possible, else counting the
    embedding (first chunk) and then the loss (last chunk) as one layer each (account_for_*_in_pipeline_
    split), else spreading layers + 2 slots as evenly as possible (what an explicit layout does)."""
    for extra in (0, 1, 2):
        if (layers + extra) % chunks == 0:
            sizes = [(layers + extra) // chunks] * chunks
            break
    else:
        extra = 2
        sizes = [(layers + 2) // chunks + (1 if i < (layers + 2) % chunks else 0) for i in range(chunks)]
    if extra:
        sizes[0] -= 1
    if extra == 2:
        sizes[-1] -= 1
    return sizes


def pipeline_chunks(
    layers: int,
    pp: int,
    vp: int = 1,
    *,
    first: int | None = None,
    last: int | None = None,
    layout: list | None = None,
) -> tuple[int, ...] | None:
    """Decoder layers per model chunk (chunk vp_stage·pp + pp_rank) when the recipe fixes the split, else
    None (the even split of `chunk_sizes`). `layout` is Megatron's pipeline_model_parallel_layout as a list
    of per-chunk lists of layer names (PipelineParallelLayerLayout: chunk vp·pp + rank, "decoder" entries
    are layers); `first`/`last` are num_layers_in_first/last_pipeline_stage, the other stages sharing the
    rest evenly and every stage splitting its layers evenly over its chunks (transformer_block.py,
    get_num_layers_to_build)."""
    if layout is not None:
        if len(layout) != pp * vp or not all(isinstance(chunk, list) for chunk in layout):
            return None
        sizes = tuple(sum(1 for name in chunk if name in ("decoder", "t")) for chunk in layout)
        return sizes if sum(sizes) == layers else None
    if first is None and last is None:
        return None
    middle_stages = pp - (first is not None) - (last is not None)
    rest = layers - (first or 0) - (last or 0)
    if (
        middle_stages < 0
        or rest < 0
        or (middle_stages and rest % middle_stages)
        or (not middle_stages and rest)
    ):
        return None
    per_stage = [rest // middle_stages if middle_stages else 0] * pp
    if first is not None:
        per_stage[0] = first
    if last is not None:
        per_stage[-1] = last
    if any(n % vp for n in per_stage):
        return None
    return tuple(per_stage[c % pp] // vp for c in range(pp * vp))


@lru_cache(maxsize=4096)
def stage_layers(kinds: str, pp: int, vp: int, rank: int, chunks: tuple[int, ...] | None = None) -> LayerMix:
    """The sublayers of pipeline rank `rank`, which holds model chunks rank, rank + pp, ... (`kinds`: one
    letter per layer, shapes.layer_kinds; `chunks`: the recipe's own split, see pipeline_chunks)."""
    sizes = list(chunks) if chunks else chunk_sizes(len(kinds), pp * vp)
    starts = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    return mix_of("".join(kinds[starts[j * pp + rank] : starts[j * pp + rank + 1]] for j in range(vp)))


def _stages_to_check(kinds: str, pp: int, vp: int, chunks: tuple[int, ...] | None = None) -> list[int]:
    """The first stage (embedding, most micro-batches in flight), the last (output layer, logits) and,
    for uneven splits, the stage holding the most layers."""
    busiest = max(range(pp), key=lambda r: stage_layers(kinds, pp, vp, r, chunks).layers)
    return sorted({0, busiest, pp - 1})


def _stage(
    pp: int, vp: int, rank: int, microbatches: int, kinds: str, chunks: tuple[int, ...] | None = None
) -> _Stage:
    mix = stage_layers(kinds, pp, vp, rank, chunks)
    n_layers = mix.layers
    chunk_layers = n_layers / vp
    if vp > 1:
        warmup = (pp - rank - 1) * 2 + (vp - 1) * pp + 1
        inflight_chunks = min(microbatches * vp, warmup)
        inflight_layers = inflight_chunks * chunk_layers
        inflight_mb = math.ceil(inflight_chunks / vp)
    else:
        inflight_mb = min(microbatches, pp - rank)
        inflight_layers = inflight_mb * n_layers
    return _Stage(mix, rank == 0, rank == pp - 1, inflight_layers, max(1, inflight_mb))


def _sublayer_elements(d: Dims, kind: str, modules: set[str]) -> tuple[float, float]:
    """Saved elements per token of one sublayer ("attn", "mlp", "moe" or "mamba") with its pre-norm, before
    TP/CP division: (bf16-sized, fp8-eligible GEMM inputs).

    GEMM inputs (norm outputs, attention output, activation output) are saved in FP8 by Transformer Engine
    when training in FP8, so they are returned separately.
    """
    h = d.hidden
    if kind in ("csa", "hca"):
        return _dsv4_compressed_elements(d, kind), 0.0
    # the norm's input; with hyper-connections also the n-stream residual the HyperConnectionModule mixes
    plain: float = h + (d.streams * h if d.streams > 1 else 0)
    norm_out = 0.0 if "layernorm" in modules and kind != "mamba" else h  # the first GEMM's input
    if kind == "attn":
        gemm_in = norm_out
        if d.dsv4:
            # q_down output (q norm input), the KV head before and after its norm, the up-projected queries
            # (dropped by mla_up_proj recompute), softmax statistics; GEMM inputs: the normed q latent, the
            # attention output (linear_o_group_proj input) and the grouped output (linear_proj input).
            up = 0.0 if "mla_up_proj" in modules else d.heads * d.v_dim
            plain += (d.q_lora or 0) + 2 * d.v_dim + up
            gemm_in += (d.q_lora or 0) + d.heads * d.v_dim + d.o_groups * d.o_lora
        elif d.mla:
            qk = d.qk_dim + d.qk_pos
            latents = (d.q_lora or 0) + d.kv_lora + d.qk_pos
            up = 0.0 if "mla_up_proj" in modules else d.heads * (2 * qk + d.v_dim)
            plain += latents + up
            gemm_in += d.heads * d.v_dim  # attention output = output-projection input
        else:
            plain += d.q_width + 2 * d.kv_width
            gemm_in += d.q_width
        return plain + 2 * d.heads, gemm_in  # with the softmax statistics (fp32) of flash attention
    if kind == "mlp":
        if "mlp" in modules:
            return plain, norm_out
        return plain + (2 if d.gated else 1) * d.ffn, norm_out + d.ffn
    if kind == "mamba":
        # in_proj output (z, x, B, C, dt), the convolution's output, the scan's output y, and the gated
        # norm's output (the out_proj input); the scan recomputes its chunk states in backward.
        return plain + d.mamba_in_width + d.mamba_conv_width + d.d_inner, norm_out + d.d_inner
    if kind == "gdn":
        # The same tensors for a Gated DeltaNet mixer: in_proj output (q, k, v, z, beta, alpha), the
        # convolution's output (q, k, v), the delta-rule output, and the gated norm's output (out_proj input).
        return plain + d.gdn_in_width + d.gdn_conv_width + d.lin_v, norm_out + d.lin_v
    plain += 2 * d.experts  # router logits and probabilities (fp32)
    gemm_in = norm_out
    if "moe" not in modules:
        # The router's probabilities are applied inside the expert activation (weighted SwiGLU, the
        # permuted_probs of experts.py), so the unpermute that combines the expert outputs saves nothing.
        k = d.topk
        gemm_in += k * d.expert_io  # permuted expert input
        plain += k * (2 if d.gated else 1) * d.moe_ffn
        if "moe_act" not in modules:
            gemm_in += k * d.moe_ffn
    if d.shared_ffn:
        plain += (2 if d.gated else 1) * d.shared_ffn
        gemm_in += d.shared_ffn
    gemm_in += d.latent  # LatentMoE: the combined tokens are the up-projection's input
    return plain, gemm_in


def _dsv4_compressed_elements(d: Dims, kind: str) -> float:
    """Saved elements per token that a DSv4 CSA ("csa") or HCA ("hca") attention adds to the window-only
    block: its compressor's linear_wkv and linear_wgate outputs (coff·512 each, coff 2 for the overlapping 4x
    windows) and the compressed keys (512 per `ratio` tokens); on CSA the indexer's queries (heads × 128), its
    per-head weights, its own compressor (the same tensors at width 128) and the top-k indices (int32)."""
    if kind == "hca":
        return 2 * d.v_dim + d.v_dim / 128
    compressor = 2 * 2 * d.v_dim + d.v_dim / 4
    indexer = d.idx_heads * d.idx_dim + d.idx_heads + 2 * 2 * d.idx_dim + d.idx_dim / 4 + 2 * d.idx_topk
    return compressor + indexer


def _lora_sublayer_elements(
    d: Dims, kind: str, targets: frozenset[str], modules: set[str]
) -> tuple[float, float]:
    """Saved elements per token of one sublayer with a frozen base (LoRA), all kept in bf16.

    A frozen linear layer saves no input: Transformer Engine keeps a GEMM's input only for the weight
    gradient (`if weight.requires_grad` in module/linear.py). What is still saved: each norm's input (its
    own backward), the attention core's q, k, v, output and softmax statistics, the activation function's
    input, the router's logits, and each adapted linear's input, which its LoRA A matrix keeps in bf16
    (peft/lora.py wraps the linear; the adapter sees the same input tensor). Selective recompute drops
    what full training drops (_sublayer_elements): the norm outputs ("layernorm"), a recomputed MLP's or
    MoE's inner tensors, which keep only their input ("mlp", "moe"), the expert activation's output
    ("moe_act").
    """
    h = d.hidden
    norm_out = 0.0 if "layernorm" in modules else h
    if kind == "attn" and d.dsv4:  # no adapter targets in it: what full training saves, all in bf16
        saved, gemm_in = _sublayer_elements(d, kind, modules)
        return saved + gemm_in, 0.0
    if kind == "attn":
        out = d.heads * d.v_dim if d.mla else d.q_width
        core = (d.q_lora or 0) + d.kv_lora + d.qk_pos + d.heads * (2 * (d.qk_dim + d.qk_pos) + d.v_dim) \
            if d.mla else d.q_width + 2 * d.kv_width  # fmt: skip
        return h + core + out + 2 * d.heads + (norm_out if "linear_qkv" in targets else 0.0), 0.0
    if kind == "mlp":
        if "mlp" in modules:
            return h + norm_out, 0.0  # the checkpointed MLP keeps its input
        fc1_in = norm_out if "linear_fc1" in targets else 0.0
        fc2_in = d.ffn if "linear_fc2" in targets else 0.0
        return h + (2 if d.gated else 1) * d.ffn + fc2_in + fc1_in, 0.0
    if kind == "moe":
        k = d.topk
        plain: float = h + 2 * d.experts
        if "moe" in modules:
            plain += norm_out  # the checkpointed MoE keeps its input
        else:
            plain += k * (2 if d.gated else 1) * d.moe_ffn
            if "linear_fc1" in targets:
                plain += norm_out + k * d.expert_io  # the norm output and the permuted expert input
            if "linear_fc2" in targets and "moe_act" not in modules:
                plain += k * d.moe_ffn
        if d.shared_ffn:
            plain += (2 if d.gated else 1) * d.shared_ffn + (d.shared_ffn if "linear_fc2" in targets else 0.0)
        return plain + d.latent, 0.0
    return _sublayer_elements(d, kind, modules)  # Mamba and DeltaNet mixers: counted as in full training


def _mix_elements(
    d: Dims, mix: LayerMix, modules: set[str], lora_targets: frozenset[str] | None = None
) -> tuple[float, float]:
    """Saved elements per token of all the sublayers in `mix` (see _sublayer_elements); with
    `lora_targets`, of a frozen base with adapters on those linear layers (_lora_sublayer_elements)."""
    plain = gemm = 0.0
    # each attention shape's sublayers with that shape's heads, groups and head size (shapes.attention_shapes)
    kinds = [(shape, "attn", n) for shape, n in attention_shapes(d, mix)]
    kinds += [(d, "mlp", mix.mlp), (d, "moe", mix.moe), (d, "mamba", mix.mamba), (d, "gdn", mix.gdn),
              (d, "csa", mix.csa), (d, "hca", mix.hca)]  # fmt: skip
    for dims, kind, count in kinds:
        if count:
            if lora_targets is None:
                p, g = _sublayer_elements(dims, kind, modules)
            else:
                p, g = _lora_sublayer_elements(dims, kind, lora_targets, modules)
            plain, gemm = plain + count * p, gemm + count * g
    return plain, gemm


def _score_layers(d: Dims, mix: LayerMix) -> float:
    """Attention sublayers of `mix` counted in main-shape heads: unfused scores are kept per head."""
    if not mix.other_attn:
        return mix.attn
    return sum(shape.heads * n for shape, n in attention_shapes(d, mix)) / d.heads


def estimate_memory(
    arch: ModelArch,
    layout: Plan,
    hw: GpuSpec,
    run: RunSettings,
    *,
    overheads: MemoryOverheads | None = None,
    stage: Literal["max", "first", "last"] = "max",
) -> MemoryEstimate:
    """Peak bytes per GPU on the most loaded (or the named) pipeline stage, broken down, with a verdict.
    `run.offload_layers` (Megatron's cpu_offloading_num_layers): those layers' activations wait in host
    memory. `run.features.te_cross_entropy`: the recipe fuses the cross-entropy with Transformer Engine.
    `run.features.mtp_repeated` (mtp_use_repeated_layer): the MTP passes reuse one block's weights.
    `run.pipeline_split`: the recipe's own layers per model chunk, used when the plan has its PP and VP."""
    ov = overheads or MemoryOverheads()
    seq_length, mode, recompute = run.seq_length, run.mode, run.recompute
    offload_layers, mtp_layers = run.offload_layers, run.features.mtp_layers
    mtp_repeated = run.features.mtp_repeated
    d = dims_of(arch)
    mbs = run.micro_batch_size or layout.mbs
    gbs = run.global_batch_size or layout.gbs
    gpus = run.num_gpus or layout.num_gpus
    t, p, c = layout.tp, layout.pp, layout.cp
    e, et = layout.ep or 1, layout.etp or layout.tp
    v = layout.vp or 1
    if min(t, p, c, e, et, v, mbs, gbs, seq_length) < 1:
        raise UserError("parallel sizes, batch sizes and seq_length must be positive")
    dp = data_parallel_size(layout, gpus)
    if gbs % (mbs * dp):
        raise UserError(f"global batch {gbs} is not divisible by micro batch {mbs} × DP {dp}")
    microbatches = gbs // (mbs * dp)
    if p * v > d.layers + 2:
        raise UserError(
            f"PP·VP = {p * v} model chunks exceed the {d.layers} layers (+2 for embedding and loss)"
        )
    check_offload(offload_layers, d.layers, p, recompute)
    unit = precision_unit(run.precision)
    fp8 = unit in {"fp8", "fp4"}
    quantized_weights = weight_bytes(run) < 2.0
    sp = layout.sp and t > 1
    assumptions: list[str] = []

    # ---- weights, gradients, optimizer state
    dense_shard = dp * c if run.distributed_optimizer or run.fsdp else 1
    expert_dp = max(1, gpus // (et * e * p))
    expert_shard = expert_dp if run.distributed_optimizer or run.fsdp else 1
    param_bytes = weight_bytes(run)
    grad_bytes = 4.0 if run.grad_reduce_in_fp32 else 2.0
    opt_bytes = run.optimizer_bytes or (8.0 if run.precision_aware_optimizer else 12.0)
    if quantized_weights:
        held = f"NVFP4 parameters: weights held in {NVFP4_WEIGHT_BYTES:g} bytes" if unit == "fp4" else \
            "FP8 parameters: weights held in 1 byte"  # fmt: skip
        assumptions.append(f"{held}, master copy in the optimizer")

    kinds = layer_kinds(arch)
    vocab = padded_vocab(d.vocab, t)
    split = run.pipeline_split
    chunk_layers = (
        split.chunks if split and (split.pp, split.vp) == (p, v) and sum(split.chunks) == len(kinds) else None
    )
    ranks = _stages_to_check(kinds, p, v, chunk_layers)
    stages = [_stage(p, v, r, microbatches, kinds, chunk_layers) for r in ranks]
    modules = set(run.recompute_modules or (["core_attn"] if recompute == "selective" else []))
    saved_modules = modules if recompute == "selective" else set()
    gemm_byte = saved_input_bytes(unit)
    tokens = seq_length * mbs / c  # tokens one rank sees per micro-batch
    tp_div = t if sp else 1

    # Unfused attention (TE's UnfusedDotProductAttention, Megatron's local DotProductAttention) keeps the
    # s×s softmax output (bf16) per head; with attention dropout also the dropout's bool mask and its bf16
    # output, which the probabilities×V batched GEMM saves: 5 bytes per score instead of 2.
    score_bytes = 5.0 if run.attention_dropout > 0 else 2.0
    scores = score_bytes * d.heads * seq_length * (seq_length / c) * mbs / (t * c) if run.unfused_attention \
        else 0.0  # fmt: skip
    # Hidden dropout in each sublayer's bias-dropout-add (fusions/fused_bias_dropout.py) keeps a bool mask of
    # its output for backward, split by TP only with sequence parallelism.
    dropout_masks = tokens * d.hidden / tp_div if run.hidden_dropout > 0 else 0.0

    frozen = frozen_linears(run)

    def saved_bytes(mix: LayerMix) -> float:
        """What the layers of `mix` save for backward, one micro-batch."""
        plain, gemm = _mix_elements(d, mix, saved_modules, frozen)
        return _saved_layer_bytes(plain, gemm, tokens=tokens, hidden=d.hidden, t=t, gemm_byte=gemm_byte,
                                  sp=sp, scores=scores * _score_layers(d, mix), norms=mix.sublayers) \
            + dropout_masks * mix.sublayers  # fmt: skip

    def full_bytes(mix: LayerMix) -> float:
        """The same with nothing recomputed: what a fully recomputed layer rebuilds during backward."""
        plain, gemm = _mix_elements(d, mix, set(), frozen)
        attention_scores = scores * _score_layers(d, mix)
        return tokens * (2 * (plain + gemm)) / t + attention_scores + dropout_masks * mix.sublayers

    results = []
    for rank, st in zip(ranks, stages, strict=True):
        weight_mix = st.mix
        if st.has_output and mtp_layers:
            # Multi-token prediction: extra layers (same type as the last layer) and heads on the last stage;
            # with mtp_use_repeated_layer every pass runs one block's weights (gpt_layer_specs.py builds one).
            extra = mtp_layers * st.inflight_layers / max(1, st.mix.layers)
            weight_mix = st.mix + mix_of(d.mtp_block * (1 if mtp_repeated else mtp_layers))
            st = _Stage(
                st.mix + mix_of(d.mtp_block * mtp_layers),
                st.has_embedding,
                True,
                st.inflight_layers + extra,
                st.inflight_microbatches,
            )
        lp = mix_params(d, weight_mix)
        sharded = lp.tp_sharded / t
        if st.has_embedding:
            sharded += d.hidden * vocab / t
        if st.has_output and (not d.tied or p > 1):
            sharded += d.hidden * vocab / t
        if st.has_output and mtp_layers:
            mtp_blocks = 1 if mtp_repeated else mtp_layers
            sharded += mtp_blocks * 2 * d.hidden * d.hidden / t  # the MTP input projections
        replicated = lp.replicated + d.hidden
        experts = lp.routed / (et * e)
        weights = sharded + replicated + experts
        if mode == "peft":
            adapters = _lora_params(d, weight_mix, run.lora_rank, frozen or frozenset(LORA_TARGETS)) / t
            params = weights * param_bytes + adapters * 2
            grads = adapters * grad_bytes
            optimizer = adapters * opt_bytes / dense_shard
        else:
            trained = 0.0 if run.language_model_frozen else 1.0  # a frozen language model keeps its weights
            params = weights * param_bytes
            grads = weights * grad_bytes * trained
            optimizer = trained * ((sharded + replicated) * opt_bytes / dense_shard
                                   + experts * opt_bytes / expert_shard)  # fmt: skip
            if run.fsdp:
                params = params / dense_shard + _largest_layer(d, kinds, t, e, et) * 2 * param_bytes
                grads /= dense_shard
        if fp8 and not quantized_weights:
            # Transformer Engine's cached FP8/NVFP4 weight copies; Megatron-FSDP casts the shards it holds.
            params += (sharded + experts) * quantized_copy_bytes(unit) / (dense_shard if run.fsdp else 1)
        if st.has_embedding and arch.vision is not None:
            tower = _vision_state(arch.vision, run, t, grad_bytes, opt_bytes, dense_shard)
            params, grads, optimizer = params + tower[0], grads + tower[1], optimizer + tower[2]

        # ---- activations
        n_layers = st.mix.layers
        per_layer = saved_bytes(st.mix) / n_layers if n_layers else 0.0
        per_layer_full = full_bytes(st.mix) / n_layers if n_layers else 0.0
        checkpoint = tokens * d.hidden * d.streams * 2 / tp_div  # the layer input kept by full recompute
        if recompute == "full":
            # Megatron-Core TransformerBlock._checkpointed_forward, per model chunk (a VP chunk is a block):
            # "uniform" checkpoints every group of recompute_num_layers layers (one saved input per group,
            # one group rebuilt in backward); "block" recomputes the first recompute_num_layers layers of
            # each chunk and keeps the rest whole.
            group = max(1, int(run.recompute_num_layers or 1))
            if run.recompute_method == "uniform":
                per_mb_layer = checkpoint / group
                rebuilt = per_layer_full * min(group, n_layers)
            else:
                chunk = n_layers / v
                kept = chunk if run.recompute_num_layers is None else min(chunk, run.recompute_num_layers)
                frac = kept / chunk if chunk else 0.0
                per_mb_layer = frac * checkpoint + (1 - frac) * per_layer
                rebuilt = per_layer_full
            activations = st.inflight_layers * per_mb_layer + rebuilt
        else:
            # Offloaded layers leave the GPU; the one in transfer still occupies a buffer.
            resident = st.inflight_layers - offload_layers + (1 if offload_layers else 0)
            activations = resident * per_layer
        if st.has_embedding:
            activations += st.inflight_microbatches * tokens * d.hidden * 2 / tp_div
        activations *= ov.activation_scale
        offloaded = offload_layers * per_layer * ov.activation_scale
        logit_bytes = TE_LOGITS_BYTES if run.features.te_cross_entropy else ov.logits_bytes_per_element
        logits = tokens * vocab / t * logit_bytes * (1 + mtp_layers) if st.has_output else 0.0
        allocated = params + grads + optimizer + activations + logits + ov.workspace_gib * GIB
        results.append((allocated, rank, params, grads, optimizer, activations, logits, offloaded))

    by_stage = {_stage_name(r[1], p): r[0] for r in results}
    if stage != "max":
        results = [results[0] if stage == "first" else results[-1]]  # ranks are sorted: 0 first, pp-1 last
    allocated, rank, params, grads, optimizer, activations, logits, offloaded = max(results)
    overhead, peak = fixed_terms(allocated, ov, cuda_graphs=run.cuda_graphs, pp=p)
    assumptions += _assumptions(sp, t, unit, quantized_weights, recompute, modules, run.distributed_optimizer,
                                dp, c, ov, run.cuda_graphs)  # fmt: skip
    if run.unfused_attention:
        stored = "softmax output, dropout mask and output" if run.attention_dropout > 0 else "softmax output"
        assumptions.append(f"unfused attention: the s×s {stored} of every head is stored")
    if run.hidden_dropout > 0:
        assumptions.append("hidden dropout: each sublayer keeps a 1-byte mask of its output")
    assumptions += _vlm_assumptions(arch, run)
    host_fits = offloaded <= HOST_MEMORY_SHARE * hw.host_memory_bytes
    if offload_layers:
        host = f"{HOST_MEMORY_SHARE:.0%} of the {hw.host_memory_bytes / GIB:.0f} GiB per GPU usable"
        assumptions.append(
            f"CPU activation offloading of {offload_layers} layers: {offloaded / GIB:.0f} GiB per GPU wait "
            f"in host memory ({host}"
            + ("" if host_fits else ": too much, offload fewer layers or lower the micro-batch")
            + "), one layer's buffer stays on the GPU"
        )
    return MemoryEstimate(
        peak_bytes=peak,
        usable_bytes=hw.usable_bytes,
        fits=peak <= hw.usable_bytes and host_fits,
        margin_bytes=hw.usable_bytes - peak,
        tight=abs(hw.usable_bytes - peak) < TIGHT_MARGIN * hw.usable_bytes,
        breakdown=MemoryBreakdown(
            params=params,
            grads=grads,
            optimizer=optimizer,
            activations=activations,
            logits=logits,
            overheads=overhead,
        ),
        allocated_bytes=allocated,
        stage=_stage_name(rank, p),
        stage_allocated_bytes=by_stage,
        offloaded_bytes=offloaded,
        assumptions=assumptions,
    )


def fixed_terms(allocated: float, ov: MemoryOverheads, *, cuda_graphs: bool, pp: int) -> tuple[float, float]:
    """(overheads, peak) of a stage that allocates `allocated` bytes (workspaces included): the CUDA context
    and NCCL, allocator fragmentation and CUDA-graph pools come on top; the workspaces count as overhead."""
    graph = (ov.cuda_graph_pp_gib if pp > 1 else ov.cuda_graph_gib) * GIB if cuda_graphs else 0.0
    overhead = ov.workspace_gib * GIB + allocated * ov.fragmentation + ov.non_torch_gib * GIB + graph
    peak = allocated * (1 + ov.fragmentation) + ov.non_torch_gib * GIB + graph
    return overhead, peak


def frozen_linears(run: RunSettings) -> frozenset[str] | None:
    """The linear layers whose base weights train nothing, so whose inputs are not saved: in a LoRA run all
    but the adapted ones keep theirs off (the adapters' targets are returned), with a frozen language
    model every one (empty set); None when the whole model trains."""
    if run.mode == "peft":
        return frozenset(run.features.lora_targets or LORA_TARGETS)
    return frozenset() if run.language_model_frozen else None


def _vision_state(
    tower: VisionTowerDims, run: RunSettings, t: int, grad_bytes: float, opt_bytes: float, dense_shard: int
) -> tuple[float, float, float]:
    """Weights, gradients and optimizer state of a VLM's vision tower on the first stage (bytes): in bf16
    (Bridge builds it without the FP8 recipe), its Megatron-built parts sharded by TP, trained unless the
    recipe freezes it (freeze_vision_model, freeze_vision_projection) or the run is LoRA (a frozen base)."""
    counts = vision_params(tower)
    encoder, projector = counts.encoder_per_rank(t), counts.projector_per_rank(t)
    frozen = run.features.frozen
    trained = 0.0 if run.mode == "peft" else (
        (0.0 if "vision_model" in frozen else encoder) + (0.0 if "vision_projection" in frozen else projector)
    )  # fmt: skip
    held = dense_shard if run.fsdp else 1
    return (encoder + projector) * 2.0 / held, trained * grad_bytes / held, trained * opt_bytes / dense_shard


def _vlm_assumptions(arch: ModelArch, run: RunSettings) -> list[str]:
    out = []
    if arch.vision is not None:
        total = vision_params(arch.vision).total
        out.append(
            f"vision tower: {total / 1e6:.0f}M parameters (encoder and projector) on the first stage; its "
            "activations depend on the images per sample and are not counted"
        )
    elif arch.is_vlm:
        out.append("vision tower not counted: its widths are not in this model's record")
    if run.features.frozen and run.mode != "peft":
        parts = ", ".join(part.replace("_", " ") for part in run.features.frozen)
        out.append(f"frozen: {parts} (weights only, no gradients or optimizer state)")
    return out


def _stage_name(rank: int, pp: int) -> str:
    return "first" if rank == 0 else "last" if rank == pp - 1 else f"stage {rank}"


def check_offload(offload_layers: int, layers: int, pp: int, recompute: Recompute) -> None:
    """Megatron-Core's own limits on CPU activation offloading (TransformerConfig.__post_init__)."""
    if not offload_layers:
        return
    if not 0 < offload_layers < layers:
        hint = f"set model.cpu_offloading_num_layers below {layers}"
        raise UserError(f"{upstream.offload_layers(layers)}: {hint}")
    if pp > 1:
        raise UserError(f"{upstream.OFFLOAD_PP}: use PP=1 or set model.cpu_offloading=false")
    if recompute is not None:
        hint = "set model.recompute_granularity=null or model.cpu_offloading=false"
        raise UserError(f"{upstream.OFFLOAD_RECOMPUTE}: {hint}")


def layer_activation_bytes(
    arch: ModelArch,
    layout: Plan,
    *,
    seq_length: int,
    precision: str = "bf16",
    micro_batch_size: int | None = None,
) -> float:
    """Saved activation bytes of one layer (mean over dense and MoE layers) for one micro-batch on one GPU,
    without recompute and with fused attention: what CPU offloading moves to the host and back per layer
    (the same per-layer bytes estimate_memory counts)."""
    d = dims_of(arch)
    t, c = layout.tp, layout.cp
    tokens = seq_length * (micro_batch_size or layout.mbs) / c
    gemm_byte = saved_input_bytes(precision_unit(precision))
    mix = mix_of(layer_kinds(arch))
    plain, gemm = _mix_elements(d, mix, set())
    total = _saved_layer_bytes(plain, gemm, tokens=tokens, hidden=d.hidden, t=t, gemm_byte=gemm_byte,
                               sp=layout.sp, scores=0.0, norms=mix.sublayers)  # fmt: skip
    return total / mix.layers


def _saved_layer_bytes(
    plain: float,
    gemm: float,
    *,
    tokens: float,
    hidden: int,
    t: int,
    gemm_byte: float,
    sp: bool,
    scores: float,
    norms: int,
) -> float:
    """Bytes layers save for backward on one rank and micro-batch: their activations (GEMM inputs in FP8
    when the run is), the inputs and outputs of their `norms` pre-norms, which each TP rank keeps whole
    without sequence parallelism, and unfused attention scores."""
    replicated_norms = 0.0 if sp else tokens * (2 + gemm_byte) * norms * hidden * (1 - 1 / t)
    return tokens * (2 * plain + gemm_byte * gemm) / t + replicated_norms + scores


def _lora_params(d: Dims, mix: LayerMix, rank: int, targets: frozenset[str]) -> float:
    """LoRA A and B matrices on the targeted linear layers: linear_qkv and linear_proj of each attention,
    linear_fc1 and linear_fc2 of each MLP or MoE block (at the dense MLP's width), each attention shape at
    its own widths."""
    fc1_out = (2 if d.gated else 1) * d.ffn
    sizes = {"linear_fc1": d.hidden + fc1_out, "linear_fc2": d.ffn + d.hidden}
    mlp = rank * sum(sizes[k] for k in ("linear_fc1", "linear_fc2") if k in targets)
    attention = 0
    for shape, n in attention_shapes(d, mix):
        qkv_out = shape.q_width + 2 * shape.kv_width
        widths = {"linear_qkv": d.hidden + qkv_out, "linear_proj": shape.q_width + d.hidden}
        attention += n * rank * sum(widths[k] for k in ("linear_qkv", "linear_proj") if k in targets)
    return attention + (mix.mlp + mix.moe) * mlp


def _largest_layer(d: Dims, kinds: str, t: int, e: int, et: int) -> float:
    """Parameters per GPU of the largest layer: what Megatron-FSDP gathers whole at a time."""

    def size(lp: LayerParams) -> float:
        return lp.tp_sharded + lp.routed / e

    return max(size(mix_params(d, mix_of(kind))) for kind in set(kinds)) / max(t, et)


def quantized_copy_bytes(unit: str) -> float:
    """Bytes per weight of Transformer Engine's low-precision copy of a weight: FP8 1, NVFP4 1.125."""
    return NVFP4_WEIGHT_BYTES if unit == "fp4" else 1.0


def saved_input_bytes(unit: str) -> float:
    """Bytes per element of a GEMM input saved for backward at this tensor-core precision."""
    return {"fp4": NVFP4_SAVED_INPUT_BYTES, "fp8": 1.0}.get(unit, 2.0)


def weight_bytes(run: RunSettings) -> float:
    """Bytes per weight the model holds: bf16, or the quantized size when the run keeps its primary weights
    quantized (fp4_param in an NVFP4 run, fp8_param otherwise; the fp32 master is the optimizer's)."""
    if precision_unit(run.precision) == "fp4":
        return NVFP4_WEIGHT_BYTES if run.fp4_param else 2.0
    return 1.0 if run.fp8_param else 2.0


def _assumptions(
    sp, t, unit, quantized_weights, recompute, modules, dist_opt, dp, c, ov, cuda_graphs
) -> list[str]:
    out = [
        "most loaded pipeline stage = max of the first stage (embedding, most in-flight micro-batches) "
        "and the last stage (output layer and logits)",
        "flash/fused attention unless stated: no s×s score matrix is stored",
        f"fixed overheads: {ov.workspace_gib:g} GiB workspaces, "
        f"{ov.non_torch_gib:g} GiB CUDA context + NCCL, "
        f"{ov.fragmentation:.0%} fragmentation ({ov.source})",
    ]
    if t > 1:
        out.append("sequence parallelism on (activations divided by TP)" if sp else "no sequence parallelism")
    if unit == "fp4":
        out.append(
            f"NVFP4: GEMM inputs saved in {NVFP4_SAVED_INPUT_BYTES:g} bytes (4-bit values and a scale per 16)"
            + ("" if quantized_weights else f", cached NVFP4 weight copies add {NVFP4_WEIGHT_BYTES:g} "
               "bytes/param")
        )
    elif unit == "fp8":
        out.append(
            "FP8: GEMM inputs saved in 1 byte"
            + ("" if quantized_weights else ", cached FP8 weight copies add 1 byte/param")
        )
    if recompute == "full":
        out.append("full recompute: one checkpoint per layer plus one layer recomputed during backward")
    elif recompute == "selective":
        out.append(f"selective recompute of {sorted(modules)}")
    if dist_opt:
        out.append(f"distributed optimizer sharded over DP·CP = {dp * c}")
    if cuda_graphs:
        out.append("CUDA graph pools added as a fixed constant")
    return out


# ---------------------------------------------------------------- floor for pruning candidate layouts


def estimable(arch: ModelArch) -> bool:
    """Whether the memory estimator (and so the floor below) can describe this architecture."""
    return arch.vocab_size is not None and unmodelled_reason(arch) is None


def expert_params_per_gpu(arch: ModelArch, *, pp: int, ep: int, etp: int) -> float:
    """Routed-expert parameters one GPU holds on an even pipeline split (the estimator's mix_params)."""
    d = dims_of(arch)
    return mix_params(d, mix_of(layer_kinds(arch))).routed / (ep * etp * pp)


def memory_floor(
    arch: ModelArch,
    *,
    tp: int,
    pp: int,
    cp: int,
    ep: int,
    etp: int,
    world: int,
    micro_batch_size: int,
    microbatches: int,
    run: RunSettings,
) -> float:
    """A lower bound of estimate_memory's peak, cheap enough for every candidate layout a resize considers.

    The same per-stage weight, gradient, optimizer and activation terms with the run's dtypes, optimizer
    sharding and recompute, on the stages estimate_memory checks (Megatron's even split, no VP), for the
    micro-batches of a 1F1B warm-up, without what only adds: logits, embedding activations, MTP, FP8 weight
    copies, Megatron-FSDP's gathered layer, workspaces, fragmentation and the CUDA context. It prunes only
    layouts the full estimate would reject.
    """
    d = dims_of(arch)
    kinds = layer_kinds(arch)
    vocab = padded_vocab(d.vocab, tp)
    tokens = run.seq_length * micro_batch_size / cp
    sharded_state = run.distributed_optimizer or run.fsdp
    dense_shard = max(world // (tp * pp), 1) if sharded_state else 1
    expert_shard = max(world // (pp * ep * etp), 1) if sharded_state else 1
    param_bytes = weight_bytes(run)
    grad_bytes = 4.0 if run.grad_reduce_in_fp32 else 2.0
    opt_bytes = run.optimizer_bytes or (8.0 if run.precision_aware_optimizer else 12.0)
    peft = run.mode == "peft" or run.language_model_frozen  # weights only
    modules = set(run.recompute_modules or ["core_attn"]) if run.recompute == "selective" else set()
    frozen = frozen_linears(run)
    floor = 0.0
    for rank in _stages_to_check(kinds, pp, 1):
        mix = stage_layers(kinds, pp, 1, rank)
        lp = mix_params(d, mix)
        dense = lp.tp_sharded / tp + lp.replicated
        dense += d.hidden * vocab / tp * ((rank == 0) + (rank == pp - 1 and (not d.tied or pp > 1)))
        experts = lp.routed / (ep * etp)
        if peft:
            state = param_bytes * (dense + experts)  # the frozen base; adapters are too small for a bound
        else:
            held = (dense_shard if run.fsdp else 1, expert_shard if run.fsdp else 1)
            state = (param_bytes + grad_bytes) * (dense / held[0] + experts / held[1])
            state += opt_bytes * (dense / dense_shard + experts / expert_shard)
        if not mix.layers:
            activations = 0.0
        elif run.recompute == "full":
            activations = tokens * d.hidden * d.streams * 2 / tp * mix.layers  # the checkpointed layer inputs
        else:
            plain, gemm = _mix_elements(d, mix, modules, frozen)
            gemm_byte = saved_input_bytes(precision_unit(run.precision))
            activations = tokens * (2 * plain + gemm_byte * gemm) / tp  # saved tensors, split by TP
        floor = max(floor, state + activations * min(pp - rank, max(microbatches, 1)))
    return floor
