"""Issue 16: intent-only picks, variant choice, the support table and conversation follow-ups, on the
bundled catalogs (extracted from real Megatron-Bridge source) and the real data tables."""

from __future__ import annotations

import json

import pytest

from assistant import quick_pick, support
from assistant.catalog import load_catalog
from assistant.config_text import extract_overrides
from assistant.kb import knowledge_base
from assistant.model_names import candidate_stems
from assistant.recommend import exact_recipe, known_stems, other_variants
from assistant.records import Slots
from assistant.rules.validate import precision_finding
from assistant.service import version_context
from assistant.session import Conversation
from assistant.settings import KNOWLEDGE_BASE
from assistant.understand import understand

KB = knowledge_base()  # the bundled knowledge base the answers read


def hear(text: str, version: str = "0.6.0") -> Slots:
    ctx = version_context(version, kb=knowledge_base())
    return understand(text, known_stems=list(ctx.stems), index=ctx.index)


# ---------------------------------------------------------------- quick-reference picks


@pytest.mark.parametrize("version", ["0.3.1", "0.5.1", "0.6.0", "main"])
def test_every_quick_reference_pick_exists_in_its_version(version: str) -> None:
    table = quick_pick.load_table(KB)
    catalog = load_catalog(version)
    for row in table["versions"][version]["rows"]:
        chosen = quick_pick.pick(row["intent"], catalog, table)
        if row["picks"]:
            assert chosen is not None, row
            assert chosen.record.reachable and chosen.record.kind == "library"
        else:
            assert chosen is None


def test_skill_spelling_resolves_to_the_code_name() -> None:
    chosen = quick_pick.pick("diffusion", load_catalog("0.6.0"), quick_pick.load_table(KB))
    assert chosen is not None and chosen.record.name == "wan_1_3b_pretrain_config"
    assert "flux_12b_pretrain_config" in chosen.alternatives


def test_wildcard_pick_lists_every_size_as_alternative() -> None:
    chosen = quick_pick.pick("finetune_vlm", load_catalog("main"), quick_pick.load_table(KB))
    assert chosen is not None and chosen.record.name == "qwen3_vl_8b_sft_config"
    assert {"gemma3_vl_4b_sft_config", "gemma3_vl_12b_sft_config"} <= set(chosen.alternatives)


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("Which recipe for diffusion training?", "diffusion"),
        ("扩散模型训练应该用哪个配方？", "diffusion"),
        ("I want to fine-tune a vision-language model on 8 GPUs", "finetune_vlm"),
        ("Which recipe should I start from to train a small MoE?", "small_moe"),
        ("Which recipe for LoRA on a single GPU?", "lora_1gpu"),
        ("I'm new to Megatron Bridge. What's the quickest smoke test?", "first_try"),
        ("Which recipe for Qwen3 8B LoRA on one GPU?", None),  # a model is named: no quick pick
    ],
)
def test_quick_intent(question: str, intent: str | None) -> None:
    assert quick_pick.quick_intent(question, hear(question)) == intent


def test_smoke_steps_carry_a_few_iterations() -> None:
    steps = quick_pick.smoke_steps(quick_pick.load_table(KB))
    assert steps and all(s["overrides"]["train.train_iters"] == "10" for s in steps)


# ---------------------------------------------------------------- variants


def test_variant_validated_nearest_the_gpu_count_wins() -> None:
    catalog = load_catalog("0.6.0")
    near = exact_recipe(catalog, "deepseek_v3", "pretrain", None, "h100", 256)
    assert near is not None and near.record.name == "deepseek_v3_pretrain_config_32nodes"
    far = exact_recipe(catalog, "deepseek_v3", "pretrain", None, "h100", 1024)
    assert far is not None and far.record.name == "deepseek_v3_pretrain_config"
    # Fewer GPUs than any variant keeps the default rather than one written for more.
    small = exact_recipe(catalog, "deepseek_v3", "pretrain", None, "h100", 64)
    assert small is not None and small.record.name == "deepseek_v3_pretrain_config"
    assert [v.name for v in other_variants(catalog, near.record)] == ["deepseek_v3_pretrain_config"]


