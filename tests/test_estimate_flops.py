"""Model FLOPs per token reproduce Megatron-Bridge's formula and its published TFLOP/s-to-tokens/s ratios."""

from __future__ import annotations

import json
import statistics

import pytest

from assistant.estimate.shapes import dims_of, flops_per_token, padded_vocab, total_params
from assistant.kb import knowledge_base
from assistant.records import ModelArch
from assistant.settings import KNOWLEDGE_BASE
from tests.archs import DEEPSEEK_V3, LLAMA3_8B, LLAMA3_70B, LLAMA31_405B


@pytest.mark.parametrize(
    ("arch", "gflops"),
    [(LLAMA3_8B, 51.47), (LLAMA3_70B, 449.2), (LLAMA31_405B, 2524.0)],
)
def test_flops_per_token_matches_research_figures(arch: ModelArch, gflops: float) -> None:
    """estimators.md section 4: 51.47 / 449.2 / 2524.1 GFLOP per token at s=8192."""
    value = flops_per_token(dims_of(arch), 8192).total / 1e9
    assert value == pytest.approx(gflops, rel=2e-4)


def test_llama3_8b_components() -> None:
    """MLP 33.82 + projections 8.05 + logits 3.15 GFLOP are GEMMs; the causal core is 6.44 GFLOP."""
    f = flops_per_token(dims_of(LLAMA3_8B), 8192)
    assert f.dense_gemm / 1e9 == pytest.approx(33.82 + 8.05 + 3.15, abs=0.02)
    assert f.attention_core / 1e9 == pytest.approx(6.44, abs=0.01)
    assert f.expert_gemm == 0


def test_attention_core_grows_linearly_with_sequence() -> None:
    short = flops_per_token(dims_of(LLAMA3_8B), 4096)
    long = flops_per_token(dims_of(LLAMA3_8B), 8192)
    assert long.attention_core == pytest.approx(2 * short.attention_core)
    assert long.dense_gemm == short.dense_gemm


def test_vocab_is_padded_to_128_times_tp() -> None:
    assert padded_vocab(128256, 1) == 128256
    assert padded_vocab(128256, 8) == 129024
    assert padded_vocab(50257, 1) == 50304


def test_parameter_counts() -> None:
    assert total_params(dims_of(LLAMA3_70B)) / 1e9 == pytest.approx(70.55, abs=0.01)
    assert total_params(dims_of(DEEPSEEK_V3)) / 1e9 == pytest.approx(671.0, rel=0.01)


def test_moe_counts_only_routed_topk_experts() -> None:
    d = dims_of(DEEPSEEK_V3)
    assert (d.dense_layers, d.moe_layers) == (3, 58)
    f = flops_per_token(d, 4096)
    assert f.expert_gemm == pytest.approx(6 * 7168 * 3 * 2048 * 8 * 58)


def test_published_ratios_agree() -> None:
    """Model TFLOP/s ÷ tokens/s in the published tables is the formula's FLOPs per token (no MTP rows)."""
    rows = json.loads((KNOWLEDGE_BASE / "calibration" / "perf_rows.json").read_text())["rows"]

    def ratio(model: str, note: str | None = None, release: str | None = None) -> float:
        picked = [
            r["model_tflops_per_gpu"] * 1e3 / r["tokens_per_sec_per_gpu"]
            for r in rows
            if r["model"] == model and (note is None or r["model_note"] == note)
            and (release is None or r["release"] == release)
        ]  # fmt: skip
        assert picked, model
        return statistics.median(picked)

    assert ratio("llama3_70b", release="26.04.01") == pytest.approx(
        flops_per_token(dims_of(LLAMA3_70B), 8192).total / 1e9, rel=0.005
    )
    assert ratio("deepseek_v3", note="w/o MTP") == pytest.approx(
        flops_per_token(dims_of(DEEPSEEK_V3), 4096).total / 1e9, rel=0.005
    )


