"""Memory of a diffusion transformer (Wan, FLUX) per GPU: the DiT's weights, gradients and optimizer state,
the activations its layers save (assistant.estimate.dit), and the same fixed terms as a language model.

The terms follow the language-model estimator (`memory.py`) where the code is shared: Megatron-Core's
distributed optimizer over DP·CP (`optimizer/distrib_optimizer.py`), the gradient buffer dtype
(`distributed/param_and_grad_buffer.py`), full recompute per chunk (`transformer/transformer_block.py`,
`_checkpointed_forward`), 1F1B in-flight micro-batches (`pipeline_parallel/schedules.py`). What differs:
no vocabulary (no embedding table, no logits), cross-attention in every layer, tokens = latent patches.
FLUX has two block kinds and its text tokens run through every block beside the image tokens.
"""

from __future__ import annotations

import math
from typing import Literal

from assistant.errors import UserError
from assistant.estimate.dit import (
    DitParams,
    dit_params,
    dit_saved_elements,
    flux_saved_elements,
    tensor_parallel_only,
)
from assistant.estimate.hardware import GIB, GpuSpec
from assistant.estimate.memory import (
    TIGHT_MARGIN,
    MemoryBreakdown,
    MemoryEstimate,
    MemoryOverheads,
    chunk_sizes,
    data_parallel_size,
    fixed_terms,
    weight_bytes,
)
from assistant.estimate.run import RunSettings
from assistant.records import ModelArch, Plan