@pytest.mark.integration
def test_the_answer_names_the_benchmark_recipes_of_the_asked_precision() -> None:
    from assistant.service import ask

    answer = ask("Is there NVFP4 support for Qwen3 235B-A22B pretraining on GB200?", version="0.6.0")
    assert "`qwen3_235b_a22b_pretrain_256gpu_gb200_nvfp4_config`" in answer.answer_markdown


@pytest.mark.parametrize("version", ["0.6.0", "main"])
@pytest.mark.integration
def test_a_benchmark_recipe_on_fewer_gpus_gets_the_weak_scaled_batch_and_says_so(version: str) -> None:
    """The launchers of v0.6.0+ scale GBS 192 at DP 32 (64 GPUs, TP 2) to 24 at DP 4 on 8 GPUs; the answer
    says so, how to keep 192, and that no 8-GPU variant exists. Told in two parts, it is one setup."""
    from assistant.service import ask

    question = (
        "We have 8 B300 GPUs for a Nemotron-H 56B FP8 benchmark; the recipe is "
        "nemotronh_56b_pretrain_64gpu_b300_fp8cs_config"
    )
    answer = ask(question, version=version)
    assert not answer.cases and answer.plan is not None
    assert (answer.plan.dp, answer.plan.gbs, answer.plan.ga) == (4, 24, 6)
    assert "train.global_batch_size" not in {item.key for item in answer.overrides}
    text = answer.answer_markdown
    assert "weak-scale" in text and "`train.global_batch_size=192`" in text
    assert "no variant of this benchmark recipe written for 8 GPUs" in text
    zh = ask("8 张 B300 上运行 nemotronh_56b_pretrain_64gpu_b300_fp8cs_config", version=version)
    assert zh.plan is not None and zh.plan.gbs == 24 and "弱扩展" in zh.answer_markdown
    own = ask("nemotronh_56b_pretrain_64gpu_b300_fp8cs_config on 64 B300 GPUs", version=version)
    assert own.plan is not None and own.plan.gbs == 192 and "weak-scale" not in own.answer_markdown


def test_a_model_with_one_layout_has_no_other_variants() -> None:
    catalog = load_catalog("0.6.0")
    chosen = exact_recipe(catalog, "qwen3_30b_a3b", "sft", None, "h100", 16)
    assert chosen is not None and other_variants(catalog, chosen.record) == []


# ---------------------------------------------------------------- support table


def test_support_rows_cite_their_sources_and_bundled_versions() -> None:
    table = json.loads((KNOWLEDGE_BASE / "support.json").read_text(encoding="utf-8"))
    for feature in table["features"]:
        assert feature["rows"], feature["id"]
        for row in feature["rows"]:
            assert row["status"] in support.STATUS and row["sources"] and row["en"] and row["zh"]
            assert row["since"] in {"0.3.1", "0.5.1", "0.6.0", "main"}


@pytest.mark.parametrize(
    ("question", "feature"),
    [
        ("Can I use packed sequences with CP=2?", "packed_cp"),
        ("Is dynamic (hybrid) context parallelism supported?", "dynamic_cp"),
        ("What is needed for CP with DeepSeek-V4?", "cp_deepseek_v4"),
        ("Does CP work with MLA in DeepSeek V3?", "cp_mla"),
        ("CUDA graphs with packed sequences?", "cuda_graph_packing"),
        ("Can I use FSDP with TP=2 on H100?", "fsdp_tp"),
        ("How do I export a checkpoint to Hugging Face?", "hf_conversion"),
        ("Can I pack sequences for VLM training?", "vlm_packing"),
        ("Can I recompute the RADIO vision encoder of Nemotron Omni?", "vision_recompute"),
        ("Can I selectively recompute only the gated norm in Qwen3-Next GDN layers?", "gdn_recompute"),
        ("recompute_modules=[gdn_norm_out] on 0.5.1?", "gdn_recompute"),
        ("MXFP8 on RTX 5090?", "mxfp8_sm120"),
        ("FP8 block scaled GEMM requires Hopper and CUDA >= 12.9", "fp8_blockwise"),
        ("Is blockwise FP8 supported on H100?", "fp8_blockwise"),
        ("Can I use FP8 on H100?", "precision"),
        ("Does Megatron-Bridge support Megatron FSDP?", "megatron_fsdp"),
        ("Can I use FSDP with TP=2?", "fsdp_tp"),
        ("What is the learning rate of Llama3 8B?", None),
    ],
)
def test_feature_matching(question: str, feature: str | None) -> None:
    found = support.match_feature(question, support.load_table(KB))
    assert (found["id"] if found else None) == feature


