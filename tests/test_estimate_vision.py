"""VLM vision towers and frozen parts: parameters against the model cards, placement on the first stage,
TP sharding as Bridge builds each tower, and what freeze_* leaves of gradients, optimizer state and saved
activations (docs/estimators.md "Vision towers and frozen parts")."""

from __future__ import annotations

import json

import pytest

from assistant.estimate.features import features_from_fields
from assistant.estimate.hardware import load_hardware
from assistant.estimate.memory import estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.estimate.vision import vision_params
from assistant.models import count_parameters, vision_from_hf_config
from assistant.records import ModelArch, Plan
from assistant.settings import KNOWLEDGE_BASE

HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))


def _arch(stem: str) -> ModelArch:
    return ModelArch(**json.loads((KNOWLEDGE_BASE / "models" / f"{stem}.json").read_text()))


QWEN3_VL_8B = _arch("Qwen__Qwen3-VL-8B-Instruct")
QWEN25_VL_7B = _arch("Qwen__Qwen2.5-VL-7B-Instruct")
RUN = RunSettings(seq_length=4096)


def _plan(*, tp: int, pp: int, gpus: int) -> Plan:
    return Plan.sized(num_gpus=gpus, tp=tp, pp=pp, cp=1, mbs=1, gbs=8, vp=None, ep=1, etp=None, sp=tp > 1)


@pytest.mark.parametrize(
    ("stem", "card_billions"),
    [
        ("Qwen__Qwen2.5-VL-3B-Instruct", 3.75),
        ("Qwen__Qwen2.5-VL-7B-Instruct", 8.29),
        ("Qwen__Qwen2.5-VL-32B-Instruct", 33.5),
        ("Qwen__Qwen2.5-VL-72B-Instruct", 73.4),
        ("Qwen__Qwen3-VL-8B-Instruct", 8.77),
        ("Qwen__Qwen3-VL-30B-A3B-Instruct", 31.1),
        ("Qwen__Qwen3-VL-235B-A22B-Instruct", 236),
    ],
)
def test_language_model_and_tower_add_up_to_the_model_card(stem: str, card_billions: float) -> None:
    arch = _arch(stem)
    assert arch.vision is not None
    total = count_parameters(arch)[0] + vision_params(arch.vision).total
    assert total / 1e9 == pytest.approx(card_billions, rel=0.002)


@pytest.mark.parametrize(
    ("stem", "card"),
    [
        ("google__gemma-3-4b-it", "4.3"),
        ("google__gemma-3-12b-it", "12.2"),
        ("google__gemma-3-27b-it", "27.4"),
        ("mistralai__Ministral-3-3B-Instruct-2512", "3.8"),
        ("mistralai__Ministral-3-8B-Instruct-2512", "8.9"),
        ("mistralai__Ministral-3-14B-Instruct-2512", "13.9"),
        ("zai-org__GLM-4.5V", "107.71"),
    ],
)
def test_other_builds_add_up_to_the_published_size_to_its_last_digit(stem: str, card: str) -> None:
    """SigLIP (Gemma 3), Pixtral (Ministral 3) and GLM-4V (GLM-4.5V) towers with their projectors: LM + tower
    rounds to the published total (model card, Bridge docs, or a checkpoint's weight listing less its
    biases), i.e. lies within half a unit of its last digit."""
    arch = _arch(stem)
    assert arch.vision is not None
    total = (count_parameters(arch)[0] + vision_params(arch.vision).total) / 1e9
    half_unit = 0.5 * 10 ** -len(card.partition(".")[2])
    assert abs(total - float(card)) <= half_unit


def test_gemma3_siglip_tower_by_hand() -> None:
    """Gemma 3's SigLIP encoder is the technical report's 417M; only the projector's linear is sharded."""
    arch = _arch("google__gemma-3-4b-it")
    assert arch.vision is not None
    h, f = 1152, 4304
    block = 2 * 2 * h + 4 * (h * h + h) + h * f + f + f * h + h
    encoder = 27 * block + (3 * 14 * 14 * h + h) + 4096 * h + 2 * h
    counts = vision_params(arch.vision)
    assert counts.encoder_per_rank(4) == encoder and round(encoder / 1e6) == 417
    assert counts.projector_per_rank(1) == h + h * 2560
    assert counts.projector_per_rank(4) == h + h * 2560 / 4


