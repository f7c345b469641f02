"""Errors that come from what run_recipe.py does (or does not do) to a recipe's config after the overrides:
a pipeline layout built for the recipe's own PP x VP kept after -pp/-vp, edge-stage sizes kept after -pp,
and the Energon dataset's own micro-batch size against train.micro_batch_size."""

from __future__ import annotations

import pytest

from assistant import catalog as catalogs
from assistant.config_text import extract_overrides
from assistant.kb import knowledge_base
from assistant.models import recipe_arch
from assistant.records import Cluster
from assistant.rules import upstream
from assistant.rules.config import build_config
from assistant.rules.repair import errors_of
from assistant.rules.validate import layout_stages, validate
from assistant.service import ask
from assistant.settings import Settings
from assistant.troubleshoot import match_error
from ingest.layout_builders import builder_in

PP8_VP1 = {"model.pipeline_model_parallel_size": 8, "model.virtual_pipeline_model_parallel_size": 1}
EDGES_PP2 = {"model.pipeline_model_parallel_size": 2}
DSV3 = "deepseek_v3_pretrain_1024gpu_h100_bf16_config"
GLM_AIR = "glm45_air_106b_pretrain_32gpu_h100_bf16_config"
OMNI = "nemotron_omni_valor32k_sft_4gpu_h100_bf16_config"


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("no-index"))


def _errors(recipe: str, version: str, gpus: int, overrides: dict) -> list:
    record = catalogs.resolve_recipe(recipe, version)
    arch = recipe_arch(record, knowledge_base())
    return errors_of(
        record, overrides, arch, Cluster(num_gpus=gpus), version, hardware=knowledge_base().hardware
    )


@pytest.mark.parametrize(
    ("layout", "stages"),
    [
        ("Et|(tt|)*30mL", 32),
        ("Et*4|(tttt|)*14tmL", 16),
        ("Ettt|(tt|)*29,m|L", 32),
        ([["embedding", "decoder"], ["decoder", "loss"]], 2),
        (None, None),
    ],
)
def test_layout_stages_follow_megatron_cores_parser(layout, stages):
    assert layout_stages(layout) == stages


def test_a_stale_recipe_layout_fails_at_060_and_is_rebuilt_at_main():
    """0.6.0's DeepSeek-V3 recipe registers no layout builder: its 16-stage layout stays after -pp 8 -vp 1
    and Megatron-Core reads VP 2. At main the recipe registers one and run_recipe.py rebuilds the layout."""
    errors = [f for f in _errors(DSV3, "0.6.0", 512, PP8_VP1) if f.id == "pp-layout"]
    assert [f.upstream_error for f in errors] == [upstream.layout_vp(1, 2)]
    assert not [f for f in _errors(DSV3, "main", 512, PP8_VP1) if f.id == "pp-layout"]
    # An explicit layout is never rebuilt: at main a stale one the user passes still fails.
    explicit = {**PP8_VP1, "model.pipeline_model_parallel_layout": [["decoder"]] * 16}
    assert [f.id for f in _errors(DSV3, "main", 512, explicit) if f.id == "pp-layout"] == ["pp-layout"]
    # Leaving VP unset lets Megatron-Core take VP from the layout: the fix re-validates.
    unset = {**PP8_VP1, "model.virtual_pipeline_model_parallel_size": None}
    assert not [f for f in _errors(DSV3, "0.6.0", 512, unset) if f.id == "pp-layout"]