def test_blockwise_fp8_names_the_cuda_floor_and_a_preset_of_the_release() -> None:
    for version in ("0.3.1", "main"):
        found = support.answer("blockwise FP8 on H100 fails", version, "en", support.load_table(KB))
        assert found is not None and found.status == "partial" and "CUDA 12.9" in found.text
        presets = set(load_catalog(version).launcher.mixed_precision_presets)
        assert {"bf16_with_fp8_subchannel_scaling_mixed", "bf16_with_fp8_current_scaling_mixed"} <= presets


def test_answer_before_the_first_version_is_no_with_the_version_it_starts() -> None:
    older = support.answer("Is dynamic context parallelism supported?", "0.3.1", "en", support.load_table(KB))
    newer = support.answer("Is dynamic context parallelism supported?", "0.6.0", "en", support.load_table(KB))
    assert older is not None and older.status == "no" and "from 0.5.1" in older.text
    assert newer is not None and newer.status == "experimental" and "initialize.py" in newer.text
    assert "not end-to-end" in newer.text.lower()


def test_mxfp8_on_workstation_blackwell_is_no_whatever_the_release() -> None:
    question = "Can I train with MXFP8 on an RTX PRO 6000 Blackwell?"
    for version in ("0.3.1", "main"):
        found = support.answer(question, version, "en", support.load_table(KB))
        assert found is not None and found.feature == "mxfp8_sm120" and found.status == "no"


def test_precision_answer_comes_from_the_rule_module() -> None:
    def check(precision: str, gpu: str):
        return precision_finding(precision, gpu, knowledge_base().gpu_spec(gpu) if gpu else None)

    table = support.load_table(KB)
    h100 = support.answer("Can I train in MXFP8 on H100?", "0.6.0", "en", table, precision_check=check)
    b200 = support.answer("Can I train in MXFP8 on B200?", "0.6.0", "en", table, precision_check=check)
    assert h100 is not None and h100.status == "no" and "MXFP8 · H100: no" in h100.text
    assert b200 is not None and b200.status == "yes"


def test_deepseek_v4_names_its_family_and_recipes_at_main() -> None:
    ctx = version_context("main", kb=knowledge_base())
    slots = hear("What is needed for CP with DeepSeek-V4?", "main")
    stems = candidate_stems(slots.model_text or "", list(ctx.stems))
    assert set(stems) == {"deepseek_v4_flash", "deepseek_v4_pro"}
    found = support.answer(
        "What is needed for CP with DeepSeek-V4?", "main", "en", support.load_table(KB),
        recipes=ctx.catalog.recipes, stems=stems,
    )  # fmt: skip
    assert found is not None and "cp_partition_mode=contiguous" in found.text
    assert "deepseek_v4_flash_pretrain_config" in found.text


def test_megatron_fsdp_names_its_keys_checkpoint_format_and_what_is_validated() -> None:
    table = support.load_table(KB)
    for version in ("0.3.1", "0.6.0", "main"):
        found = support.answer("Does Bridge support Megatron FSDP?", version, "en", table)
        assert found is not None and found.feature == "megatron_fsdp" and found.status == "yes"
        assert "use_megatron_fsdp" in found.text and "fsdp_dtensor" in found.text
        assert "not yet validated" in found.text and "2-GPU" in found.text
    old = support.answer("Does Bridge support Megatron FSDP?", "0.3.1", "en", table)
    assert old is not None and "CUDA_DEVICE_MAX_CONNECTIONS" not in old.text  # checked from 0.5.x only