def test_ministral3_pixtral_tower_by_hand() -> None:
    """Pixtral: RMSNorm, SwiGLU, no biases; the Mistral 3 projector merges 2x2 patches, then two linears."""
    arch = _arch("mistralai__Ministral-3-8B-Instruct-2512")
    assert arch.vision is not None
    h, f, out = 1024, 4096, 4096
    encoder = 24 * (2 * h + 4 * h * h + 3 * h * f) + 3 * 14 * 14 * h + h
    projector = h + 4 * h * h + h * out + out * out
    counts = vision_params(arch.vision)
    assert (counts.encoder_per_rank(8), counts.projector_per_rank(8)) == (encoder, projector)


def test_glm45v_tower_equals_the_checkpoint_weight_listing() -> None:
    """The visual.* weights of the GLM-4.5V checkpoint, shape by shape (blocks, downsample, merger, norms)."""
    arch = _arch("zai-org__GLM-4.5V")
    assert arch.vision is not None
    h, out, ctx = 1536, 4096, 10944
    blocks = 24 * (h * 3 * h + h * h + 3 * out * h + 2 * h)
    stem = 3 * 2 * 14 * 14 * h + h + 576 * h + 2 * h  # patch Conv3d, positions, post_conv/post norms
    downsample = out * h * 2 * 2 + out
    merger = out * out + 2 * out + 3 * out * ctx
    assert vision_params(arch.vision).total == blocks + stem + downsample + merger == 858_681_856


def test_kimi_k25_tower_equals_the_checkpoint_weight_listing() -> None:
    """MoonViT (biased LayerNorm/GELU blocks, a final LayerNorm, a 64x64 position table) and the patch-merger
    projector, shape by shape from the checkpoint's vision_tower.* and mm_projector.* tensors."""
    arch = _arch("moonshotai__Kimi-K2.5")
    assert arch.vision is not None
    h, f, merged, out = 1152, 4304, 4 * 1152, 7168
    block = 3 * h * h + 3 * h + h * h + h + h * f + f + f * h + h + 2 * 2 * h
    encoder = 27 * block + 2 * h + 64 * 64 * h + 3 * 14 * 14 * h + h
    projector = 2 * h + merged * merged + merged + merged * out + out
    counts = vision_params(arch.vision)
    assert (counts.encoder_per_rank(8), counts.projector_per_rank(8)) == (encoder, projector)
    assert counts.total == 471_143_920
    assert round((count_parameters(arch)[0] + counts.total) / 1e12) == 1  # the published 1T


def test_tower_by_hand_qwen3_vl() -> None:
    """Qwen3-VL-8B's tower from the module constructors: 27 blocks, patch and position embeddings, the merger
    and three deepstack mergers (LayerNorm after the 2x2 merge)."""
    h, f, merged, out = 1152, 4304, 4 * 1152, 4096
    block = 2 * 2 * h + h * 3 * h + 3 * h + h * h + h + h * f + f + f * h + h
    merger = merged * merged + merged + merged * out + out
    by_hand = 27 * block + (3 * 2 * 16 * 16 * h + h) + 2304 * h + (2 * h + merger) + 3 * (2 * merged + merger)
    assert QWEN3_VL_8B.vision is not None
    assert vision_params(QWEN3_VL_8B.vision).total == by_hand


def _without_tower(arch: ModelArch) -> ModelArch:
    return arch.model_copy(update={"vision": None})


def test_the_tower_sits_on_the_first_stage_only() -> None:
    plan = _plan(tp=1, pp=2, gpus=2)
    with_tower = {s: estimate_memory(QWEN3_VL_8B, plan, HW["h100"], RUN, stage=s) for s in ("first", "last")}
    bare = {s: estimate_memory(_without_tower(QWEN3_VL_8B), plan, HW["h100"], RUN, stage=s)
            for s in ("first", "last")}  # fmt: skip
    assert QWEN3_VL_8B.vision is not None
    tower = vision_params(QWEN3_VL_8B.vision).total
    assert with_tower["first"].breakdown.params - bare["first"].breakdown.params == pytest.approx(2 * tower)
    assert with_tower["last"].breakdown.params == bare["last"].breakdown.params


