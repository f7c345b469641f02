"""An error on a named config, through the service API: the upstream check, the cause in the user's numbers,
and a fix the rule module re-validates (assistant/troubleshoot.py)."""

from __future__ import annotations

import pytest

from assistant import catalog as catalogs
from assistant.kb import knowledge_base
from assistant.models import recipe_arch
from assistant.records import Cluster
from assistant.rules.repair import errors_of
from assistant.service import ask
from assistant.session import Conversation
from assistant.settings import Settings
from assistant.troubleshoot import broken_recipe_note, match_error

GLM_EN = (
    "On 0.6.0, glm45_355b_pretrain_config on 128 H100 fails: num_layers=92 should be divisible by "
    "config.pipeline_model_parallel_size=8. Is the recipe broken?"
)
GLM_ZH = (
    "在 0.6.0 上，glm45_355b_pretrain_config 用 128 张 H100 启动失败：num_layers=92 should be divisible by "
    "config.pipeline_model_parallel_size=8。是配方本身有问题吗？"
)
QWEN_EN = "qwen35_vl_35b_a3b pretrain recipe on 8 GPUs raises RuntimeError in initialize_model_parallel"
QWEN_ZH = (
    "qwen35_vl_35b_a3b 的预训练配方在 8 张 GPU 上启动时，initialize_model_parallel 抛出 RuntimeError，"
    "怎么回事？"
)


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("no-index"))


def _revalidates(recipe: str, version: str, gpus: int, fix: dict) -> bool:
    record = catalogs.resolve_recipe(recipe, version)
    arch = recipe_arch(record, knowledge_base())
    return not errors_of(
        record, fix, arch, Cluster(num_gpus=gpus), version, hardware=knowledge_base().hardware
    )


@pytest.mark.integration
def test_glm45_at_060_is_broken_and_the_fix_revalidates(settings):
    answer = ask(GLM_EN, settings=settings)
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot" and answer.recipe.name == "glm45_355b_pretrain_config"
    assert "92 layers over PP 8 leaves 11.5 per stage" in text
    assert "Yes, `glm45_355b_pretrain_config` is broken in Megatron-Bridge 0.6.0" in text
    assert "model.pipeline_model_parallel_size=4" in text and "no errors remain" in text
    assert "num_layers_in_first_pipeline_stage=10" in text  # the option that keeps PP 8
    assert "VP 23" not in text  # not a re-plan of another layout
    assert any(f.id == "pp-layers" for f in answer.findings)
    assert _revalidates("glm45_355b_pretrain_config", "0.6.0", 128, {"model.pipeline_model_parallel_size": 4})
    assert not _revalidates("glm45_355b_pretrain_config", "0.6.0", 128, {})


@pytest.mark.integration
def test_glm45_in_chinese(settings):
    answer = ask(GLM_ZH, settings=settings)
    assert answer.language == "zh" and answer.intent == "troubleshoot"
    assert "92 层分到 PP 8 个流水线阶段，每段 11.5 层" in answer.answer_markdown
    assert "在 Megatron-Bridge 0.6.0 中是坏的" in answer.answer_markdown


@pytest.mark.parametrize("question", [QWEN_EN, QWEN_ZH])
@pytest.mark.integration
def test_qwen35_vl_names_the_unset_etp_and_its_fix(settings, question):
    answer = ask(question, settings=settings)
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot"
    assert answer.recipe.name == "qwen35_vl_35b_a3b_pretrain_mock_config"
    assert "`model.expert_tensor_parallel_size`" in text
    assert "PP·EP·ETP = 2·4·4 = 32" in text
    assert "world_size (8) is not divisible by expert_tensor_model_pipeline_parallel size (32)" in text
    assert "model.expert_tensor_parallel_size=1" in text
    assert "qwen3_30b_a3b" not in text


@pytest.mark.integration
def test_a_follow_up_rechecks_the_amended_config(settings):
    conversation = Conversation()
    ask(GLM_EN, conversation=conversation, settings=settings)
    answer = ask("and with PP 4?", conversation=conversation, settings=settings)
    assert answer.intent == "troubleshoot" and answer.recipe.name == "glm45_355b_pretrain_config"
    assert "`model.pipeline_model_parallel_size=4`" in answer.answer_markdown
    assert "every check that raises this text passes" in answer.answer_markdown
    assert "finds no error" in answer.answer_markdown
    assert "92 layers over PP 4 is 23 per stage: it divides." in answer.answer_markdown  # the working shown
    answer = ask("and with PP 6?", conversation=conversation, settings=settings)
    assert "92 layers over PP 6 leaves 15.33 per stage" in answer.answer_markdown
    # PP 6 also breaks the expert mesh (6·16·1 = 96 does not divide 128): said, not hidden.
    assert "PP·EP·ETP = 6·16·1 = 96" in answer.answer_markdown
    answer = ask("and on 64 GPUs?", conversation=conversation, settings=settings)
    assert answer.intent == "troubleshoot" and "· 64 × H100 ·" in answer.answer_markdown


