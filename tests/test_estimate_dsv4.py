"""DeepSeek-V4 (dsv4_hybrid attention, hyper-connections): parameters, FLOPs and saved activations, each term
from Megatron-LM dev 89ad096 (docs/estimators.md section "DeepSeek-V4")."""

from __future__ import annotations

import json

import pytest

from assistant.errors import UserError
from assistant.estimate.hardware import load_hardware
from assistant.estimate.memory import _sublayer_elements, estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import (
    causal_topk_keys,
    causal_window_keys,
    dims_of,
    dsv4_compressor_params,
    dsv4_indexer_params,
    flops_per_token,
    hyper_connection_params,
    layer_kinds,
    mix_of,
    total_params,
    unmodelled_reason,
)
from assistant.records import ModelArch, Plan
from assistant.settings import KNOWLEDGE_BASE

FLASH_FILE = KNOWLEDGE_BASE / "models" / "deepseek-ai__DeepSeek-V4-Flash.json"
FLASH = ModelArch(**json.loads(FLASH_FILE.read_text()))
PRO_FILE = KNOWLEDGE_BASE / "models" / "deepseek-ai__DeepSeek-V4-Pro.json"
PRO = ModelArch(**json.loads(PRO_FILE.read_text()))
HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))


def _by_hand(
    h: int, heads: int, q_lora: int, groups: int, experts: int, ffn: int, kinds: tuple[int, int, int]
) -> int:
    """The count written out from the module constructors (deepseek_v4_hybrid_attention.py, csa.py,
    hyper_connection.py, transformer_block.py at 89ad096), independent of shapes.py. Flash and Pro share
    v 512, o_lora 1024, a 64 x 128 indexer, 4 residual streams, top-6 routing and one shared expert;
    `kinds` is (window-only, CSA, HCA) layers: ratios 0, 4, 128."""
    v, o_lora, n = 512, 1024, 4
    window, csa, hca = kinds
    base = h * q_lora + q_lora * heads * v + h * v + q_lora + v + heads \
        + groups * o_lora * (heads * v // groups) + groups * o_lora * h  # fmt: skip
    compressor4 = 2 * h * 2 * v + 4 * 2 * v + v  # overlapping 4x windows: coff 2
    indexer = q_lora * 64 * 128 + h * 64 + 2 * h * 2 * 128 + 4 * 2 * 128 + 128  # wq_b, weights, compressor
    csa_extra = compressor4 + indexer
    hca_extra = 2 * h * v + 128 * v + v
    hc = n * h * 24 + 3 + 24  # mapping_proj (n·h -> n² + 2n), three alphas, the static bias
    moe = experts * h + experts * 3 * h * ffn + 3 * h * ffn  # router, SwiGLU experts, the shared expert
    layer = base + 2 * h + 2 * hc + moe  # two pre-norms and two hyper-connections per layer
    layers = (window + csa + hca) * layer + csa * csa_extra + hca * hca_extra
    return layers + 2 * 129280 * h + h + n * n * h + n + 1  # untied embeddings, final norm, hc_head


def _flash_by_hand() -> int:
    return _by_hand(4096, 64, 1024, 8, 256, 2048, (2, 21, 20))  # [0,0,4] + [128,4]*20 + [0]


def _pro_by_hand() -> int:
    return _by_hand(7168, 128, 1536, 16, 384, 3072, (0, 30, 31))  # [128,128,4] + [128,4]*29 + [0]


def test_flash_parameter_count_is_the_one_its_dimensions_give() -> None:
    """284.33B: the model card's 284B (Bridge's verification card says '285 B'); MTP excluded."""
    assert _flash_by_hand() == 284_332_230_231
    assert total_params(dims_of(FLASH)) == _flash_by_hand()
    assert FLASH.total_params == _flash_by_hand()


def test_pro_parameter_count_is_the_one_its_dimensions_give() -> None:
    """Pro's dimensions (Megatron-LM dev deepseek_v4_pro/gb300 recipe) give 1,572.997B total and 49.779B
    active without the MTP layer: DeepSeek's model card says '1.6T parameters (49B activated)', so the
    count is within 2% of both (-1.7%, +1.6%)."""
    assert _pro_by_hand() == 1_572_997_179_491
    assert total_params(dims_of(PRO)) == _pro_by_hand()
    assert PRO.total_params == _pro_by_hand()
    routed_off = 61 * (384 - 6) * 3 * 7168 * 3072  # every layer's experts that a token does not visit
    assert PRO.active_params == _pro_by_hand() - routed_off
    assert PRO.total_params == pytest.approx(1.6e12, rel=0.02)
    assert PRO.active_params == pytest.approx(49e9, rel=0.02)


def test_pro_layers_by_compress_ratio() -> None:
    """Unlike Flash, Pro's first two layers are heavily compressed (128), not window-only."""
    kinds = layer_kinds(PRO)
    assert kinds == "HHC" + "HC" * 29
    mix = mix_of(kinds)
    assert (mix.attn, mix.moe, mix.csa, mix.hca, mix.mlp) == (61, 61, 30, 31, 0)
    assert dims_of(PRO).mtp_block == "X"  # the 62nd ratio (0) is the MTP layer's


def test_pro_count_barely_depends_on_the_indexer_width() -> None:
    """The indexer (64 heads of 128) is a small share: halving or doubling it moves the total < 0.1%."""
    for heads, dim in ((32, 128), (128, 128), (64, 64)):
        other = PRO.model_copy(update={"dsa_indexer_n_heads": heads, "dsa_indexer_head_dim": dim})
        assert total_params(dims_of(other)) == pytest.approx(_pro_by_hand(), rel=1e-3)


def test_flash_layers_by_compress_ratio() -> None:
    kinds = layer_kinds(FLASH)
    assert kinds == "XXC" + "HC" * 20
    mix = mix_of(kinds)
    assert (mix.attn, mix.moe, mix.csa, mix.hca, mix.mlp) == (43, 43, 21, 20, 0)
    assert dims_of(FLASH).mtp_block == "X"  # the 44th ratio (0) is the MTP layer's


def test_module_parameter_terms() -> None:
    d = dims_of(FLASH)
    assert dsv4_compressor_params(4096, 512, 4) == 2 * 4096 * 1024 + 4 * 1024 + 512  # overlap: coff 2
    assert dsv4_compressor_params(4096, 512, 128) == 2 * 4096 * 512 + 128 * 512 + 512
    assert dsv4_indexer_params(d) == 1024 * 8192 + 4096 * 64 + dsv4_compressor_params(4096, 128, 4)
    assert hyper_connection_params(d) == 16384 * 24 + 27
    assert hyper_connection_params(dims_of(FLASH.model_copy(update={"num_residual_streams": 1}))) == 0


def test_unknown_compress_ratio_is_refused() -> None:
    odd = FLASH.model_copy(update={"csa_compress_ratios": (0, 64) * 22})
    assert "compress ratios" in (unmodelled_reason(odd) or "")
    with pytest.raises(UserError):
        dims_of(odd)
    assert "not all known" in (unmodelled_reason(FLASH.model_copy(update={"o_groups": None})) or "")


def test_causal_key_counts() -> None:
    assert causal_window_keys(128, 64) == pytest.approx(32.5)
    assert causal_window_keys(128, 4096) == pytest.approx((128 * 129 / 2 + 3968 * 128) / 4096)
    assert causal_topk_keys(512, 256) == 128  # fewer compressed keys than top-k: all visible ones
    assert causal_topk_keys(512, 1024) == pytest.approx(512 - 512 * 512 / 2048)


def test_attention_core_counts_window_compressed_and_indexer_keys() -> None:
    d = dims_of(FLASH)
    s = 4096
    keys = 43 * causal_window_keys(128, s) + 21 * causal_topk_keys(512, s / 4) + 20 * s / 256
    expected = 6 * (64 * 2 * 512 * keys + 21 * 64 * 128 * s / 8)
    assert flops_per_token(d, s).attention_core == pytest.approx(expected)
    # far below dense causal attention of the same heads over every key
    assert flops_per_token(d, s).attention_core < 0.25 * 6 * 43 * 64 * 2 * 512 * s / 2


def test_hyper_connections_add_their_gemm_flops() -> None:
    plain = flops_per_token(dims_of(FLASH.model_copy(update={"num_residual_streams": 1})), 4096)
    four = flops_per_token(dims_of(FLASH), 4096)
    assert four.dense_gemm - plain.dense_gemm == pytest.approx(6 * 86 * 5 * 24 * 4096)


def test_four_residual_streams_widen_the_saved_residual() -> None:
    d, d1 = dims_of(FLASH), dims_of(FLASH.model_copy(update={"num_residual_streams": 1}))
    for kind in ("attn", "moe"):
        assert _sublayer_elements(d, kind, set())[0] - _sublayer_elements(d1, kind, set())[0] == 4 * 4096
    csa, hca = _sublayer_elements(d, "csa", set())[0], _sublayer_elements(d, "hca", set())[0]
    assert hca == 2 * 512 + 4
    assert csa == 4 * 512 + 128 + 64 * 128 + 64 + 4 * 128 + 32 + 1024


def test_a_flash_recipe_layout_is_estimated() -> None:
    """The main catalog's 128-GPU GB200 layout (TP1 PP1 EP64, GBS 2048) gets a number."""
    layout = Plan(tp=1, pp=1, vp=None, cp=1, ep=64, etp=1, sp=False, dp=128, mbs=1, gbs=2048, ga=16,
                  num_gpus=128)  # fmt: skip
    est = estimate_memory(FLASH, layout, HW["gb200"], RunSettings(seq_length=4096, recompute="selective"))
    assert est.breakdown.params > 0 and est.breakdown.activations > 0


def test_the_pro_32_gpu_library_layout_is_estimated_not_to_fit() -> None:
    """The 32-GPU library layout (TP1 PP4 EP8) holds 1.57T weights on 32 GPUs: weights, gradients and
    Adam states alone are several times a GB300's memory."""
    small = Plan(tp=1, pp=4, vp=None, cp=1, ep=8, etp=1, sp=False, dp=8, mbs=1, gbs=128, ga=16, num_gpus=32)
    est = estimate_memory(PRO, small, HW["gb300"], RunSettings(seq_length=4096, recompute="selective"))
    assert not est.fits and est.peak_bytes > 2 * est.usable_bytes