@pytest.mark.parametrize(("arch", "sharded"), [(QWEN3_VL_8B, True), (QWEN25_VL_7B, False)])
def test_tensor_parallel_shards_only_the_megatron_built_tower(arch: ModelArch, sharded: bool) -> None:
    plan = _plan(tp=2, pp=1, gpus=2)
    delta = (
        estimate_memory(arch, plan, HW["h100"], RUN).breakdown.params
        - estimate_memory(_without_tower(arch), plan, HW["h100"], RUN).breakdown.params
    )
    assert arch.vision is not None
    whole = 2 * vision_params(arch.vision).total
    if sharded:
        assert 0.5 * whole < delta < 0.6 * whole  # the linears halve; norms, biases, embeddings stay whole
    else:
        assert delta == pytest.approx(whole)


def test_gemma3_shards_only_its_projector_linear_over_tp() -> None:
    """SigLIP is a Hugging Face module, whole on every rank; the projector's ColumnParallelLinear is not."""
    arch = _arch("google__gemma-3-4b-it")
    plan = _plan(tp=2, pp=1, gpus=2)
    delta = (
        estimate_memory(arch, plan, HW["h100"], RUN).breakdown.params
        - estimate_memory(_without_tower(arch), plan, HW["h100"], RUN).breakdown.params
    )
    assert arch.vision is not None
    linear = 1152 * 2560
    assert delta == pytest.approx(2 * (vision_params(arch.vision).total - linear / 2))


def test_recipe_freeze_flags_are_read() -> None:
    fields = {
        "model.freeze_language_model": True,
        "model.freeze_vision_model": True,
        "model.freeze_vision_projection": False,
    }
    assert features_from_fields(fields).frozen == ("language_model", "vision_model")
    assert features_from_fields({"model.freeze_language_model": False}).frozen == ()


def test_a_frozen_language_model_keeps_weights_and_trains_only_the_projector() -> None:
    """Megatron's DDP gives buffers only to parameters that require grad (distributed_data_parallel.py),
    the optimizer only gets those, and TE saves a GEMM input only for a weight gradient."""
    plan = _plan(tp=1, pp=1, gpus=8)
    trained = estimate_memory(QWEN3_VL_8B, plan, HW["h100"], RUN)
    frozen_run = RUN.but(features=features_from_fields(
        {"model.freeze_language_model": True, "model.freeze_vision_model": True}
    ))  # fmt: skip
    frozen = estimate_memory(QWEN3_VL_8B, plan, HW["h100"], frozen_run)
    assert QWEN3_VL_8B.vision is not None
    projector = vision_params(QWEN3_VL_8B.vision).projector_per_rank(1)
    assert frozen.breakdown.params == trained.breakdown.params
    assert frozen.breakdown.grads == pytest.approx(projector * 4)  # fp32 gradient buffer
    assert frozen.breakdown.optimizer == pytest.approx(projector * 12 / 8)
    assert frozen.breakdown.activations < 0.8 * trained.breakdown.activations
    assert any("frozen: language model, vision model" in a for a in frozen.assumptions)


def test_a_vlm_without_a_sourced_tower_says_it_is_not_counted() -> None:
    arch = _arch("MiniMaxAI__MiniMax-M3")
    assert arch.is_vlm and arch.vision is None
    plan = _plan(tp=1, pp=1, gpus=8)
    notes = estimate_memory(arch, plan, HW["h100"], RUN).assumptions
    assert "vision tower not counted: its widths are not in this model's record" in notes


def _vision_config(arch: ModelArch) -> dict:
    """The vision_config keys of a Qwen VLM's config.json, from the bundled record."""
    assert arch.vision is not None
    v = arch.vision
    return {
        "depth": v.depth, "hidden_size": v.hidden_size, "intermediate_size": v.ffn_hidden_size,
        "num_heads": v.num_heads, "patch_size": v.patch_size, "temporal_patch_size": v.temporal_patch_size,
        "in_channels": v.in_channels, "spatial_merge_size": v.spatial_merge_size,
        "out_hidden_size": v.out_hidden_size, "num_position_embeddings": v.num_position_embeddings,
        "deepstack_visual_indexes": [8, 16, 24][: v.deepstack_mergers],
    }  # fmt: skip


@pytest.mark.parametrize(("arch", "model_type"), [(QWEN3_VL_8B, "qwen3_vl"), (QWEN25_VL_7B, "qwen2_5_vl")])
def test_a_users_config_json_gets_the_same_tower(arch: ModelArch, model_type: str) -> None:
    config = {"model_type": model_type, "vision_config": _vision_config(arch)}
    assert vision_from_hf_config(config) == arch.vision
    partial = {"model_type": model_type, "vision_config": {"depth": 27}}
    assert vision_from_hf_config(partial) is None
    assert vision_from_hf_config({"model_type": "gemma3", "vision_config": _vision_config(arch)}) is None