@pytest.mark.integration
def test_a_feature_question_on_a_recipe_or_without_a_model_states_the_feature_row() -> None:
    from assistant.service import ask

    on_recipe = ask("How do I enable Megatron FSDP for qwen3_vl_30b_a3b_sft_config?", version="main")
    assert on_recipe.recipe is not None and "ddp.use_megatron_fsdp=True" in on_recipe.answer_markdown
    no_model = ask("Is Megatron FSDP validated for LoRA on an MoE model with EP?", version="main")
    assert "not yet validated" in no_model.answer_markdown


def test_moe_lora_rank_scaling_is_no_before_its_release_and_named_after() -> None:
    question = "有没有 normalize_moe_lora 这样的开关让 MoE 专家层的 LoRA rank 缩小？"
    table = support.load_table(KB)
    old = support.answer(question, "0.3.1", "zh", table)
    new = support.answer(question, "0.6.0", "en", table)
    assert old is not None and old.feature == "moe_lora_rank" and old.status == "no" and "0.5.1" in old.text
    assert new is not None and new.status == "yes" and "dim // moe_router_topk" in new.text
    lora = support.match_feature("Can I LoRA Qwen3 30B-A3B MoE?", table)
    assert lora is not None and lora["id"] == "peft"  # a plain LoRA question keeps its recipe list


@pytest.mark.integration
def test_a_follow_up_that_names_no_feature_keeps_the_last_turns_feature() -> None:
    from assistant.service import ask

    conv = Conversation()
    ask("How do I enable Megatron FSDP for qwen3_vl_30b_a3b_sft_config?", version="main", conversation=conv)
    second = ask("and which checkpoint format do I have to save with?", version="main", conversation=conv)
    assert "fsdp_dtensor" in second.answer_markdown
    fresh = ask("and which checkpoint format do I have to save with?", conversation=Conversation())
    assert "Megatron-FSDP" not in fresh.answer_markdown  # no earlier feature question, no feature row


@pytest.mark.integration
def test_the_last_feature_question_survives_a_json_round_trip() -> None:
    """Front ends that keep a chat as JSON (Gradio state, the Slack thread store) rebuild the conversation."""
    from assistant.service import ask

    conv = Conversation()
    ask("How do I enable Megatron FSDP for qwen3_vl_30b_a3b_sft_config?", version="main", conversation=conv)
    restored = Conversation.from_json(json.loads(json.dumps(conv.to_json())))
    second = ask("and which checkpoint format do I have to save with?", version="main", conversation=restored)
    assert "fsdp_dtensor" in second.answer_markdown


# ---------------------------------------------------------------- wording and conversation


def test_spaced_sizes_and_recipe_defaults() -> None:
    assert extract_overrides("TP 2 is slow") == {"model.tensor_model_parallel_size": "2"}
    assert extract_overrides("the recipe default is TP=1") == {}
    assert extract_overrides("默认 TP=1，我想用 TP=2") == {"model.tensor_model_parallel_size": "2"}
    assert extract_overrides("8 GPUs, EP 8 gpus") == {}


@pytest.mark.parametrize(
    "text",
    [
        "hi", "Hello!", "what can you do?", "你好", "你能做什么？",
        "hi! I'm new here, what can you help me with?", "hello there. what can you do?",
        "你好，我刚开始用，你能帮我做什么？", "我是新手，你能做什么",
    ],
)  # fmt: skip
def test_greetings(text: str) -> None:
    assert hear(text).intent == "greeting"


@pytest.mark.parametrize(
    "text",
    [
        "I'm new to Megatron Bridge. What's the quickest smoke test?",
        "hi, SFT Llama 3 8B on 8 H100",
        "hello, what can you tell me about recompute?",
    ],
)
def test_small_talk_with_a_real_question_is_not_a_greeting(text: str) -> None:
    assert hear(text).intent != "greeting"


@pytest.mark.parametrize(
    "text",
    [
        "Which models does Megatron-Bridge support?", "hello - what models can I fine-tune with bridge?",
        "What can it do? Which models can we pretrain on it?", "支持哪些模型？", "你好，可以训练哪些模型？",
    ],
)  # fmt: skip
def test_which_models_is_answered_like_what_can_you_do(text: str) -> None:
    assert hear(text).intent == "greeting"