@pytest.mark.integration
def test_an_error_the_config_does_not_explain_says_so_and_ranks_known_causes(settings):
    answer = ask(
        "llama3_8b_pretrain_config on 8 H100 fails with RuntimeError: world_size (8) is not divisible by "
        "expert_tensor_model_pipeline_parallel size (16)",
        settings=settings,
    )
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot"
    assert "Nothing in this config explains the error" in text
    assert "Known causes of this error" in text and "expert_tensor_parallel_size" in text
    assert "8 GPUs over PP·EP·ETP = 1 leave expert DP 8." in text  # the sum the check did, on these numbers
    assert "**Fix**" not in text  # no invented fix for a cause that is not there


@pytest.mark.parametrize(
    ("error", "rules"),
    [
        ("num_layers=92 should be divisible by config.pipeline_model_parallel_size=8", ("pp-layers",)),
        ("AssertionError: num_layers should be divisible by pipeline_model_parallel_size", ("pp-layers",)),
        (
            "global batch size (192) is not divisible by micro batch size (1) times data parallel size (128)",
            ("batch-divisible",),
        ),
        ("RuntimeError in initialize_model_parallel", ("expert-mesh", "dense-mesh")),
        ("CUDA graph accepts only Tensor inputs.", ("cuda-graph-packed",)),
        ("the loss is nan", None),
    ],
)
def test_error_texts_match_the_upstream_check(error, rules):
    signature = match_error(error)
    assert (signature.rules if signature else None) == rules


@pytest.mark.integration
def test_a_layout_without_a_gpu_count_is_checked_on_the_fewest_gpus_it_uses(settings):
    answer = ask(
        "SFT of qwen3_30b_a3b with context_parallel_size=4 fails with 'When finetuning with CP>1, "
        "calculate_per_token_loss must be True'. What do I need to set?",
        version="0.5.1",
        settings=settings,
    )
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot" and "this checks 32" in text  # TP 4 · PP 2 · CP 4
    assert "model.calculate_per_token_loss=true ddp.average_in_collective=false" in text
    assert "tensor_model_parallel_size" not in text  # no layout change for a GPU count it made up
    assert text.count("** [") <= 1  # the rule module reproduced the error: one guide section backs it up


@pytest.mark.integration
def test_a_sequence_length_said_in_prose_is_part_of_the_checked_config(settings):
    question = (
        "llama3_8b_pretrain_config with seq_length 4097 and CP=2 fails: Sequence length must be divisible by "
        "2 * context parallel size if context parallel is used. Why?"
    )
    text = ask(question, version="0.6.0", settings=settings).answer_markdown
    assert "Nothing in this config explains the error" not in text
    assert "4097 is not divisible by 2·CP = 4" in text
    assert "model.seq_length=4100" in text and "no errors remain" in text
    assert _revalidates(
        "llama3_8b_pretrain_config", "0.6.0", 2,
        {"model.context_parallel_size": 2, "model.seq_length": 4100, "dataset.seq_length": 4100},
    )  # fmt: skip


HYBRID_EN = (
    "On 0.6.0 nemotronh_56b_pretrain_config on 80 H100 with PP 5 fails: num_layers=118 should be divisible "
    "by config.pipeline_model_parallel_size=5"
)


@pytest.mark.integration
def test_a_hybrid_stack_takes_the_uneven_split_warning_as_the_cause(settings):
    answer = ask(HYBRID_EN, settings=settings)
    text = answer.answer_markdown
    assert answer.intent == "troubleshoot" and answer.recipe.name == "nemotronh_56b_pretrain_config"
    assert "118 layers over PP 5 leaves 23.6 per stage" in text and "hybrid stack" in text
    assert "Nothing in this config explains the error" not in text
    split = {"model.num_layers_in_first_pipeline_stage": 23, "model.num_layers_in_last_pipeline_stage": 23}
    assert "model.num_layers_in_first_pipeline_stage=23 model.num_layers_in_last_pipeline_stage=23" in text
    assert _revalidates(
        "nemotronh_56b_pretrain_config", "0.6.0", 80, {"model.pipeline_model_parallel_size": 5, **split}
    )


def test_uneven_stages_that_leave_a_ragged_middle_fail_with_megatron_cores_text():
    record = catalogs.resolve_recipe("glm45_355b_pretrain_config", "0.6.0")
    arch = recipe_arch(record, knowledge_base())
    edges = {"model.num_layers_in_first_pipeline_stage": 11, "model.num_layers_in_last_pipeline_stage": 11}
    errors = errors_of(
        record, edges, arch, Cluster(num_gpus=128), "0.6.0", hardware=knowledge_base().hardware
    )
    assert [f.upstream_error for f in errors if f.id == "pp-uneven"] == [
        "number of layers at middle stage: 70 must be divisible bythe middle pipeline model parallel size 6"
    ]
    signature = match_error(
        "ValueError: number of layers at middle stage: 70 must be divisible bythe middle pipeline model "
        "parallel size 6"
    )
    assert signature is not None and signature.rules == ("pp-uneven",)


def test_a_broken_recipe_says_which_later_release_fixes_it():
    record = catalogs.resolve_recipe("glm45_355b_pretrain_config", "0.6.0")
    assert "Fixed in Megatron-Bridge main" in broken_recipe_note(record, "en")
    nemotron = catalogs.resolve_recipe("nemotronh_56b_pretrain_256gpu_b200_bf16_config", "0.6.0")
    assert "Still failing in the later bundled releases up to main" in broken_recipe_note(nemotron, "en")