# The config.json spellings of each build, with the widths of the public configs the records cite.
_GEMMA3_CONFIG = {
    "model_type": "gemma3", "text_config": {"hidden_size": 2560},
    "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                      "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                      "patch_size": 14, "vision_use_head": False},
}  # fmt: skip
_MINISTRAL3_CONFIG = {
    "model_type": "mistral3", "multimodal_projector_bias": False, "spatial_merge_size": 2,
    "vision_feature_layer": -1, "text_config": {"hidden_size": 4096},
    "vision_config": {"hidden_size": 1024, "image_size": 1540, "intermediate_size": 4096,
                      "model_type": "pixtral", "num_attention_heads": 16, "num_channels": 3,
                      "num_hidden_layers": 24, "patch_size": 14},
}  # fmt: skip
_GLM45V_CONFIG = {
    "model_type": "glm4v_moe", "text_config": {"hidden_size": 4096},
    "vision_config": {"attention_bias": False, "depth": 24, "hidden_size": 1536, "image_size": 336,
                      "in_channels": 3, "intermediate_size": 10944, "num_heads": 12, "out_hidden_size": 4096,
                      "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
}  # fmt: skip
_KIMI_VISION = {
    "init_pos_emb_height": 64, "init_pos_emb_width": 64, "merge_kernel_size": [2, 2],
    "mm_projector_type": "patchmerger", "patch_size": 14, "text_hidden_size": 7168, "vt_hidden_size": 1152,
    "vt_intermediate_size": 4304, "vt_num_attention_heads": 16, "vt_num_hidden_layers": 27,
}  # fmt: skip
_KIMI_K25_CONFIG = {"model_type": "kimi_k25", "text_config": {"hidden_size": 7168},
                    "vision_config": _KIMI_VISION}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "stem"),
    [
        (_GEMMA3_CONFIG, "google__gemma-3-4b-it"),
        (_MINISTRAL3_CONFIG, "mistralai__Ministral-3-8B-Instruct-2512"),
        (_GLM45V_CONFIG, "zai-org__GLM-4.5V"),
        (_KIMI_K25_CONFIG, "moonshotai__Kimi-K2.5"),
    ],
)
def test_a_users_config_json_of_the_other_builds_gets_the_records_tower(config: dict, stem: str) -> None:
    assert vision_from_hf_config(config) == _arch(stem).vision


@pytest.mark.parametrize(
    "config",
    [
        {**_MINISTRAL3_CONFIG, "multimodal_projector_bias": True},  # biased projector linears
        {**_MINISTRAL3_CONFIG, "vision_feature_layer": [-1, -8]},  # a wider first projector linear
        {**_GLM45V_CONFIG, "vision_config": {**_GLM45V_CONFIG["vision_config"], "attention_bias": True}},
        {**_KIMI_K25_CONFIG, "vision_config": {**_KIMI_VISION, "mm_projector_type": "patchmergerv2"}},
        {**_GEMMA3_CONFIG, "vision_config": {"hidden_size": 1152}},  # partial: SigLIP's defaults differ
        {**_GEMMA3_CONFIG, "text_config": {}},  # no language width to project to
    ],
)
def test_a_config_json_with_an_unmodelled_option_leaves_the_tower_uncounted(config: dict) -> None:
    assert vision_from_hf_config(config) is None


def test_a_frozen_language_model_runs_faster_without_weight_gradients() -> None:
    """No weight-gradient GEMMs, gradient accumulation, gradient reduction or optimizer step for it."""
    plan = _plan(tp=1, pp=1, gpus=8)
    frozen_run = RUN.but(features=features_from_fields({"model.freeze_language_model": True}))
    trained = estimate_throughput(QWEN3_VL_8B, plan, HW["h100"], RUN)
    frozen = estimate_throughput(QWEN3_VL_8B, plan, HW["h100"], frozen_run)
    assert frozen.step_time_s < 0.8 * trained.step_time_s
    assert frozen.optimizer_s == 0.0 and frozen.exposed_comm_s.dp == 0.0
    assert frozen.flops_per_token == trained.flops_per_token  # Bridge's FLOP count ignores freezing