@pytest.mark.parametrize(
    "text", ["which models support FP8 on H100?", "which models can I train on 8 H100 with LoRA?"]
)
def test_which_models_with_a_condition_is_a_real_question(text: str) -> None:
    assert hear(text).intent != "greeting"


def test_follow_ups_apply_to_the_last_plan_only() -> None:
    conv = Conversation()
    conv.update(hear("Llama3 70B pretrain on 64 H100"), text="Llama3 70B pretrain on 64 H100")
    fastest = conv.update(hear("what's the fastest layout for this?"), text="x")
    assert (fastest.intent, fastest.model_stem, fastest.wants_fastest) == ("recommend", "llama3_70b", True)
    slow = conv.update(hear("it's slow, why?"), text="x")
    assert (slow.intent, slow.speed_question) == ("recommend", True)
    why = conv.update(hear("why?"), text="x")
    assert why.asks_why and why.speed_question is None
    # With no plan yet, the same question is not a recommendation.
    assert Conversation().update(hear("it's slow, why?"), text="x").intent != "recommend"


WHY_WORDINGS = [
    "why that parallelism?",
    "why did you pick this one?",
    "Why this config?",
    "为什么用这个并行？",
    "为什么选这个配方？",
]


@pytest.mark.parametrize("text", WHY_WORDINGS)
def test_why_about_the_plan_in_other_words_asks_about_the_last_plan(text: str) -> None:
    conv = Conversation()
    conv.update(hear("Llama3 70B pretrain on 64 H100"), text="Llama3 70B pretrain on 64 H100")
    why = conv.update(hear(text), text=text)
    assert (why.intent, why.model_stem, why.num_gpus, why.asks_why) == ("recommend", "llama3_70b", 64, True)


PLAN_QUESTIONS = ["how fast will it be?", "how much memory does it need?", "吞吐大概多少？", "能跑多快？"]
PLAN_QUESTIONS += ["放得下吗？"]


@pytest.mark.parametrize("text", PLAN_QUESTIONS)
def test_a_short_question_on_speed_or_memory_asks_about_the_last_plan(text: str) -> None:
    """Was out of scope ("how fast will it be?") or a guide quote ("吞吐大概多少？") that forgot the plan."""
    conv = Conversation()
    conv.update(hear("Llama3 70B pretrain on 64 H100"), text="Llama3 70B pretrain on 64 H100")
    asked = conv.update(hear(text), text=text)
    kept = (asked.intent, asked.model_stem, asked.num_gpus, asked.asks_plan)
    assert kept == ("recommend", "llama3_70b", 64, True)
    # said once: the next turn does not ask it again
    assert not conv.update(hear("and on 128 GPUs?"), text="x").asks_plan
    # with no plan yet, the question is not a recommendation of a model nobody named
    assert Conversation().update(hear(text), text=text).intent != "recommend"


RULE_WHYS = ["why is sequence parallel needed?", "why use FSDP?", "为什么要开序列并行？"]


@pytest.mark.parametrize("text", RULE_WHYS)
def test_a_why_question_about_a_rule_is_not_about_the_last_plan(text: str) -> None:
    assert not hear(text).asks_why


def test_known_stems_are_unchanged_by_family_prefixes() -> None:
    stems = known_stems(load_catalog("0.6.0"))
    assert "deepseek_v4_flash" in stems and "deepseek_v4" not in stems


# ---------------------------------------------------------------- whole answers


@pytest.mark.integration
def test_smoke_test_keeps_its_recipe_and_fits_on_the_assumed_gpus() -> None:
    from assistant.service import ask

    answer = ask("I'm new to Megatron Bridge. What's the quickest smoke test?", version="0.6.0")
    assert answer.recipe is not None and answer.recipe.name == "llama3_8b_pretrain_config"
    assert answer.fit is not None and answer.fit.status == "fits"
    assert "8 × H100" in answer.answer_markdown and "train.train_iters=10" in (answer.commands.torchrun or "")