def estimate_dit_memory(
    arch: ModelArch,
    layout: Plan,
    hw: GpuSpec,
    run: RunSettings,
    *,
    overheads: MemoryOverheads | None = None,
    stage: Literal["max", "first", "last"] = "max",
) -> MemoryEstimate:
    """Peak bytes per GPU of a Wan DiT run on its busiest (or the named) pipeline stage. `run.seq_length` is
    the video tokens of one micro-batch (dit.micro_batch_tokens)."""
    ov = overheads or MemoryOverheads()
    if run.mode == "peft":
        raise UserError("not estimated: LoRA on a diffusion transformer is not modelled")
    mbs, gbs = run.micro_batch_size or layout.mbs, run.global_batch_size or layout.gbs
    gpus = run.num_gpus or layout.num_gpus
    t, p, c = layout.tp, layout.pp, layout.cp
    if min(t, p, c, mbs, gbs, run.seq_length) < 1:
        raise UserError("parallel sizes, batch sizes and seq_length must be positive")
    if (layout.vp or 1) > 1 or (layout.ep or 1) > 1:
        raise UserError("not estimated: a diffusion transformer is estimated without VP or EP")
    dp = data_parallel_size(layout, gpus)
    if gbs % (mbs * dp):
        raise UserError(f"global batch {gbs} is not divisible by micro batch {mbs} × DP {dp}")
    if p > arch.num_layers:
        raise UserError(f"PP {p} exceeds the {arch.num_layers} layers")
    microbatches = gbs // (mbs * dp)
    sp = layout.sp and t > 1
    tp_div = t if sp else 1
    shard = dp * c if run.distributed_optimizer or run.fsdp else 1
    param_bytes, grad_bytes = weight_bytes(run), 4.0 if run.grad_reduce_in_fp32 else 2.0
    opt_bytes = run.optimizer_bytes or (8.0 if run.precision_aware_optimizer else 12.0)
    weights_of = dit_params(arch)
    if tensor_parallel_only(arch):  # FLUX
        bytes_per_weight = (param_bytes, grad_bytes, opt_bytes)
        return _flux_memory(arch, layout, hw, run, ov, weights_of, bytes_per_weight, shard)
    tokens = run.seq_length * mbs / c  # video tokens one rank holds per micro-batch
    saved = dit_saved_elements(arch, run.seq_length)
    per_layer = tokens * (saved.sequence / tp_div + saved.heads / t + saved.whole) * 2.0 * ov.activation_scale
    checkpoint = tokens * arch.hidden_size * 2.0 / tp_div
    layer_weights = weights_of.layer_sharded / t + weights_of.layer_replicated

    results = []
    sizes = chunk_sizes(arch.num_layers, p)
    for rank in sorted({0, p - 1}):
        n = sizes[rank]
        weights = n * layer_weights
        weights += weights_of.first_stage if rank == 0 else 0.0
        weights += weights_of.last_stage if rank == p - 1 else 0.0
        params, grads, optimizer = weights * param_bytes, weights * grad_bytes, weights * opt_bytes / shard
        if run.fsdp:
            params = params / shard + layer_weights * 2 * param_bytes  # the gathered layer
            grads /= shard
        inflight = min(microbatches, p - rank)
        if run.recompute == "full":
            group = max(1, int(run.recompute_num_layers or 1))
            if run.recompute_method == "uniform":
                kept, rebuilt = inflight * n * checkpoint / group, per_layer * min(group, n)
            else:
                recomputed = n if run.recompute_num_layers is None else min(n, run.recompute_num_layers)
                kept = inflight * (recomputed * checkpoint + (n - recomputed) * per_layer)
                rebuilt = per_layer
            activations = kept + rebuilt
        else:
            activations = inflight * n * per_layer
        if rank == 0:
            activations += inflight * checkpoint  # the patch embedding's output
        allocated = params + grads + optimizer + activations + ov.workspace_gib * GIB
        results.append((allocated, rank, params, grads, optimizer, activations))

    names = {p - 1: "last", 0: "first"}  # one stage (PP 1) is "first", as in memory.py
    by_stage = {names[r[1]]: r[0] for r in results}
    if stage != "max":
        results = [results[0] if stage == "first" else results[-1]]
    allocated, rank, params, grads, optimizer, activations = max(results)
    assumptions = [
        "diffusion transformer (Wan): self-attention, cross-attention to the text context and a GELU MLP per "
        "layer, adaLN modulation; no vocabulary, so no embedding table or logits",
        f"{math.ceil(tokens):,} video tokens per GPU and micro-batch (over CP {c})",
        "activations counted in bf16 (low-precision saved inputs are not modelled for a DiT)",
        f"fixed overheads: {ov.workspace_gib:g} GiB workspaces, {ov.non_torch_gib:g} GiB CUDA context + "
        f"NCCL, {ov.fragmentation:.0%} fragmentation ({ov.source})",
    ]
    if run.recompute == "full":
        assumptions.append("full recompute: a checkpoint per layer (or group), one layer rebuilt in backward")
    if shard > 1:
        assumptions.append(f"optimizer state sharded over DP·CP = {shard}")
    breakdown = MemoryBreakdown(
        params=params, grads=grads, optimizer=optimizer, activations=activations, logits=0.0, overheads=0.0
    )
    return _estimate(breakdown, allocated, names[rank], by_stage, assumptions, hw, run, ov, pp=p)


def _estimate(
    terms: MemoryBreakdown,
    allocated: float,
    stage: str,
    by_stage: dict[str, float],
    assumptions: list[str],
    hw: GpuSpec,
    run: RunSettings,
    ov: MemoryOverheads,
    *,
    pp: int,
) -> MemoryEstimate:
    """The estimate of the busiest stage: the fixed overheads (workspaces, CUDA context, fragmentation,
    CUDA graphs) on top of what the stage allocates."""
    overhead, peak = fixed_terms(allocated, ov, cuda_graphs=run.cuda_graphs, pp=pp)
    return MemoryEstimate(
        peak_bytes=peak,
        usable_bytes=hw.usable_bytes,
        fits=peak <= hw.usable_bytes,
        margin_bytes=hw.usable_bytes - peak,
        tight=abs(hw.usable_bytes - peak) < TIGHT_MARGIN * hw.usable_bytes,
        breakdown=terms.model_copy(update={"overheads": overhead}),
        allocated_bytes=allocated,
        stage=stage,
        stage_allocated_bytes=by_stage,
        assumptions=assumptions,
    )


