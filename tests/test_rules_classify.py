"""classify(): the change-control layer of an override."""

from __future__ import annotations

import pytest

from assistant.rules.classify import classify


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("model.tensor_model_parallel_size", 2, "execution"),
        ("model.pipeline_model_parallel_size", 4, "execution"),
        ("model.virtual_pipeline_model_parallel_size", None, "execution"),
        ("model.context_parallel_size", 2, "execution"),
        ("model.expert_model_parallel_size", 8, "execution"),
        ("model.expert_tensor_parallel_size", 1, "execution"),
        ("model.sequence_parallel", True, "execution"),
        ("train.micro_batch_size", 1, "execution"),
        ("model.recompute_granularity", "selective", "execution"),
        ("model.cuda_graph_impl", "transformer_engine", "execution"),
        ("rng.te_rng_tracker", True, "execution"),
        ("ddp.overlap_grad_reduce", False, "execution"),
        ("comm_overlap.tp_comm_overlap", True, "execution"),
        ("checkpoint.pretrained_checkpoint", "/ckpt", "execution"),
        ("dataset.num_workers", 4, "execution"),
        ("train.global_batch_size", 256, "convergence"),
        ("dataset.seq_length", 16384, "convergence"),
        ("optimizer.lr", 1e-4, "convergence"),
        ("scheduler.lr_warmup_iters", 100, "convergence"),
        ("model.calculate_per_token_loss", True, "convergence"),
        ("ddp.average_in_collective", False, "convergence"),
        ("model.num_layers", 40, "convergence"),
        ("something.unknown", 1, "convergence"),
        ("model.moe_router_force_load_balancing", True, "benchmark-only"),
        ("rerun_state_machine.check_for_nan_in_loss", False, "benchmark-only"),
        ("dataset", "mock", "benchmark-only"),
    ],
)
def test_classify(key, value, expected):
    change_class, reason = classify(key, value)
    assert change_class == expected
    assert reason
