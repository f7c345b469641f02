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
HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))


def _flash_by_hand() -> int:
    """The count written out from the module constructors (deepseek_v4_hybrid_attention.py, csa.py,
    hyper_connection.py, transformer_block.py at 89ad096), independent of shapes.py."""
    h, heads, v, q_lora, groups, o_lora, n = 4096, 64, 512, 1024, 8, 1024, 4
    base = h * q_lora + q_lora * heads * v + h * v + q_lora + v + heads \
        + groups * o_lora * (heads * v // groups) + groups * o_lora * h  # fmt: skip
    csa = (2 * h * 2 * v + 4 * 2 * v + v) + (q_lora * 64 * 128 + h * 64 + 2 * h * 2 * 128 + 4 * 2 * 128 + 128)
    hca = 2 * h * v + 128 * v + v
    hc = n * h * 24 + 3 + 24  # mapping_proj (n·h -> n² + 2n), three alphas, the static bias
    moe = 256 * h + 256 * 3 * h * 2048 + 3 * h * 2048  # router, 256 SwiGLU experts, the shared expert
    layer = base + 2 * h + 2 * hc + moe  # two pre-norms and two hyper-connections per layer
    layers = 43 * layer + 21 * csa + 20 * hca  # ratios [0,0,4] + [128,4]*20 + [0]: 21 CSA, 20 HCA
    return layers + 2 * 129280 * h + h + n * n * h + n + 1  # untied embeddings, final norm, hc_head


def test_flash_parameter_count_is_the_one_its_dimensions_give() -> None:
    """284.33B: the model card's 284B (Bridge's verification card says '285 B'); MTP excluded."""
    assert _flash_by_hand() == 284_332_230_231
    assert total_params(dims_of(FLASH)) == _flash_by_hand()
    assert FLASH.total_params == _flash_by_hand()


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