def _flux_memory(
    arch: ModelArch,
    layout: Plan,
    hw: GpuSpec,
    run: RunSettings,
    ov: MemoryOverheads,
    weights_of: DitParams,
    bytes_per_weight: tuple[float, float, float],
    shard: int,
) -> MemoryEstimate:
    """Peak bytes per GPU of a FLUX run. `run.seq_length` is one sample's image + text tokens
    (dit.micro_batch_tokens); a micro-batch stacks micro_batch_size samples. Bridge's Flux builds every block
    on every rank and scatters no sequence, so only TP and DP are modelled. `bytes_per_weight`: parameter,
    gradient and optimizer bytes; the optimizer state is sharded over `shard` (DP)."""
    dd = arch.diffusion
    assert dd is not None  # the caller dispatched on it
    t, mbs = layout.tp, run.micro_batch_size or layout.mbs
    if layout.pp > 1 or layout.cp > 1:
        raise UserError(
            "not estimated: Bridge's Flux builds every block on each rank and splits no sequence "
            "(flux_provider.py provide, flux_model.py forward), so PP and CP are not modelled for FLUX"
        )
    if layout.sp and t > 1:
        raise UserError(
            "not estimated: Bridge's Flux forward never scatters the sequence for sequence parallelism "
            "(flux_model.py), so SP is not modelled for FLUX"
        )
    if run.fsdp:
        raise UserError("not estimated: Megatron FSDP is not modelled for FLUX")
    joint, single = dd.joint_layers, arch.num_layers - dd.joint_layers
    weights = joint * (weights_of.layer_sharded / t + weights_of.layer_replicated)
    weights += single * (weights_of.single_sharded / t + weights_of.single_replicated)
    weights += weights_of.first_stage + weights_of.last_stage
    param_bytes, grad_bytes, opt_bytes = bytes_per_weight
    params, grads, optimizer = weights * param_bytes, weights * grad_bytes, weights * opt_bytes / shard

    tokens = run.seq_length * mbs  # text + image tokens of one micro-batch, whole on every TP rank
    text = min(dd.context_tokens, run.seq_length) * mbs
    image = tokens - text
    double, single_saved = flux_saved_elements(arch)
    per_token = sum(
        n * (s.sequence + s.heads / t + s.whole) for n, s in ((joint, double), (single, single_saved))
    )
    h = arch.hidden_size
    # img_embed and txt_embed save their inputs; norm_out's LayerNorm saves its input, a view of the last
    # block's whole output; its modulation saves the normalised image tokens, proj_out its input.
    ends = image * dd.in_channels * dd.patch_volume + text * dd.context_dim + tokens * h + image * 2 * h
    activations = (tokens * per_token + ends) * 2.0 * ov.activation_scale
    allocated = params + grads + optimizer + activations + ov.workspace_gib * GIB

    assumptions = [
        f"diffusion transformer (FLUX): {joint} double-stream (MMDiT) and {single} single-stream blocks, "
        "joint attention over the text and image tokens, adaLN modulation; no vocabulary, so no embedding "
        "table or logits",
        f"{image:,} image + {text:,} text tokens per micro-batch, whole on every TP rank (text at the "
        f"record's {dd.context_tokens} T5 tokens per sample)",
        "activations counted in bf16; flash/fused attention (no s×s scores); norm statistics and the "
        f"flow-matching loss on the {dd.out_channels * dd.patch_volume}-channel prediction not counted",
        "q and k saved as the TE RMSNorms' contiguous copies (Transformer Engine is not read here; a kept "
        "fused-QKV view would add one hidden per token and block, split over TP)",
        f"fixed overheads: {ov.workspace_gib:g} GiB workspaces, {ov.non_torch_gib:g} GiB CUDA context + "
        f"NCCL, {ov.fragmentation:.0%} fragmentation ({ov.source})",
    ]
    if run.recompute == "full":
        assumptions.append(
            "full recompute has no effect: Flux.forward runs its blocks itself, not through "
            "TransformerBlock's checkpointing (flux_model.py)"
        )
    elif run.recompute == "selective":
        assumptions.append("FLUX is counted without selective recompute of the core attention")
    if shard > 1:
        assumptions.append(f"optimizer state sharded over DP = {shard}")
    breakdown = MemoryBreakdown(
        params=params, grads=grads, optimizer=optimizer, activations=activations, logits=0.0, overheads=0.0
    )
    return _estimate(breakdown, allocated, "first", {"first": allocated}, assumptions, hw, run, ov, pp=1)