@pytest.mark.integration
def test_hf_id_after_an_unknown_model_gets_a_similar_recipe_with_a_warning() -> None:
    from assistant.service import ask

    conv = Conversation()
    first = ask("Mistral 7B SFT on 8 H100", version="0.6.0", conversation=conv)
    second = ask("mistralai/Mistral-7B-v0.1", version="0.6.0", conversation=conv)
    assert first.recipe is None and second.recipe is not None and second.recipe.mode == "sft"
    assert "most similar architecture" in second.answer_markdown
    assert second.answer_markdown != first.answer_markdown


@pytest.mark.integration
def test_a_config_check_that_names_a_topic_also_states_its_facts() -> None:
    from assistant.service import ask

    question = "Nemotron 3 Super pretraining on 64 B200 with EP=64 hits HybridEP topology errors. Which EP?"
    found = ask(question, version="main")
    assert found.intent == "validate" and "NVLink domain" in found.answer_markdown
    assert "keep EP at or below 8" in found.answer_markdown
    plain = ask("Nemotron 3 Super pretraining on 64 B200 with EP=64", version="main")
    assert "NVLink domain" not in plain.answer_markdown  # no topic named, no topic facts


@pytest.mark.integration
def test_sequence_follow_up_is_answered_in_the_amended_numbers() -> None:
    from assistant.service import ask

    conv = Conversation()
    first = ask("With CP=2 and TP=4 and sequence parallelism, what must the sequence length be divisible by?",
                conversation=conv)  # fmt: skip
    assert "multiple of 8" in first.answer_markdown
    second = ask("and with TP 8?", conversation=conv)
    assert second.intent == "explain" and "multiple of 16" in second.answer_markdown


@pytest.mark.integration
def test_a_model_support_question_lists_the_catalogs_recipes_or_says_none() -> None:
    from assistant.service import ask

    catalog = load_catalog("0.6.0")
    listed = support.model_support("Qwen3 8B", ["qwen3_8b"], catalog.recipes, "0.6.0", "en")
    assert "**yes**" in listed and "`qwen3_8b_pretrain_config`" in listed
    assert support.model_support("Nope 9B", ["nope_9b"], catalog.recipes, "0.6.0", "en") == ""
    family = ask("Does Megatron Bridge support Llama 3?", version="0.6.0").answer_markdown
    assert "**yes**" in family and "`llama3_8b_pretrain_config`" in family and "`llama3_70b" in family
    unknown = ask("Does Megatron Bridge support Mixtral 8x7B?", version="0.6.0").answer_markdown
    assert "**yes**" not in unknown and "no recipe" in unknown
    assert support.asks_model_support("支持 Gemma 3 吗？") and not support.asks_model_support("Gemma 3 SFT")
    feature = ask("I use Qwen3 235B. Is DeepEP supported on GB200?", version="0.6.0").answer_markdown
    assert "recipes for `qwen3_235b_a22b`" not in feature  # a feature question, not a model one


def test_a_precision_asked_for_names_that_precisions_benchmark_recipes_for_the_gpu() -> None:
    from assistant.recommend import precision_variants

    catalog = load_catalog("0.6.0")
    library = next(r for r in catalog.recipes if r.name == "qwen3_235b_a22b_pretrain_config")
    named = [r.name for r in precision_variants(catalog, library, "nvfp4", "b200")]
    assert named == [
        "qwen3_235b_a22b_pretrain_64gpu_b200_nvfp4_config",
        "qwen3_235b_a22b_pretrain_256gpu_b200_nvfp4_config",
    ]
    assert precision_variants(catalog, library, None, "b200") == []
    assert precision_variants(catalog, library, "nvfp4", "h100") == []  # none written for H100 in NVFP4


def test_the_first_of_two_named_models_is_the_one_asked_about() -> None:
    question = "Pretrain Qwen3 4B from scratch; it looks like Qwen2.5 7B, can I reuse that recipe?"
    slots = hear(question, "0.5.1")
    assert slots.model_stem == "qwen3_4b"
    assert hear("Qwen3 30B-A3B SFT on 16 GPUs").model_stem == "qwen3_30b_a3b"  # the longer key of one mention


