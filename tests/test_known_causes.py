"""Known causes (assistant/known_causes.py) and their table (knowledge_base/known_causes.json).

The table is checked for shape (both languages, sources, releases, patterns that compile, a heading per
kind) and, where the upstream mirror is on this machine, every Megatron-Bridge path it cites exists at a
release its fact holds for. Matching is driven with questions in the users' own words: a symptom with the
feature it names gets the cause; the feature alone, or the symptom alone, gets nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from assistant.kb import KnowledgeBase
from assistant.known_causes import known_cause_lines, load_causes, matching
from assistant.messages import CATALOGS
from assistant.service import ask
from assistant.settings import KNOWLEDGE_BASE, Settings

CAUSES = load_causes(KnowledgeBase(KNOWLEDGE_BASE))
RAW = json.loads((KNOWLEDGE_BASE / "known_causes.json").read_text(encoding="utf-8"))
VERSIONS = {"0.3.1", "0.5.1", "0.6.0", "main"}
BRIDGE = Path(os.environ.get("AUTORECIPE_MIRRORS", "/work/.mirror")) / "NVIDIA-NeMo+Megatron-Bridge" / "repo"
MAIN_PIN = "067f987df03b8355b03192d88d70f1709fedf51a"  # the main snapshot the catalog was built from
TAGS = {"0.3.1": "v0.3.1", "0.5.1": "v0.5.1", "0.6.0": "v0.6.0", "main": MAIN_PIN}
NOT_BRIDGE_PATHS = ("Megatron-LM ", "https://", "commit ")


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("no-index"))


def _ids(text: str, version: str) -> list[str]:
    return [cause.id for cause, _ in matching(text, version, CAUSES)]


@pytest.mark.parametrize("row", RAW["causes"], ids=[r["id"] for r in RAW["causes"]])
def test_every_row_is_sourced_in_both_languages_with_a_heading(row):
    assert row["when"] and all(group for group in row["when"]), row["id"]
    for group in row["when"]:
        for pattern in group:
            re.compile(pattern)
    kinds = {row["kind"], *(f["kind"] for f in row["facts"] if "kind" in f)}
    for lang in ("en", "zh"):
        assert all(f"known_causes.kind.{kind}" in CATALOGS[lang] for kind in kinds), (lang, kinds)
    covered: list[str] = []
    for fact in row["facts"]:
        assert fact["en"] and fact["zh"] and fact["sources"], row["id"]
        assert set(fact.get("versions", VERSIONS)) <= VERSIONS, row["id"]
        covered += fact.get("versions", sorted(VERSIONS))
        # identifiers are verbatim in both languages
        assert set(re.findall(r"`([^`]+)`", fact["en"])) == set(re.findall(r"`([^`]+)`", fact["zh"])), row[
            "id"
        ]
    assert len(covered) == len(set(covered)), f"{row['id']}: two facts for one release"


def _bridge_paths():
    for row in RAW["causes"]:
        for fact in row["facts"]:
            for source in fact["sources"]:
                if not source.startswith(NOT_BRIDGE_PATHS):
                    yield (
                        row["id"],
                        re.split(r"[ :]", source, maxsplit=1)[0],
                        sorted(fact.get("versions", VERSIONS)),
                    )


@pytest.mark.parametrize(("row", "path", "versions"), list(_bridge_paths()))
def test_cited_bridge_paths_exist_upstream(row, path, versions):
    if not BRIDGE.exists():
        pytest.skip("Megatron-Bridge mirror not available")
    found = [
        v
        for v in versions
        if subprocess.run(
            ["git", "-C", str(BRIDGE), "cat-file", "-e", f"{TAGS[v]}:{path}"],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    ]
    # the cuDNN-norm defaults lived only between two commits of main, before 0.6.0: the file itself exists
    assert found, f"{row}: {path} exists at none of {versions}"


@pytest.mark.parametrize(
    ("question", "version", "expected"),
    [
        (
            "Qwen3 30B-A3B on 32 H100: DeepEP fails while building the model with ImportError, "
            "alltoall works. "
            "Is DeepEP just slower here?",
            "0.6.0",
            "flex-dispatcher-package-missing",
        ),
        (
            "用 HybridEP 训练 DeepSeek-V3 时模型构建阶段就失败，只有 alltoall 能跑，是不是缺少安装包？",
            "0.5.1",
            "flex-dispatcher-package-missing",
        ),
        (
            "DeepSeek V3 with DeepEP on H100 dies with RuntimeError: DeepEP error: timeout (dispatch CPU)",
            "0.5.1",
            "deepep-dispatch-cpu-timeout",
        ),
        (
            "My MoE loss with the flex dispatcher (HybridEP) is not the same as with alltoall. Bug?",
            "main",
            "dispatcher-loss-order",
        ),
        (
            "Saving a torch_dist checkpoint of Llama 3 70B takes 10 minutes each time, "
            "how do I make it faster?",
            "0.6.0",
            "checkpoint-save-slow",
        ),
        ("保存检查点太慢了，每次要好几分钟，怎么加速？", "0.3.1", "checkpoint-save-slow"),
        (
            "A main build from July made my Qwen3-VL SFT 3x slower; "
            "the vision encoder forward is much slower.",
            "0.6.0",
            "cudnn-norm-env-slow",
        ),
        ("Should I set NVTE_NORM_FWD_USE_CUDNN for Llama?", "0.5.1", "cudnn-norm-env-slow"),
        (
            "NVFP4 pretraining of Llama 3.1 405B on 128 GB200 goes out of memory",
            "0.6.0",
            "nvfp4-param-gather-oom",
        ),
        (
            "Exporting my Megatron checkpoint to Hugging Face needs --hf-model; "
            "can it export from the checkpoint "
            "alone?",
            "0.3.1",
            "export-auto-config",
        ),
        (
            "Is there a built-in tool to prepare my raw dataset for pretraining?",
            "0.5.1",
            "data-prep-built-in",
        ),
        (
            "Moonlight 16B pretraining got slower with TP 2 on the new container",
            "0.6.0",
            "moonlight-nano-tp-regression",
        ),
        (
            "Qwen2.5-VL video SFT: ModuleNotFoundError: No module named 'decord'",
            "0.5.1",
            "video-decoding-packages-removed",
        ),
        (
            "On AWS EKS our long runs slow down over time and host memory keeps growing",
            "0.3.1",
            "aws-ofi-nccl-leak",
        ),
        (
            "Nemotron-H 56B logs MODEL_TFLOP/s/GPU as 0, is the hybrid model that slow?",
            "main",
            "hybrid-model-tflops-zero",
        ),
        (
            "Can I pretrain DeepSeek V3 with subchannel (blockwise) FP8 on H100?",
            "0.6.0",
            "deepseek-subchannel-fp8",
        ),
        (
            "Converting a checkpoint trained with Megatron-LM to Hugging Face fails: Could not find "
            "run_config.yaml",
            "0.5.1",
            "mlm-checkpoint-no-run-config",
        ),
        ("如何把 Megatron-LM 训练的检查点导出为 Hugging Face 格式？", "main", "mlm-checkpoint-no-run-config"),
    ],
)
def test_a_symptom_with_its_feature_gets_its_cause(question, version, expected):
    assert _ids(question, version)[:1] == [expected]


@pytest.mark.parametrize(
    "question",
    [
        "How do I turn on DeepEP for Qwen3 30B-A3B on 16 H100?",
        "Pretrain Llama 3.1 405B in NVFP4 on 256 GB200",
        "How often should I save checkpoints for DeepSeek V3 pretraining?",
        "Is alltoall or DeepEP faster on B200?",
        "Export a Megatron checkpoint to Hugging Face format",
        "Which datasets does the squad preset download?",
        "Qwen3 30B-A3B SFT on 16 H100 is slow, why?",
        "Pretrain Moonlight 16B on 64 H100",
        "Fine-tune Nemotron 3 Nano on 8 B200 with TP 2",
        "Where does the export find run_config.yaml in a Bridge checkpoint?",
        "Pretrain DeepSeek V3 in FP8 on 256 H100",
    ],
)
def test_the_feature_or_the_symptom_alone_gets_no_cause(question):
    assert _ids(question, "0.6.0") == []


# Rows from upstream's own documentation (CUDA graphs, precision, overlap, VLM, dispatch): three
# phrasings each, English and Chinese, of the symptom with its feature; the feature asked about
# without a symptom gets nothing.
DOC_ROWS_SYMPTOMS = [
    (
        "SFT with packed sequences and cuda_graph_impl=transformer_engine fails: "
        "AssertionError: CUDA graph accepts only Tensor inputs",
        "0.6.0",
        "cuda-graph-packed-sequence",
    ),
    (
        "LoRA finetune of Llama 3 8B with packed_sequence=True crashes once I enable CUDA graphs",
        "main",
        "cuda-graph-packed-sequence",
    ),
    ("打包序列的 SFT 打开 CUDA 图之后报错，怎么办？", "0.5.1", "cuda-graph-packed-sequence"),
    (
        "Enabling CUDA graphs with recompute_granularity=full gives an assertion error",
        "0.6.0",
        "cuda-graph-full-recompute",
    ),
    (
        "AssertionError: full recompute is only supported with full iteration CUDA graph.",
        "main",
        "cuda-graph-full-recompute",
    ),
    ("开启 CUDA 图和完整重计算后训练报错", "0.5.1", "cuda-graph-full-recompute"),
    (
        "Transformer engine's RNG tracker is required for cudagraphs, "
        "it can be enabled with use_te_rng_tracker=True",
        "0.3.1",
        "cuda-graph-te-rng-tracker",
    ),
    ("cuda graph run fails with an rng tracker assertion at startup", "0.6.0", "cuda-graph-te-rng-tracker"),
    ("开启 CUDA 图后启动时报 RNG tracker 断言错误", "main", "cuda-graph-te-rng-tracker"),
    (
        "AssertionError: check_for_nan_in_loss must be disabled when using full_iteration CUDA graph",
        "0.3.1",
        "cuda-graph-full-iteration-nan-check",
    ),
    (
        "local full_iteration cuda graph complains about the NaN check",
        "0.6.0",
        "cuda-graph-full-iteration-nan-check",
    ),
    ("使用 full_iteration CUDA 图时 NaN 检查报错", "0.5.1", "cuda-graph-full-iteration-nan-check"),
    ("Qwen3 30B-A3B runs fine but goes OOM as soon as I turn on CUDA graphs", "0.6.0", "cuda-graph-oom"),
    ("cuda_graph_scope attn moe_router gives out of memory on 16 H100", "main", "cuda-graph-oom"),
    ("打开 CUDA 图以后显存不足了", "0.5.1", "cuda-graph-oom"),
    ("I enabled CUDA graphs but got no speedup at all", "0.6.0", "cuda-graph-no-speedup"),
    (
        "With cuda_graph_impl=transformer_engine my step time is slower than eager",
        "main",
        "cuda-graph-no-speedup",
    ),
    ("开了 CUDA 图反而变慢了，为什么？", "0.5.1", "cuda-graph-no-speedup"),
    ("CUDA graphs not supported with CPU offloading", "0.6.0", "cuda-graph-cpu-offload"),
    ("Can I combine activation offloading with CUDA graphs? it errors", "main", "cuda-graph-cpu-offload"),
    ("CUDA 图和激活卸载一起用报错", "0.5.1", "cuda-graph-cpu-offload"),
    ("Qwen3-VL SFT with CP=2 and sequence packing fails", "0.3.1", "qwen3-vl-cp-packing"),
    ("Does qwen3_vl support context parallel with packed sequences?", "0.6.0", "qwen3-vl-cp-packing"),
    ("Qwen3-VL 上下文并行加序列打包报错", "main", "qwen3-vl-cp-packing"),
    ("I set both fp8 and fp4 for NVFP4 and the config fails", "0.6.0", "nvfp4-with-fp8"),
    ("Can I use NVFP4 together with FP8 for some layers?", "main", "nvfp4-with-fp8"),
    ("NVFP4 和 FP8 能同时开吗？", "0.5.1", "nvfp4-with-fp8"),
    ("MXFP8 pretraining on H100 fails", "0.6.0", "mxfp8-not-on-hopper"),
    ("Can I run the mxfp8 recipe on Hopper?", "0.3.1", "mxfp8-not-on-hopper"),
    ("在 H200 上用 MXFP8 训练报错", "main", "mxfp8-not-on-hopper"),
    (
        "overlap_moe_expert_parallel_comm=True raises an AssertionError with PP 4",
        "0.6.0",
        "ep-overlap-asserts",
    ),
    ("EP overlap fails on DeepSeek V3 with full recompute", "main", "ep-overlap-asserts"),
    ("开启专家并行通信重叠后报错", "0.5.1", "ep-overlap-asserts"),
    ("tp_comm_overlap=True has no effect on my run", "0.6.0", "tp-overlap-silently-off"),
    ("TP comm overlap is not enabled even though I set it, TP=1", "main", "tp-overlap-silently-off"),
    ("TP 通信重叠设置了但不生效", "0.5.1", "tp-overlap-silently-off"),
    (
        "I set moe_flex_dispatcher_backend=deepep but the run still uses alltoall",
        "0.6.0",
        "flex-backend-without-flex",
    ),
    ("moe_flex_dispatcher_backend=hybridep has no effect", "main", "flex-backend-without-flex"),
    ("设置了 moe_flex_dispatcher_backend 但不生效", "0.5.1", "flex-backend-without-flex"),
    (
        "Currently there is no support for Pipeline parallelism with CPU offloading",
        "0.6.0",
        "cpu-offload-pp-or-recompute",
    ),
    ("activation offloading with PP=2 fails at startup", "main", "cpu-offload-pp-or-recompute"),
    ("激活卸载加重计算一起开就报错", "0.5.1", "cpu-offload-pp-or-recompute"),
    (
        "Qwen3 30B-A3B smoke run crashes inside transformer_engine.pytorch.permutation",
        "0.6.0",
        "moe-permute-fusion-bringup",
    ),
    ("moe_permute_fusion=True fails with a Triton error", "main", "moe-permute-fusion-bringup"),
    ("开启 moe_permute_fusion 后报错", "0.5.1", "moe-permute-fusion-bringup"),
    (
        "Llama 3.1 405B MXFP8 on GB200: the grad norm turns NaN once "
        "overlap_param_gather_with_optimizer_step is on",
        "0.6.0",
        "mxfp8-param-gather-with-optimizer-step-nan",
    ),
    (
        "DeepSeek V3 in mxfp8 on B200 logs grad norm nan after a few hundred steps",
        "0.3.1",
        "mxfp8-param-gather-with-optimizer-step-nan",
    ),
    ("用 MXFP8 训练时 grad norm 变成 NaN，怎么办？", "0.5.1", "mxfp8-param-gather-with-optimizer-step-nan"),
    (
        "With reuse_grad_buf_for_mxfp8_param_ag the weights saved at the end of training are all zero",
        "0.3.1",
        "mxfp8-forced-param-sync-stale",
    ),
    (
        "MXFP8 run: Parameter hashes not matching across DP replicas in the weight hash check",
        "0.5.1",
        "mxfp8-forced-param-sync-stale",
    ),
    ("开启 reuse_grad_buf_for_mxfp8_param_ag 后权重被清零了", "main", "mxfp8-forced-param-sync-stale"),
    (
        "HybridEP crashes at init after I changed EP from 16 to 32 on B200",
        "0.6.0",
        "hybridep-topology-ep-mismatch",
    ),
    (
        "What should NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN be on GB200?",
        "0.5.1",
        "hybridep-topology-ep-mismatch",
    ),
    (
        "把 expert_model_parallel_size 改成 64 之后 hybridep 初始化报错",
        "main",
        "hybridep-topology-ep-mismatch",
    ),
    (
        "How do I merge my LoRA adapter into the base model after fine-tuning Qwen3 30B-A3B?",
        "0.3.1",
        "lora-merge-moe",
    ),
    ("Can the PEFT adapters be merged back for export?", "0.6.0", "lora-merge-moe"),
    ("LoRA 微调完怎么把 adapter 合并回原模型？", "0.5.1", "lora-merge-moe"),
    (
        "ValueError: Non-mock dataset not yet supported. Pass mock=True or omit for default.",
        "0.5.1",
        "vlm-pretrain-mock-only",
    ),
    ("How do I pretrain Qwen3-VL 8B on my own image-text data?", "0.6.0", "vlm-pretrain-mock-only"),
    ("用自己的图文数据预训练 Qwen3.5-VL 9B 应该用哪个 recipe？", "main", "vlm-pretrain-mock-only"),
]

DOC_ROWS_NO_SYMPTOM = [
    "How do I enable CUDA graphs for Llama 3 8B pretraining on 8 H100?",
    "Which cuda_graph_scope should I use for Qwen3 30B-A3B?",
    "Can I use CUDA graphs with packed sequences?",
    "Fine-tune Llama 3 8B with packed sequences on 8 H100",
    "Pretrain Llama 3 70B with full recompute on 64 H100",
    "Qwen3 30B-A3B OOM on 8 H100 with TP 1",
    "Qwen3-VL 8B SFT on 8 H100",
    "Pretrain Qwen3 8B with CP 2 and packed sequences",
    "Pretrain Llama 3.1 405B in FP8 on 256 B200",
    "Is NVFP4 faster than FP8 on B200?",
    "MXFP8 pretraining of Llama 3 70B on 64 B200",
    "How do I turn on TP comm overlap for Llama 3 70B?",
    "How do I enable EP overlap for DeepSeek V3?",
    "What does moe_flex_dispatcher_backend do?",
    "Train with activation offloading on 8 H100",
    "What does use_te_rng_tracker do?",
    "What does moe_permute_fusion do?",
    "Use activation offloading with PP 1 for Llama 3 70B",
    "如何为 Llama 3 8B 开启 CUDA 图？",
    "Qwen3-VL 的上下文并行怎么设置？",
    "Pretrain Llama 3 70B in MXFP8 with overlap_param_gather on 64 B200",
    "What does reuse_grad_buf_for_mxfp8_param_ag do?",
    "How do I use HybridEP for Qwen3 235B on GB200 with EP 32?",
    "LoRA fine-tune Qwen3 30B-A3B on 8 H100",
    "Pretrain Qwen3-VL 8B on 8 H100",
    "SFT Qwen3-VL 8B on my own image-text data",
]


@pytest.mark.parametrize(("question", "version", "expected"), DOC_ROWS_SYMPTOMS)
def test_documented_failure_modes_get_their_cause(question, version, expected):
    assert _ids(question, version)[:1] == [expected]


@pytest.mark.parametrize("question", DOC_ROWS_NO_SYMPTOM)
@pytest.mark.parametrize("version", ["0.3.1", "0.6.0"])
def test_documented_features_without_a_symptom_get_no_cause(question, version):
    assert _ids(question, version) == []


def test_documented_rows_follow_their_release():
    # the CUDA graph guide (docs/training/cuda-graphs.md) is not in 0.3.1; the assertions in its source are
    assert _ids("CUDA graphs go out of memory", "0.3.1") == []
    assert _ids("CUDA graphs go out of memory", "0.5.1") == ["cuda-graph-oom"]
    rng = "Transformer engine's RNG tracker is required for cudagraphs"
    assert "gpt_provider.py:215 (v0.3.1)" in known_cause_lines(rng, "0.3.1", "en", CAUSES)
    old = known_cause_lines("MXFP8 on H100 fails", "0.3.1", "en", CAUSES)
    new = known_cause_lines("MXFP8 on H100 fails", "0.6.0", "en", CAUSES)
    assert "`fp8_recipe`" not in old and "`fp8_recipe`" in new
    # every bundled release has the Qwen3-VL CP + packing fix, so it is what the release has, not a later fix
    zh = known_cause_lines("Qwen3-VL 上下文并行加序列打包报错", "0.6.0", "zh", CAUSES)
    assert zh.startswith("**Megatron-Bridge 0.6.0 提供的内容**") and "r0.3.1" in zh


def test_the_fact_follows_the_release():
    question = "NVFP4 run of llama31_405b on 256 GB200 runs out of memory"
    assert _ids(question, "0.3.1") == []  # no fact for a release without the workaround in its configs
    old = known_cause_lines(question, "0.5.1", "en", CAUSES)
    new = known_cause_lines(question, "0.6.0", "en", CAUSES)
    assert "--config_variant v2" in old and "llama31_405b_pretrain_256gpu_gb200_nvfp4_config" not in old
    assert "llama31_405b_pretrain_256gpu_gb200_nvfp4_config" in new and "config_variant" not in new
    assert "overlap_param_gather=False" in old and "align_param_gather=False" in new
    export = "Can the HF export run from the Megatron checkpoint alone, without --hf-model weights?"
    fixed = known_cause_lines(export, "0.3.1", "en", CAUSES)
    assert (
        fixed.startswith("**Fixed in a later release**") and "0.5.1" in fixed and "from_auto_config" in fixed
    )
    # a release that already has the fix says what it has, not "fixed in a later release"
    assert known_cause_lines(export, "0.6.0", "en", CAUSES).startswith("**What Megatron-Bridge 0.6.0 has**")
    mlm = "Export a Megatron-LM trained checkpoint to Hugging Face: Could not find run_config.yaml"
    assert _ids(mlm, "0.3.1") == ["mlm-checkpoint-no-run-config"]  # not the Bridge-checkpoint export fix
    assert "best-effort" in known_cause_lines(mlm, "0.5.1", "en", CAUSES)
    assert "translate_mlm_to_bridge.py" in known_cause_lines(mlm, "main", "en", CAUSES)
    assert _ids("Moonlight 16B got slower with TP 2", "0.3.1") == []  # listed from the 26.06 notes on
    # the MXFP8 forced param sync: a later fix before 0.6.0, what the release has from 0.6.0
    stale = "MXFP8 with reuse_grad_buf_for_mxfp8_param_ag: weights look stale after the weight hash check"
    assert known_cause_lines(stale, "0.5.1", "en", CAUSES).startswith("**Fixed in a later release**")
    assert "evaluation only" in known_cause_lines(stale, "0.5.1", "en", CAUSES)
    assert known_cause_lines(stale, "0.6.0", "en", CAUSES).startswith("**What Megatron-Bridge 0.6.0 has**")
    # HybridEP: only 0.6.0 on names the Hydra-override gap (PR #6062 is after it)
    hybrid = "HybridEP fails at init: NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN is 32 but EP is 64"
    assert "model.expert_model_parallel_size=" in known_cause_lines(hybrid, "0.6.0", "en", CAUSES)
    assert "model.expert_model_parallel_size=" not in known_cause_lines(hybrid, "0.5.1", "en", CAUSES)
    # an init failure after an EP change is the topology, not a missing package (初始化 is not 模型初始化)
    assert _ids("把 EP 从 32 改成 64 之后 HybridEP 初始化失败", "0.6.0") == ["hybridep-topology-ep-mismatch"]


def test_lines_name_the_release_and_cite_the_source_in_the_answer_language():
    question = "检查点保存很慢，每次 8 分钟，如何加速？"
    zh = known_cause_lines(question, "0.5.1", "zh", CAUSES)
    assert zh.startswith("**已知原因**（Megatron-Bridge 0.5.1）：")
    assert "`checkpoint.storage_writers_per_rank`" in zh and "来源：" in zh and "config.py:622 (v0.5.1)" in zh
    en = known_cause_lines("checkpoint saves are slow, 8 minutes", "0.3.1", "en", CAUSES)
    assert "ckpt_assume_constant_structure=True" in en and "config.py:844, :855 (v0.3.1)" in en


@pytest.mark.integration
def test_the_answer_leads_with_the_cause(settings):
    answer = ask(
        "On 16 H100 with Qwen3 30B A3B both DeepEP and HybridEP fail at model construction; only alltoall "
        "runs. Is DeepEP slower on H100?",
        version="0.5.1",
        settings=settings,
    )
    assert answer.answer_markdown.startswith("**Known cause** (Megatron-Bridge 0.5.1)")
    assert "DeepEP is not installed" in answer.answer_markdown
    data = ask(
        "Megatron-Bridge 有没有内置的数据准备流程，把原始对话数据转成 SFT 能读的格式？",
        version="0.5.1",
        settings=settings,
    )
    assert "`.bin/.idx`" in data.answer_markdown and "JSONL" in data.answer_markdown
    assert data.answer_markdown.startswith("**Megatron-Bridge 0.5.1 提供的内容**")


# The performance launcher's CUDA graph flags (scripts/performance/run_script.py) and weighted blends of
# packed SFT data: the symptom with the feature, in the users' words, gets the row and the release's fact.
LAUNCHER_AND_BLEND = [
    (
        "scripts/performance/run_script.py --cuda_graph_impl transformer_engine without --cuda_graph_scope: "
        "TypeError: 'NoneType' object is not iterable in _set_cuda_graph_overrides",
        "0.3.1",
        "perf-cuda-graph-scope-omitted",
        "fixed_later",
    ),
    (
        "性能脚本只加 --cuda_graph_impl transformer_engine 时 _set_cuda_graph_overrides 报 NoneType 不可迭代",
        "0.6.0",
        "perf-cuda-graph-scope-omitted",
        "cause",
    ),
    (
        "run_script.py: error: argument --cuda_graph_impl: "
        "invalid is_cuda_graph_impl_valid value: 'full_iteration'",
        "0.6.0",
        "perf-cuda-graph-impl-full-iteration",
        "cause",
    ),
    (
        "Can the performance run_script take --cuda_graph_impl full_iteration?",
        "0.5.1",
        "perf-cuda-graph-impl-full-iteration",
        "cause",
    ),
    (
        "Can I blend three packed Parquet SFT datasets with weights in one finetune?",
        "0.6.0",
        "packed-sft-blend",
        "capability",
    ),
    ("多个打包好的微调数据集能按权重混合吗？", "main", "packed-sft-blend", "capability"),
    (
        "Can I use MXFP8 with fp8_param_gather on Megatron-FSDP (use_megatron_fsdp=True) on B200?",
        "0.3.1",
        "mxfp8-megatron-fsdp",
        "capability",
    ),
    ("MXFP8 能和 Megatron-FSDP 一起用吗？", "0.6.0", "mxfp8-megatron-fsdp", "capability"),
]


@pytest.mark.parametrize(("question", "version", "expected", "kind"), LAUNCHER_AND_BLEND)
def test_launcher_and_blend_rows_match_with_their_release_fact(question, version, expected, kind):
    found = matching(question, version, CAUSES)
    assert [c.id for c, _ in found][:1] == [expected]
    cause, fact = found[0]
    assert (fact.kind or cause.kind) == kind


def test_the_scope_bug_is_fixed_later_only_in_0_3_1_and_the_blend_fact_names_the_hf_path_only_on_main():
    text = "--cuda_graph_impl transformer_engine: _set_cuda_graph_overrides NoneType not iterable"
    assert "0.5.1 and later" in known_cause_lines(text, "0.3.1", "en", CAUSES)
    assert "older than this release" in known_cause_lines(text, "0.6.0", "en", CAUSES)
    blend = "Blend my packed SFT datasets with weights?"
    assert "`source_weights`" in known_cause_lines(blend, "main", "en", CAUSES)
    assert "`source_weights`" not in known_cause_lines(blend, "0.6.0", "en", CAUSES)


@pytest.mark.parametrize(
    "question",
    [
        "How do I turn on CUDA graphs with run_script.py for Llama 3 70B?",
        "Pack my SFT dataset for Qwen3 8B",
        "Blend two pretraining corpora with weights 0.7 and 0.3",
        "model.cuda_graph_impl=full_iteration with full recompute on 0.6.0",
        "Pretrain Llama 3.1 70B in MXFP8 on 64 B200",
    ],
)
def test_launcher_and_blend_rows_stay_out_of_plain_questions(question):
    ids = _ids(question, "0.6.0")
    rows = {"perf-cuda-graph-scope-omitted", "perf-cuda-graph-impl-full-iteration", "packed-sft-blend"}
    rows.add("mxfp8-megatron-fsdp")
    assert not rows & set(ids)


# Rows of batch hreal3: a MoE CUDA graph capture that fails on dynamic shapes (Megatron-LM issue 1598) and
# the Step-3.5 private layer-spec fix (Megatron-Bridge issue 6012), in other wordings than the eval rows.
HREAL3_SYMPTOMS = [
    ("CUDA graph capture fails for DeepSeek V3 because the dispatcher does a device-to-host copy", "0.6.0",
     "cuda-graph-moe-dynamic-shapes"),
    ("Our MoE run breaks the graph capture with cuda_graph_impl=transformer_engine and scope moe", "0.5.1",
     "cuda-graph-moe-dynamic-shapes"),
    ("Qwen3 235B-A22B 开 CUDA graph 时捕获失败，专家层是动态形状吗？", "0.6.0",
     "cuda-graph-moe-dynamic-shapes"),
    ("Loading my converted Step 3.5 checkpoint raises InstantiationException on 0.5.1", "0.5.1",
     "step35-private-layer-spec"),
    ("private target path segments are not supported: ['_build_step35_layer_spec']", "0.5.1",
     "step35-private-layer-spec"),
    ("Step-3.5 Flash 转换后的检查点加载报错，是已知问题吗？", "0.6.0", "step35-private-layer-spec"),
]


@pytest.mark.parametrize(("question", "version", "expected"), HREAL3_SYMPTOMS)
def test_hreal3_symptoms_get_their_cause(question, version, expected):
    assert expected in _ids(question, version)


@pytest.mark.parametrize(
    "question",
    [
        "How do I turn on CUDA graphs for Qwen3 30B-A3B?",
        "Which cuda_graph_scope should I use for a MoE model?",
        "Convert Step-3.5 Flash from Hugging Face to Megatron",
        "Pretrain step35_196b_a11b on 128 H100",
        "CUDA graph capture fails for Llama 3 8B with packed sequences",
    ],
)
def test_hreal3_rows_stay_out_of_questions_without_their_symptom(question):
    assert not {"cuda-graph-moe-dynamic-shapes", "step35-private-layer-spec"} & set(_ids(question, "0.6.0"))


def test_the_step35_fix_is_later_on_0_5_1_and_present_from_0_6_0():
    row = next(c for c in CAUSES if c.id == "step35-private-layer-spec")
    early, late = row.fact("0.5.1"), row.fact("0.6.0")
    assert early is not None and (early.kind or row.kind) == "fixed_later" and "0.6.0" in early.en
    assert late is not None and late.kind == "capability" and row.fact("main") == late
    assert row.fact("0.3.1") is None  # no Step-3.5 bridge in 0.3.1


def test_a_chinese_fact_that_opens_with_a_latin_word_keeps_its_case():
    question = "Qwen3 30B-A3B 开 CUDA graph 时捕获失败，专家层是动态形状吗？"
    zh = known_cause_lines(question, "0.6.0", "zh", CAUSES)
    assert "：dropless 的 MoE 层" in zh
    en = known_cause_lines("CUDA graph capture fails for our MoE, dynamic shapes?", "0.6.0", "en", CAUSES)
    assert "): A dropless MoE layer" in en