def test_a_layout_the_catalog_could_not_read_still_places_the_layers() -> None:
    """K-EXAONE 2.0's recipes assign a layout from get_k_exaone_2_0_pipeline_layout (78 decoder layers and
    4 MTP steps over PP 16) that the extractor cannot evaluate: Megatron-Core takes the placement from that
    layout, so 78 layers over PP 16 is no error. Without the layout the same split is one."""
    name = "exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config"
    record = catalogs.resolve_recipe(name, "main")
    assert "model.pipeline_model_parallel_layout" in record.unknown and record.layout_builder
    arch = recipe_arch(record, knowledge_base())
    assert arch is not None and arch.num_layers % 16
    ids = {"pp-layers", "pp-uneven"}

    def found(rec, overrides: dict) -> list[str]:
        hardware = knowledge_base().hardware
        return [
            f.id for f in errors_of(rec, overrides, arch, Cluster(num_gpus=512), "main", hardware=hardware)
        ]

    assert not ids & set(found(record, {}))
    # run_recipe.py rebuilds the layout through the registered builder after -pp 8.
    assert not ids & set(found(record, {"model.pipeline_model_parallel_size": 8}))
    unread = record.model_copy(update={"unknown": {}})
    assert "pp-layers" in found(unread, {})


def test_a_layout_whose_stages_pp_does_not_divide_names_upstreams_text():
    errors = [f for f in _errors(DSV3, "0.6.0", 48 * 3, {"model.pipeline_model_parallel_size": 3})]
    assert upstream.layout_pp(16, 3) in [f.upstream_error for f in errors]


def test_the_layout_builder_is_read_from_the_recipe_source():
    record = catalogs.resolve_recipe(DSV3, "main")
    assert record.layout_builder and record.layout_builder.startswith("_get_deepseek_v3_pipeline_layout (")
    assert catalogs.resolve_recipe(DSV3, "0.6.0").layout_builder is None
    text = (
        "def _helper(model_cfg, builder):\n"
        "    model_cfg._pipeline_model_parallel_layout_builder = builder\n\n"
        "def recipe_a():\n    cfg = x()\n    _helper(cfg.model, _get_layout)\n\n"
        "def recipe_b():\n    cfg = x()\n    cfg.model._pipeline_model_parallel_layout_builder = _get_b\n"
        "def recipe_c():\n    return None\n"
    )
    assert builder_in(text, "recipe_a", "p.py") == "_helper (p.py:2)"
    assert builder_in(text, "recipe_b", "p.py") == "_get_b (p.py:10)"
    assert builder_in(text, "recipe_c", "p.py") is None


def test_edge_stage_sizes_kept_after_pp_leave_no_middle_stage():
    """GLM-4.5-Air's 11/11 edge sizes at PP 2: 24 layers, no middle stage. run_recipe.py at main clears
    them; without that (runner_sync=False) Megatron-Core's mismatch check fires."""
    assert not [f for f in _errors(GLM_AIR, "main", 32, EDGES_PP2) if f.id == "pp-uneven"]
    record = catalogs.resolve_recipe(GLM_AIR, "main")
    arch = recipe_arch(record, knowledge_base())
    raw = build_config(record, EDGES_PP2, version="main").model_copy(update={"runner_sync": False})
    found = validate(raw, arch, Cluster(num_gpus=32), "main", gpu=knowledge_base().gpu_spec("h100"))
    uneven = [f for f in found if f.id == "pp-uneven"]
    assert [f.upstream_error for f in uneven] == [upstream.uneven_mismatch(24, 0)]
    assert uneven[0].fix == (
        "model.num_layers_in_first_pipeline_stage=null model.num_layers_in_last_pipeline_stage=null"
    )
    # Edge sizes the user sets are kept by the runner, and checked as given.
    user_edges = {**EDGES_PP2, "model.num_layers_in_first_pipeline_stage": 11,
                  "model.num_layers_in_last_pipeline_stage": 11}  # fmt: skip
    assert [f.id for f in _errors(GLM_AIR, "main", 32, user_edges) if f.id == "pp-uneven"] == ["pp-uneven"]


def test_energon_micro_batch_must_match_the_train_one():
    errors = [f for f in _errors(OMNI, "0.6.0", 4, {"train.micro_batch_size": 2}) if f.id == "energon-mbs"]
    assert [f.upstream_error for f in errors] == [upstream.energon_micro_batch(1, 2)]
    assert errors[0].fix == "dataset.micro_batch_size=2"
    both = {"train.micro_batch_size": 2, "dataset.micro_batch_size": 2}
    assert not [f for f in _errors(OMNI, "0.6.0", 4, both) if f.id == "energon-mbs"]


