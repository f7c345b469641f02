"""classify(): which change-control layer an override belongs to.

convergence    - changes what is learned (batch, sequence, optimizer, data, loss, numerics).
execution      - changes only how the same training maps onto hardware (parallelism, recompute,
                 graphs, overlap).
benchmark-only - shortcuts that make throughput numbers look right but must not ship (forced
                 balance, mock data).
"""

from __future__ import annotations

from typing import Any, Literal

ChangeClass = Literal["convergence", "execution", "benchmark-only"]

_BENCHMARK = {
    "model.moe_router_force_load_balancing": (
        "forces uniform expert routing, so MoE throughput is not that of real data"
    ),
    "model.moe_router_force_biased": "biases routing artificially; only meaningful for benchmarks",
    "rerun_state_machine.check_for_nan_in_loss": "turns off NaN detection; acceptable for a benchmark or a "
    "full-iteration graph, not as a silent production default",
}
_EXECUTION_SUFFIXES = (
    "_parallel_size",
    "parallel_size",
    "sequence_parallel",
    "micro_batch_size",
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "recompute_modules",
    "cuda_graph_impl",
    "cuda_graph_scope",
    "cuda_graph_modules",
    "use_te_rng_tracker",
    "te_rng_tracker",
    "cp_comm_type",
    "hierarchical_context_parallel_sizes",
    "moe_token_dispatcher_type",
    "moe_flex_dispatcher_backend",
    "moe_shared_expert_overlap",
    "use_megatron_fsdp",
    "data_parallel_sharding_strategy",
    "ckpt_format",
    "pipeline_model_parallel_layout",
    "account_for_embedding_in_pipeline_split",
    "account_for_loss_in_pipeline_split",
    "num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage",
    "use_distributed_optimizer",
    "optimizer_cpu_offload",
    "optimizer_offload_fraction",
    "overlap_cpu_optimizer_d2h_h2d",
    "num_workers",
    "pin_memory",
    "persistent_workers",
    "pad_to_max_length",
    "pad_cu_seqlens",
)
_EXECUTION_PREFIXES = ("comm_overlap.", "checkpoint.", "logger.", "profiling.", "nvrx_straggler.", "ft.")
_EXECUTION_DDP = ("ddp.overlap_", "ddp.bucket_size", "ddp.grad_reduce_in_fp32", "ddp.use_megatron_fsdp")
_CONVERGENCE_REASONS = {
    "train.global_batch_size": "the global batch sets the optimisation dynamics (tokens per step)",
    "dataset.seq_length": "the sequence length changes what each sample contains",
    "model.seq_length": "the sequence length changes what each sample contains",
    "model.calculate_per_token_loss": "changes how the loss is normalised across tokens",
    "ddp.average_in_collective": "changes how gradients are averaged across ranks",
}
_CONVERGENCE_PREFIXES = {
    "optimizer.": "optimizer hyper-parameters change the training trajectory",
    "scheduler.": "the learning-rate schedule changes the training trajectory",
    "dataset.": "the data pipeline changes what the model learns from",
    "peft.": "the adapter definition changes what is trained",
    "mixed_precision": "numerics (precision recipe) change the training trajectory",
    "rng.seed": "a different seed gives a different run",
    "train.train_iters": "the number of steps changes how far training goes",
}


def classify(key: str, value: Any = None) -> tuple[ChangeClass, str]:
    """The change-control class of one override and why."""
    key = key.lstrip("+~")
    if key in _BENCHMARK:
        return "benchmark-only", _BENCHMARK[key]
    if key == "dataset" and str(value).endswith("mock") or key.endswith(".mock") and value:
        return "benchmark-only", "mock data measures throughput only; nothing is learned"
    if key in _CONVERGENCE_REASONS:
        return "convergence", _CONVERGENCE_REASONS[key]
    if key.startswith(_EXECUTION_PREFIXES) or key.startswith(_EXECUTION_DDP):
        return "execution", "changes how the run is executed or saved, not what it learns"
    leaf = key.rsplit(".", 1)[-1]
    if leaf.endswith(_EXECUTION_SUFFIXES) or leaf in _EXECUTION_SUFFIXES:
        return "execution", "maps the same training onto the hardware differently; the math is unchanged"
    if key == "rng.te_rng_tracker" or key.startswith("rerun_state_machine."):
        return "execution", "runtime bookkeeping; the training math is unchanged"
    for prefix, reason in _CONVERGENCE_PREFIXES.items():
        if key.startswith(prefix):
            return "convergence", reason
    if key.startswith("model."):
        return (
            "convergence",
            "a model setting that is not a known hardware-mapping knob; treat it as changing the model",
        )
    return "convergence", "unknown key: treated as changing training semantics until shown otherwise"