@pytest.mark.integration
def test_a_family_with_a_goal_but_no_size_lists_the_goal_recipe_of_each_size() -> None:
    from assistant.service import ask

    question = "I want to pretrain a model with the GPT-OSS architecture. Where do I start?"
    answer = ask(question, version="0.3.1")
    lead = answer.answer_markdown.split("\n\n")[0]
    assert "`gpt_oss_20b_pretrain_config`" in lead and "`gpt_oss_120b_pretrain_config`" in lead


@pytest.mark.integration
def test_an_unknown_model_is_not_a_parity_run_and_the_answer_lists_what_exists() -> None:
    from assistant.service import ask

    # "Megatron-LM" in the question once routed it to the parity recipe (vanilla_gpt).
    question = "Does Megatron support DeepSeek-VL2 finetuning? If Megatron-LM can't, can I use Bridge?"
    answer = ask(question, version="main")
    assert answer.recipe is None and "vanilla_gpt" not in answer.answer_markdown
    assert "no recipe for **DeepSeek-VL2**" in answer.answer_markdown
    assert "Other DeepSeek models with recipes in Megatron-Bridge main: `deepseek_v2`" in (
        answer.answer_markdown
    )
    assert "Vision-language models with recipes" in answer.answer_markdown
    zh = ask("Megatron-Bridge 0.3.1 支持 DeepSeek-VL2 微调吗？").answer_markdown
    assert "其他 DeepSeek 模型" in zh and "`qwen3_vl_8b`" in zh and "deepseek_v4" not in zh


def test_related_stems_of_a_vendor_and_of_a_vision_language_name() -> None:
    from assistant.model_names import related_stems

    stems = ["deepseek_v3", "qwen3_vl_8b", "qwen3_8b", "llama3_8b"]
    vl = related_stems("DeepSeek-VL2", stems)
    assert (vl.vendor, vl.same_vendor, vl.vision) == ("DeepSeek", ("deepseek_v3",), ("qwen3_vl_8b",))
    text = related_stems("Qwen4 7B", stems)
    assert text.same_vendor == ("qwen3_8b", "qwen3_vl_8b") and text.vision == ()
    assert related_stems("Zorblax 13B", stems) == related_stems("", stems)


@pytest.mark.integration
def test_a_size_the_family_lacks_is_no_recipe_whatever_other_recipe_is_named() -> None:
    from assistant.service import ask

    question = (
        "Is there a fine-tuning recipe for Qwen3-VL-4B (Qwen/Qwen3-VL-4B-Instruct)? "
        "I only see qwen3_vl_8b_finetune_config and the 30B-A3B MoE one."
    )
    answer = ask(question, version="0.3.1")
    assert answer.recipe is None and answer.commands.torchrun is None
    assert "no recipe for **Qwen3-VL-4B**: there is no recipe of that size" in answer.answer_markdown
    assert "`qwen3_vl_8b_finetune_config`" in answer.answer_markdown  # the family's SFT recipes
    # A support question about a missing size is no, not the yes of its family's other sizes.
    for text in ("Does Bridge support Gemma3 4B?", "Megatron-Bridge 支持 Gemma 3 4B 吗？"):
        said = ask(text, version="0.3.1").answer_markdown
        assert "**yes**" not in said and "**支持**" not in said and "`gemma3_1b`" in said


def test_missing_size_needs_a_size_the_family_does_not_have() -> None:
    from assistant.model_names import missing_size

    index = version_context("0.3.1", KB).index
    assert missing_size("Qwen3-VL-4B", index) == ("qwen3_vl_235b_a22b", "qwen3_vl_30b_a3b", "qwen3_vl_8b")
    assert missing_size("Qwen3-VL 8B", index) == ()
    assert missing_size("Qwen3-VL", index) == ()  # no size named: the family, not a gap
    assert missing_size("Zorblax 13B", index) == ()