def test_a_mamba_hybrid_matches_bridges_hybrid_formula_and_parameter_count() -> None:
    """Bridge's hybrid_flops for Nemotron 3 Nano at 8K gives 22.28 GFLOP per token, the ratio of TFLOP/s to
    tokens/s in every published Nemotron 3 Nano row; the parameters match the HF checkpoint's 31.58B."""
    from tests.archs import NEMOTRON_3_NANO

    d = dims_of(NEMOTRON_3_NANO)
    assert (d.attn_layers, d.mamba_layers, d.moe_layers, d.dense_layers) == (6, 23, 23, 0)
    f = flops_per_token(d, 8192)
    assert f.total / 1e9 == pytest.approx(22.278, abs=0.001)
    # The timing uses the mixer's real inner width (64 heads × 64 = 4,096), not Bridge's 2 × hidden = 5,376.
    assert 0 < f.bridge_extra < 0.1 * f.total and f.ssm_scan == pytest.approx(21 * 23 * 4096 * 128)
    assert total_params(d) / 1e9 == pytest.approx(31.578, abs=0.001)


def test_hybrids_the_estimators_cannot_describe_are_refused() -> None:
    from assistant.errors import UserError
    from assistant.estimate.shapes import unmodelled_reason
    from tests.archs import NEMOTRON_3_NANO

    assert unmodelled_reason(NEMOTRON_3_NANO) is None
    no_pattern = NEMOTRON_3_NANO.model_copy(
        update={"hybrid_layer_pattern": None}
    )  # Nemotron 3 Super's record
    gated_delta = NEMOTRON_3_NANO.model_copy(update={"hybrid_layer_pattern": "G" * 52})
    no_mixer = NEMOTRON_3_NANO.model_copy(update={"mamba_num_heads": None})
    for arch, words in ((no_pattern, "pattern"), (gated_delta, "pattern"), (no_mixer, "Mamba mixer")):
        assert words in unmodelled_reason(arch)
        with pytest.raises(UserError, match="hybrid"):
            dims_of(arch)


def test_latent_moe_and_multi_token_prediction_match_bridges_published_flops() -> None:
    """Nemotron 3 Super: routed experts in a 1,024-wide latent, and the recipes run two MTP passes of one
    attention + MoE block. Bridge reports 84.3–85.4 GFLOP per token for its 8K rows: 84.73 with the passes,
    75.37 without. The parameters come to 120.7B (published: 120B)."""
    from assistant.models import load_model_arch

    d = dims_of(load_model_arch("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", kb=knowledge_base()))
    assert (d.latent, d.expert_io, d.mtp_block) == (1024, 1024, "*E")
    assert flops_per_token(d, 8192).total / 1e9 == pytest.approx(75.37, abs=0.01)
    assert flops_per_token(d, 8192, mtp_layers=2).total / 1e9 == pytest.approx(84.73, abs=0.01)
    assert total_params(d) / 1e9 == pytest.approx(120.67, abs=0.01)


def test_deepseek_v3_with_its_mtp_block_matches_the_rows_that_run_it() -> None:
    """The 26.08 DeepSeek-V3 recipes run one MTP block; Bridge reports 259.8–260.0 GFLOP per token for
    those rows at 4K, against 249.8 for the rows without it."""
    d = dims_of(DEEPSEEK_V3.model_copy(update={"mtp_num_layers": 1}))
    assert flops_per_token(d, 4096).total / 1e9 == pytest.approx(249.81, abs=0.01)
    assert flops_per_token(d, 4096, mtp_layers=1).total / 1e9 == pytest.approx(259.9, rel=0.003)


def test_negative_hybrid_dimensions_are_refused_not_estimated() -> None:
    """A spec with a negative Mamba head count used to give a memory and speed estimate anyway."""
    from assistant.errors import UserError
    from tests.archs import NEMOTRON_3_NANO

    for bad in ({"mamba_num_heads": -4}, {"mamba_num_groups": -8}, {"moe_latent_size": -1}):
        with pytest.raises(UserError, match="must be positive"):
            dims_of(NEMOTRON_3_NANO.model_copy(update=bad))
