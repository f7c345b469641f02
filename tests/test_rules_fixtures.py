"""Shared builders for the rule tests: architectures, recipe records, launcher tables, argparse rebuild.

The hand-written launcher tables mirror run_recipe.py of each bundled version (read from the tags);
tests also run against the extracted catalogs in knowledge_base/catalogs when those exist.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from assistant.records import (
    BenchmarkLauncher,
    Catalog,
    DatasetPreset,
    LauncherFlag,
    LauncherSpec,
    ModelArch,
    Parallelism,
    RecipeRecord,
    SourceRef,
)

CATALOG_DIR = Path(__file__).resolve().parents[1] / "knowledge_base" / "catalogs"
VERSIONS = ("0.3.1", "0.5.1", "0.6.0", "main")

LLAMA3_8B = ModelArch(
    hf_model_id="meta-llama/Meta-Llama-3-8B",
    family="llama",
    num_layers=32,
    hidden_size=4096,
    ffn_hidden_size=14336,
    num_attention_heads=32,
    num_query_groups=8,
    vocab_size=128256,
    source="test",
)
LLAMA3_70B = ModelArch(
    hf_model_id="meta-llama/Meta-Llama-3-70B",
    family="llama",
    num_layers=80,
    hidden_size=8192,
    ffn_hidden_size=28672,
    num_attention_heads=64,
    num_query_groups=8,
    vocab_size=128256,
    source="test",
)
QWEN3_30B_A3B = ModelArch(
    hf_model_id="Qwen/Qwen3-30B-A3B",
    family="qwen3_moe",
    num_layers=48,
    hidden_size=2048,
    ffn_hidden_size=6144,
    num_attention_heads=32,
    num_query_groups=4,
    kv_channels=128,
    vocab_size=151936,
    num_moe_experts=128,
    moe_router_topk=8,
    moe_ffn_hidden_size=768,
    source="test",
)
DEEPSEEK_LIKE = ModelArch(
    hf_model_id="deepseek-ai/DeepSeek-V3",
    family="deepseek",
    num_layers=61,
    hidden_size=7168,
    ffn_hidden_size=18432,
    num_attention_heads=128,
    vocab_size=129280,
    num_moe_experts=256,
    moe_router_topk=8,
    moe_ffn_hidden_size=2048,
    moe_shared_expert_intermediate_size=2048,
    moe_first_k_dense=3,
    multi_latent_attention=True,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_head_dim=128,
    qk_pos_emb_head_dim=64,
    v_head_dim=128,
    source="test",
)
QWEN35_VL_MOE = ModelArch(
    hf_model_id="Qwen/Qwen3.5-VL-35B-A3B",
    family="qwen35_vl",
    num_layers=40,
    hidden_size=2048,
    ffn_hidden_size=6144,
    num_attention_heads=16,
    num_query_groups=2,
    kv_channels=256,
    num_moe_experts=256,
    moe_router_topk=8,
    moe_ffn_hidden_size=512,
    is_vlm=True,
    source="test",
)


def make_record(
    name: str = "llama3_8b_pretrain_config",
    *,
    version: str = "0.6.0",
    mode: str | None = "pretrain",
    family: str = "llama",
    hf_model_id: str | None = "meta-llama/Meta-Llama-3-8B",
    kind: str = "library",
    tp: int | None = 1,
    pp: int | None = 1,
    vp: int | None = None,
    cp: int | None = 1,
    ep: int | None = None,
    etp: int | None = None,
    sp: bool | None = None,
    seq: int | None = 8192,
    gbs: int | None = 512,
    mbs: int | None = 1,
    encoded_gpus: int | None = None,
    **extra: Any,
) -> RecipeRecord:
    return RecipeRecord(
        name=name,
        canonical=name,
        version=version,
        kind=kind,
        family=family,
        mode=mode,
        hf_model_id=hf_model_id,
        parallelism=Parallelism(tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, etp=etp, sp=sp),
        seq_length=seq,
        global_batch_size=gbs,
        micro_batch_size=mbs,
        encoded_gpus=encoded_gpus,
        source=SourceRef(path="src/megatron/bridge/recipes/x.py", line=1),
        **extra,
    )


def _f(*names: str, **kwargs: Any) -> LauncherFlag:
    return LauncherFlag(names=list(names), **kwargs)


_PRESETS_06 = {
    "mock": ["pretrain"],
    "megatron-indexed": ["pretrain"],
    "squad": ["sft", "lora", "dora"],
    "tulu3": ["sft", "lora", "dora"],
    "openmathinstruct2": ["sft", "lora", "dora"],
    "openmathinstruct2-thinking": ["sft", "lora", "dora"],
    "gsm8k": ["sft", "lora", "dora"],
    "local-jsonl": ["sft", "lora", "dora"],
    "local-vlm": ["sft", "lora", "dora"],
    "cord-v2": ["sft", "lora", "dora"],
    "llava-video-178k": ["sft", "lora", "dora"],
    "medpix": ["sft", "lora", "dora"],
    "raven": ["sft", "lora", "dora"],
    "rdr": ["sft", "lora", "dora"],
}
_PRESETS_05 = {
    "llm-pretrain": ["pretrain"],
    "llm-pretrain-mock": ["pretrain"],
    "llm-finetune": ["sft", "peft"],
    "llm-finetune-preloaded": ["sft", "peft"],
    "vlm-energon": ["sft", "peft"],
    "vlm-hf": ["sft", "peft"],
    "vlm-preloaded": ["sft", "peft"],
}
_BENCH = BenchmarkLauncher(
    script="scripts/performance/setup_experiment.py",
    flags=[
        _f("-m", "--model_family_name", type="str"),
        _f("-mr", "--model_recipe_name", type="str"),
        _f("--task", choices=["pretrain", "sft", "lora"]),
        _f("-g", "--gpu", type="str"),
        _f("-ng", "--num_gpus", type="int"),
        _f("-gn", "--gpus_per_node", type="int"),
        _f("-a", "--account", type="str"),
        _f("-p", "--partition", type="str"),
        _f("-i", "--container_image", type="str"),
        _f("-c", "--compute_dtype", type="str"),
    ],
)
_STEPS = ["gpt_step", "llava_step", "vlm_step"]
HAND_LAUNCHERS: dict[str, LauncherSpec] = {
    "0.3.1": LauncherSpec(
        script="scripts/training/run_recipe.py",
        flags=[
            _f("--mode", type="str", choices=["finetune", "pretrain"]),
            _f("--recipe", type="str", required=True),
            _f("--step_func", type="str", default="gpt_step", choices=_STEPS),
            _f("--peft_scheme", type="str"),
            _f("--packed_sequence", action="store_true", default=False),
            _f("--seq_length", type="int"),
        ],
        modes=["finetune", "pretrain"],
        benchmark=_BENCH,
    ),
    "0.5.1": LauncherSpec(
        script="scripts/training/run_recipe.py",
        flags=[
            _f("--recipe", type="str", required=True),
            _f("--dataset", type="str", choices=list(_PRESETS_05)),
            _f("--step_func", type="str", default="gpt_step", choices=_STEPS),
            _f("--peft_scheme", type="str"),
            _f("--packed_sequence", action="store_true", default=False),
            _f("--seq_length", type="int"),
            _f("--hf_path", type="str"),
        ],
        dataset_presets=[DatasetPreset(name=n, modes=m) for n, m in _PRESETS_05.items()],
        benchmark=_BENCH,
    ),
    "0.6.0": LauncherSpec(
        script="scripts/training/run_recipe.py",
        flags=[
            _f("--model", mutually_exclusive="g1", group_required=True),
            _f("--recipe", mutually_exclusive="g1", group_required=True),
            _f("--mode", choices=["pretrain", "sft", "lora", "dora"]),
            _f("--step-func", "--step_func", dest="step_func"),
            _f("--dataset", choices=sorted(_PRESETS_06)),
            _f("-ms", "--max_steps", type="int"),
            _f("-gb", "--global_batch_size", type="int"),
            _f("-mb", "--micro_batch_size", type="int"),
            _f("-sl", "--seq_length", type="int"),
            _f("-tp", "--tensor_model_parallel_size", type="int"),
            _f("--pretrained_checkpoint"),
            _f("--dry-run", "--dry_run", action="store_true", dest="dryrun"),
        ],
        modes=["pretrain", "sft", "lora", "dora"],
        dataset_presets=[DatasetPreset(name=n, modes=m) for n, m in _PRESETS_06.items()],
        benchmark=_BENCH,
    ),
}
HAND_LAUNCHERS["main"] = HAND_LAUNCHERS["0.6.0"]


def catalog_launcher(version: str) -> LauncherSpec | None:
    """The extracted launcher of a bundled version, or None while the catalog file is absent."""
    path = CATALOG_DIR / f"{version}.json"
    if not path.exists():
        return None
    return Catalog.model_validate(json.loads(path.read_text(encoding="utf-8"))).launcher


_TYPES = {"int": int, "float": float, "str": str, None: None}


def parser_from_flags(flags: list[LauncherFlag]) -> argparse.ArgumentParser:
    """Rebuild run_recipe.py's argparse parser from an extracted flag table."""
    parser = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    groups: dict[str, Any] = {}
    for flag in flags:
        target: Any = parser
        if flag.mutually_exclusive:
            if flag.mutually_exclusive not in groups:
                groups[flag.mutually_exclusive] = parser.add_mutually_exclusive_group(
                    required=flag.group_required
                )
            target = groups[flag.mutually_exclusive]
        kwargs: dict[str, Any] = {}
        if flag.dest and flag.names and flag.names[0].startswith("-"):
            kwargs["dest"] = flag.dest
        if flag.action in ("store_true", "store_false", "count"):
            kwargs["action"] = flag.action
        else:
            if flag.action == "append":
                kwargs["action"] = "append"
            if flag.choices is not None:
                kwargs["choices"] = flag.choices
            if flag.nargs is not None:
                kwargs["nargs"] = flag.nargs
            if _TYPES.get(flag.type) is not None:
                kwargs["type"] = _TYPES[flag.type]
        if flag.required and not flag.mutually_exclusive:
            kwargs["required"] = True
        target.add_argument(*flag.names, **kwargs)
    return parser