def test_a_feature_that_changes_in_a_later_release_names_that_release() -> None:
    table = support.load_table(KB)
    question = "On 0.6.0, can I use Energon's native online packing (packing_buffer_size) for Qwen3-VL SFT?"
    at_060 = support.answer(question, "0.6.0", "en", table)
    assert at_060 is not None and at_060.feature == "vlm_packing"
    assert "not in 0.6.0" in at_060.text and "added on main by PR 5285" in at_060.text
    assert "energon.py:141 (v0.6.0)" in at_060.text and "From main" not in at_060.text  # same status
    at_main = support.answer(question, "main", "en", table)
    assert at_main is not None and "`packing_buffer_size`" in at_main.text
    assert "`micro_batch_size=1`" in at_main.text
    # A later release whose status differs is named with its status: no at 0.5.1, yes from 0.6.0.
    omni = "Can I recompute the RADIO vision encoder of Nemotron Omni?"
    at_051 = support.answer(omni, "0.5.1", "en", table)
    assert at_051 is not None
    assert "From 0.6.0 (**yes**): Opt in with `model.recompute_vision=True`" in at_051.text
    zh = support.answer("Nemotron Omni 的 RADIO 视觉编码器能开重计算吗？", "0.5.1", "zh", table)
    assert zh is not None and "（0.6.0 起：**支持**）" in zh.text


def test_gdn_norm_out_recompute_is_no_before_the_core_that_has_it() -> None:
    table = support.load_table(KB)
    question = "Can I selectively recompute only the gated norm in Qwen3-Next GDN layers?"
    old = support.answer(question, "0.5.1", "en", table)
    new = support.answer(question, "0.6.0", "en", table)
    assert old is not None and old.status == "no" and "available from 0.6.0" in old.text
    assert new is not None and new.status == "yes"
    for found in (old, new):
        assert "`model.recompute_modules=[gdn_norm_out]`" in found.text and "selective" in found.text


def test_nemotron_omni_vision_recompute_only_in_060() -> None:
    table = support.load_table(KB)
    question = "Nemotron Omni SFT runs out of memory in the RADIO vision encoder. Can I turn on recompute?"
    statuses = {v: support.answer(question, v, "en", table) for v in ("0.5.1", "0.6.0", "main")}
    assert {v: a.status for v, a in statuses.items() if a} == {"0.5.1": "no", "0.6.0": "yes", "main": "no"}
    assert "`model.recompute_vision=True`" in statuses["0.6.0"].text
    assert "`model.radio_force_eval_mode=False`" in statuses["0.6.0"].text


def test_selective_recompute_modules_are_listed_per_release() -> None:
    from assistant.topic_answer import load_facts

    facts = load_facts(knowledge_base())
    for version, has_gdn in (("0.3.1", False), ("0.5.1", False), ("0.6.0", True), ("main", True)):
        fact = facts.fact("recompute.md#selective-recompute", version)
        assert fact is not None and ("`gdn_norm_out`" in fact.en) is has_gdn
        assert ("`gdn_norm_out`" in fact.zh) is has_gdn


def test_the_guide_lists_gdn_norm_out_for_its_releases_in_both_languages() -> None:
    for lang, marker in (("en", "`gdn_norm_out` (v0.6.0+)"), ("zh", "`gdn_norm_out`（v0.6.0+）")):
        page = (KNOWLEDGE_BASE / "guide" / lang / "recompute.md").read_text(encoding="utf-8")
        row = next(line for line in page.splitlines() if line.startswith(f"| {marker} |"))
        assert "v0.5.1" in row  # and says which releases reject it


@pytest.mark.integration
def test_a_missing_size_names_the_same_size_in_a_related_family_of_the_same_kind() -> None:
    from assistant.service import ask

    llama = ask("Is there a LoRA recipe for Llama 3 405B?", version="0.6.0").answer_markdown
    assert "no recipe for **Llama 3 405B**" in llama
    assert "That size has recipes in a related family: `llama31_405b`." in llama
    vision = ask("Is there a fine-tuning recipe for Qwen3-VL-4B?", version="0.6.0").answer_markdown
    assert "related family: `qwen35_vl_4b`." in vision and "`qwen3_4b`" not in vision  # not the text model