@pytest.mark.parametrize(
    ("error", "rules"),
    [
        (
            "AssertionError: virtual_pipeline_model_parallel_size conflicts with "
            "pipeline_model_parallel_layout, (self.virtual_pipeline_model_parallel_size=1,  "
            "detected_vpp_size=2)",
            ("pp-layout",),
        ),
        (
            "ValueError: Mismatch: 24 middle layers remaining but 0 middle PP stages available.",
            ("pp-uneven",),
        ),
        (
            "ValueError: EnergonDatasetConfig.micro_batch_size must match train.micro_batch_size (1 != 2).",
            ("energon-mbs",),
        ),
    ],
)
def test_the_new_error_texts_match_their_checks(error, rules):
    signature = match_error(error)
    assert signature is not None and signature.rules == rules


def test_run_recipe_shortcut_flags_are_overrides():
    assert extract_overrides("run_recipe.py --recipe x -pp 8 -vp 1 --micro_batch_size=4 -gb 64") == {
        "model.pipeline_model_parallel_size": "8",
        "model.virtual_pipeline_model_parallel_size": "1",
        "train.micro_batch_size": "4",
        "train.global_batch_size": "64",
    }
    assert extract_overrides("a-pp 3 and x--tp 2") == {}
    assert extract_overrides("用-pp 4 -vp 1跑") == {
        "model.pipeline_model_parallel_size": "4",
        "model.virtual_pipeline_model_parallel_size": "1",
    }


@pytest.mark.integration
def test_stale_layout_answer_says_why_and_where_it_is_fixed(settings):
    question = (
        f"On 0.6.0, run_recipe.py --recipe {DSV3} -pp 8 -vp 1 on 512 H100s fails with AssertionError: "
        "virtual_pipeline_model_parallel_size conflicts with pipeline_model_parallel_layout"
    )
    text = ask(question, settings=settings).answer_markdown
    assert "16 stages" in text and "registers none in 0.6.0" in text
    assert "Fixed in Megatron-Bridge main" in text and "_get_deepseek_v3_pipeline_layout" in text
    assert "model.virtual_pipeline_model_parallel_size=null" in text
    zh = ask(question.replace("fails with", "报错"), settings=settings, lang="zh").answer_markdown
    assert "16 段" in zh and "main" in zh


@pytest.mark.integration
def test_edge_sizes_answer_names_the_runner_fix_and_the_even_split(settings):
    question = (
        f"On a main checkout I run {GLM_AIR} with -pp 2 and MCore aborts in config validation. "
        "What is wrong?"
    )
    answer = ask(question, settings=settings)
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot" and answer.version == "main"
    assert "Mismatch: 24 middle layers remaining but 0 middle PP stages available." in text
    assert "PR #5581" in text and "23 per stage" in text
    assert "model.num_layers_in_first_pipeline_stage=null" in text


@pytest.mark.integration
def test_energon_answer_gives_the_dataset_override(settings):
    question = (
        f"0.6.0: run_recipe.py --recipe {OMNI} train.micro_batch_size=2 stops with ValueError: "
        "EnergonDatasetConfig.micro_batch_size must match train.micro_batch_size (1 != 2)."
    )
    text = ask(question, settings=settings).answer_markdown
    assert "dataset.micro_batch_size=2" in text and "no errors remain" in text


@pytest.mark.integration
def test_a_stale_layout_quoted_at_main_is_what_an_older_checkout_hits(settings):
    """At main the recipe registers a builder: the quoted error is what an entry point without the rebuild
    (or an older checkout) raises, said once, without claiming main registers none."""
    question = (
        f"On main, run_recipe.py --recipe {DSV3} -pp 8 -vp 1 on 512 H100s fails with AssertionError: "
        "virtual_pipeline_model_parallel_size conflicts with pipeline_model_parallel_layout"
    )
    text = ask(question, settings=settings).answer_markdown
    assert "repairs this itself after the override" in text and "_get_deepseek_v3_pipeline_layout" in text
    assert "registers none" not in text and "detected_vpp_size=2" in text
