"""The extractor on small fixture trees that mimic each upstream layout (tests/fixtures/recipe_trees/)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ingest.recipes.extract import extract
from ingest.recipes.launcher import read_launcher
from ingest.recipes.names import decode_name
from ingest.recipes.sources import open_source

TREES = Path(__file__).parent / "fixtures" / "recipe_trees"


def _records(tree: str, version: str = "0.6.0") -> dict[tuple[str, str], object]:
    extraction = extract(open_source(TREES / tree), version)
    return {(r.kind, r.name): r for r in extraction.records}


@pytest.fixture(scope="module")
def v02():
    return _records("v02_kwargs", "0.2.0")


@pytest.fixture(scope="module")
def v05():
    return _records("v05_flat", "0.5.1")


@pytest.fixture(scope="module")
def v06():
    return _records("v06_hw", "0.6.0")


# ---------------------------------------------------------------- v0.2 kwargs layout


def test_v02_kwargs_merged_into_helper_defaults(v02) -> None:
    record = v02[("library", "llama3_8b_pretrain_config")]
    par = record.parallelism
    assert (par.tp, par.pp, par.cp) == (1, 1, 2)  # recommended kwargs
    assert record.seq_length == 16384  # module constant, passed as GPTDatasetConfig(sequence_length=...)
    assert (record.global_batch_size, record.micro_batch_size) == (512, 1)  # helper parameter defaults
    assert record.hf_model_id == "meta-llama/Meta-Llama-3-8B"
    assert record.min_gpus == 2
    assert not record.reachable  # v0.2 exports nothing at the top level


def test_v02_finetune_branches_and_last_write(v02) -> None:
    record = v02[("library", "llama3_8b_finetune_config")]
    # peft popped with default "lora" -> not full SFT -> TP1, GBS 32; SP written three times, last is TP>1
    assert record.parallelism.tp == 1 and record.global_batch_size == 32
    assert record.parallelism.sp is False
    assert (record.mode, record.peft) == ("peft", "lora")


def test_v02_provider_class_value_with_inherited_defaults(v02) -> None:
    record = v02[("library", "mamba2_130m_pretrain_config")]
    assert record.fields["model._target_"] == "MambaModelProvider130M"
    assert record.fields["model.num_layers"] == 24  # subclass default
    assert record.fields["model.micro_batch_size_hint"] == 1  # inherited from the base class
    assert record.global_batch_size == 256 and record.parallelism.tp == 1
    assert record.hf_model_id is None


def test_v02_perf_presets_use_the_first_naming(v02) -> None:
    """v0.2.0 named its presets <MODEL>_<GPU>[_<TASK>]_<PREC>_BASE_CONFIG in configs/<family>/
    workload_base_configs.py, the module its launcher imports by name."""
    fsdp = v02[("benchmark", "llama3_70b_gb200_fp8_cs_base_config")]
    assert (fsdp.mode, fsdp.gpu_type, fsdp.precision, fsdp.encoded_gpus) == ("pretrain", "gb200", "fp8cs", 64)
    assert fsdp.reachable and fsdp.micro_batch_size == 2 and fsdp.fields["cpu_offloading_num_layers"] == 40
    sft = v02[("benchmark", "llama3_70b_h100_sft_bf16_base_config")]
    assert (sft.mode, sft.gpu_type, sft.precision, sft.canonical) == (
        "sft", "h100", "bf16", "llama3_70b_h100_sft_base_config",
    )  # fmt: skip
    assert (sft.parallelism.tp, sft.parallelism.pp, sft.parallelism.vp, sft.parallelism.sp) == (4, 4, 5, True)
    assert not any(name.startswith("base_") for _, name in v02)  # the shared base is not a preset


def test_v02_perf_launcher_note_names_its_lookup() -> None:
    spec, warnings = read_launcher(open_source(TREES / "v02_kwargs"))
    assert not warnings and spec.benchmark is not None
    assert "_<compute_dtype>_BASE_CONFIG" in spec.benchmark.notes
    assert "configs/<model_name>/workload_base_configs.py" in spec.benchmark.notes
    assert any("--model_size" in flag.names for flag in spec.benchmark.flags)


# ---------------------------------------------------------------- v0.5 flat layout + old perf configs


def test_v05_flat_common_defaults_and_conditions(v05) -> None:
    record = v05[("library", "qwen3_30b_a3b_pretrain_config")]
    par = record.parallelism
    assert (par.tp, par.pp, par.ep, par.etp, par.sp) == (4, 2, 4, 1, True)
    assert (record.global_batch_size, record.micro_batch_size, record.seq_length) == (32, 2, 4096)
    assert record.recompute == "full"
    # the CP>1 test ran against the provider default (1), so its write did not happen
    assert "dataset.pad_to_multiple" not in record.fields and "dataset.pad_to_multiple" not in record.unknown
    # a test on an HF-derived value is not guessed
    assert "depends on" in record.unknown["dist.enable_megatron_core_experimental"]
    # table-driven layout helper keyed by (pp, vp) with a loop
    assert record.fields["model.pipeline_model_parallel_layout"][0][0] == "embedding"
    assert record.min_gpus == 2 * max(4, 4 * 1)  # PP * max(TP*CP, EP*ETP) with ETP set to 1
    assert record.unknown.get("checkpoint_dir", "").startswith("result of")


def test_v05_wrapper_override_wins(v05) -> None:
    base = v05[("library", "qwen3_30b_a3b_pretrain_config")]
    wrapped = v05[("library", "qwen3_30b_a3b_pretrain_deterministic_config")]
    assert base.global_batch_size == 32 and wrapped.global_batch_size == 64
    assert wrapped.fields["model.deterministic_mode"] is True
    assert "set_qwen3_layout" not in {name for _, name in v05}


def test_v05_provider_constructor_kwargs(v05) -> None:
    record = v05[("library", "nemotron_3_nano_pretrain_config")]
    assert (record.parallelism.tp, record.parallelism.ep, record.parallelism.sp) == (4, 8, True)
    assert record.fields["model.pipeline_dtype"] == "torch.bfloat16"
    assert record.global_batch_size == 3072  # 3_072
    assert record.model_seq_length == 8192


def test_v05_peft_template(v05) -> None:
    record = v05[("library", "qwen3_30b_a3b_peft_config")]
    assert (record.mode, record.peft, record.global_batch_size) == ("peft", "lora", 128)
    assert record.fields["peft.dim"] == 32


def test_old_perf_workload_configs(v05) -> None:
    h100 = v05[("benchmark", "qwen3_30b_a3b_pretrain_config_h100_bf16_v1")]
    assert (h100.parallelism.tp, h100.parallelism.pp, h100.parallelism.ep) == (2, 2, 8)
    assert h100.parallelism.sp is True  # the WorkloadBaseConfig property TP > 1
    assert (h100.encoded_gpus, h100.gpu_type, h100.precision, h100.gpu_variant) == (16, "h100", "bf16", "v1")
    assert (h100.global_batch_size, h100.micro_batch_size) == (512, 1)
    alias = v05[("benchmark", "qwen3_30b_a3b_pretrain_config_gb200_fp8_mx_v1")]
    assert alias.canonical == "qwen3_30b_a3b_pretrain_config_gb200_bf16_v1"
    assert alias.precision == "fp8mx" and alias.micro_batch_size == 4
    assert alias.cuda_graph is not None and alias.cuda_graph.impl == "transformer_engine"
    canonical = v05[("benchmark", "qwen3_30b_a3b_pretrain_config_gb200_bf16_v1")]
    assert canonical.aliases == ["qwen3_30b_a3b_pretrain_config_gb200_fp8_mx_v1"]
    hidden = v05[("benchmark", "qwen3_30b_a3b_pretrain_config_b200")]
    assert not hidden.reachable and hidden.precision is None


def test_old_perf_launcher_not_present_in_fixture() -> None:
    spec, _ = read_launcher(open_source(TREES / "v05_flat"))
    assert spec.script is None


# ---------------------------------------------------------------- v0.6 hardware names, aliases, perf_recipes


def test_v06_alias_resolves_to_canonical(v06) -> None:
    alias = v06[("library", "llama3_8b_pretrain_config")]
    assert alias.canonical == "llama3_8b_pretrain_2gpu_h100_bf16_config"
    assert (alias.encoded_gpus, alias.gpu_type, alias.precision) == (2, "h100", "bf16")
    canonical = v06[("library", "llama3_8b_pretrain_2gpu_h100_bf16_config")]
    assert canonical.aliases == ["llama3_8b_pretrain_config"]
    assert alias.fields == canonical.fields


def test_v06_fields_hold_every_write(v06) -> None:
    fields = v06[("library", "llama3_8b_pretrain_2gpu_h100_bf16_config")].fields
    assert fields["model.use_te_rng_tracker"] is True
    assert fields["ddp.overlap_grad_reduce"] is False
    assert fields["model.cuda_graph_impl"] == "transformer_engine"
    assert fields["dataset.seq_length"] == 8192
    assert fields["train.global_batch_size"] == 512
    assert fields["env_vars"] == {"CUDA_DEVICE_MAX_CONNECTIONS": 1, "NCCL_NVLS_ENABLE": 0}


def test_v06_assignment_alias_and_wrapper(v06) -> None:
    record = v06[("library", "llama3_8b_128k_pretrain_config")]
    assert record.canonical == "llama3_8b_pretrain_64gpu_h100_bf16_128k_config"
    par = record.parallelism
    assert (par.tp, par.pp, par.cp, record.min_gpus, record.encoded_gpus) == (4, 2, 8, 64, 64)
    assert record.seq_length == 131072 and record.gpu_variant == "128k"
    # the wrapped recipe's writes survive where not overridden
    assert record.cuda_graph is not None and record.cuda_graph.scope == ["attn", "mlp"]


def test_v06_redefined_alias_changes_meaning(v06) -> None:
    record = v06[("library", "qwen3_30b_a3b_pretrain_config")]
    par = record.parallelism
    assert (par.tp, par.pp, par.ep, record.recompute, record.global_batch_size) == (1, 1, 16, None, 1024)


def test_v06_library_and_benchmark_kept_apart(v06) -> None:
    library = v06[("library", "llama3_70b_peft_8gpu_h100_bf16_config")]
    bench = v06[("benchmark", "llama3_70b_peft_8gpu_h100_bf16_config")]
    assert (library.parallelism.tp, library.parallelism.pp) == (8, None)
    assert (bench.parallelism.tp, bench.parallelism.pp, bench.parallelism.vp) == (1, 4, 20)
    assert bench.fields["train.train_iters"] == 50  # _benchmark_common after the overrides
    perf = v06[("benchmark", "llama3_8b_pretrain_8gpu_h100_bf16_config")]
    assert perf.global_batch_size == 128 and perf.hf_model_id == "meta-llama/Meta-Llama-3-8B"


def test_etp_default_semantics_per_version() -> None:
    new = _records("v06_hw", "0.6.0")[("library", "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config")]
    old = _records("v06_hw", "0.5.1")[("library", "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config")]
    assert new.parallelism.etp is None
    assert new.min_gpus == 2 * max(4, 4 * 1)  # v0.6.0+: ETP=1 when EP>1
    assert old.min_gpus == 2 * max(4, 4 * 4)  # before: ETP=TP


def test_name_grammar_exceptions(v06) -> None:
    record = v06[("library", "qwen35_vl_35b_a3b_sft_long_context_32gpu_h100_bf16_config")]
    assert (record.mode, record.encoded_gpus, record.gpu_variant) == ("sft", 32, "long_context")
    assert record.hf_model_id == "Qwen/Qwen3.5-35B-A3B"  # HF id from a parameter default
    suffixed = decode_name("deepseek_v3_pretrain_config_32nodes")  # not an old perf name: no GPU in it
    assert (suffixed.task, suffixed.gpu_type) == ("pretrain", None)
    assert decode_name("llama3_70b_lora_config_h100").task == "lora"
    old = decode_name("deepseek_v3_pretrain_config_gb300_v1")
    assert (old.gpu_type, old.precision, old.variant) == ("gb300", None, "v1")
    first = decode_name("qwen3_235b_a22b_b200_fp8_mx_base_config")  # v0.2.0
    assert (first.task, first.gpu_type, first.precision) == ("pretrain", "b200", "fp8mx")
    assert decode_name("llama3_70b_gb200_lora_base_config").task == "lora"
    assert decode_name("deepseek_v3_b200_base_config").precision is None


def test_v06_launcher_flags_parse_and_presets() -> None:
    spec, warnings = read_launcher(open_source(TREES / "v06_hw"))
    assert spec.script == "scripts/training/run_recipe.py" and not warnings
    assert spec.modes == ["pretrain", "sft", "lora", "dora"]
    presets = {p.name: p.modes for p in spec.dataset_presets}
    assert presets == {
        "mock": ["pretrain"],
        "megatron-indexed": ["pretrain"],
        "squad": ["sft", "lora", "dora"],
    }
    parser = argparse.ArgumentParser()
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for flag in spec.flags:
        target = parser
        if flag.mutually_exclusive:
            if flag.mutually_exclusive not in groups:
                groups[flag.mutually_exclusive] = parser.add_mutually_exclusive_group(
                    required=flag.group_required
                )
            target = groups[flag.mutually_exclusive]
        kwargs = {
            k: v
            for k, v in (
                ("dest", flag.dest),
                ("action", flag.action),
                ("choices", flag.choices),
                ("type", {"int": int}.get(flag.type or "")),
            )
            if v is not None
        }
        target.add_argument(*flag.names, **kwargs)
    args = parser.parse_args(
        ["--recipe", "x_config", "--mode", "lora", "--dataset", "squad", "-tp", "2", "--dry_run"]
    )
    assert (args.recipe, args.tensor_model_parallel_size, args.dryrun) == ("x_config", 2, True)
    with pytest.raises(SystemExit):
        parser.parse_args(["--mode", "pretrain"])  # --model or --recipe is required
