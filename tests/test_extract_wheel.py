"""The extractor on the real megatron-bridge 0.3.1 wheel, checked against values read by hand.

Every expected number below was read from the wheel's source; the comment gives file:line
(paths relative to megatron/bridge/recipes/). Helper-default cases cite the helper's line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest.recipes.extract import extract
from ingest.recipes.sources import open_source

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "autorecipe-test"


@pytest.fixture(scope="session")
def wheel_path() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob("megatron_bridge-0.3.1-*.whl"))
    if not found:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "megatron-bridge==0.3.1",
                "-d",
                str(CACHE),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        found = sorted(CACHE.glob("megatron_bridge-0.3.1-*.whl"))
        if not found:
            pytest.skip(f"pip download of megatron-bridge==0.3.1 failed: {result.stderr.strip()[-300:]}")
    return found[0]


@pytest.fixture(scope="session")
def records(wheel_path: Path) -> dict[str, object]:
    extraction = extract(open_source(wheel_path), "0.3.1")
    return {r.name: r for r in extraction.records if r.kind == "library"}


# name: (hf_model_id, tp, pp, vp, cp, ep, etp, sp, seq_length, gbs, mbs, min_gpus, mode, peft)
# fmt: off
EXPECTED = {
    # llama/llama3.py:232 hf; :242-248 TP1 PP1 VP None CP2 SP False; :240 seq 8192; :252-253 GBS 512 MBS 1
    "llama3_8b_pretrain_config":
        ("meta-llama/Meta-Llama-3-8B", 1, 1, None, 2, None, None, False, 8192, 512, 1, 2, "pretrain", None),
    # llama/llama3.py:1110 hf; :1122-1128 TP8 PP8 VP2 CP4 SP; :1120 seq SEQUENCE_LENGTH_128K (:34 = 131072);
    # :1136-1137 GBS 512 MBS 1; min = 8 * 8 * 4
    "llama31_405b_pretrain_config":
        ("meta-llama/Meta-Llama-3.1-405B", 8, 8, 2, 4, None, None, True, 131072, 512, 1, 256, "pretrain",
         None),
    # llama/llama3.py:1640 hf_path local; :1647-1649 seq 4096; :1653 CP test sees the default 1, then
    # :1658-1663 TP8 PP4 CP1 SP False; :1672-1673 GBS 8 MBS 1
    "llama3_70b_sft_config":
        ("meta-llama/Meta-Llama-3-70B", 8, 4, None, 1, None, None, False, 4096, 8, 1, 32, "sft", None),
    # llama/llama3.py:1973 hf_path; :1986 default_peft_config("lora") -> LoRA (utils/finetune_utils.py:43-44);
    # :1995-2000 TP1 PP1 CP1; :1980-1982 seq 4096; :2009-2010 GBS 8 MBS 1
    "llama32_1b_peft_config":
        ("meta-llama/Llama-3.2-1B", 1, 1, None, 1, None, None, False, 4096, 8, 1, 1, "peft", "lora"),
    # qwen/qwen3_moe.py:34 hf; :44-52 TP4 PP2 CP1 EP4 ETP1 SP; GBS/MBS never set -> common.py:65-66 (32/2);
    # dataset seq never set -> common.py:90 (4096)
    "qwen3_30b_a3b_pretrain_config":
        ("Qwen/Qwen3-30B-A3B", 4, 2, None, 1, 4, 1, True, 4096, 32, 2, 8, "pretrain", None),
    # qwen/qwen3_moe.py:143 hf; :153-161 TP4 PP16 CP2 EP8 ETP1 SP; GBS from common.py:65; :176 MBS 1
    "qwen3_235b_a22b_pretrain_config":
        ("Qwen/Qwen3-235B-A22B", 4, 16, None, 2, 8, 1, True, 4096, 32, 1, 128, "pretrain", None),
    # qwen/qwen3_moe.py:265-273 TP4 PP2 CP1 EP4 ETP1 SP; :279 GBS 32; MBS common.py:178 (1);
    # dataset seq from _sft_common common.py:155 (2048)
    "qwen3_30b_a3b_sft_config":
        ("Qwen/Qwen3-30B-A3B", 4, 2, None, 1, 4, 1, True, 2048, 32, 1, 8, "sft", None),
    # deepseek/deepseek_v3.py:60 hf; :72-80 TP2 PP16 CP1 EP64 ETP1 SP; :111-112 GBS 4096 MBS 1
    "deepseek_v3_pretrain_config":
        ("deepseek-ai/DeepSeek-V3", 2, 16, None, 1, 64, 1, True, 4096, 4096, 1, 1024, "pretrain", None),
    # deepseek/deepseek_v3.py:222-230 TP2 PP8 EP32 ETP1; :261-262 GBS 4096 MBS 1 (suffix name, survey H10)
    "deepseek_v3_pretrain_config_32nodes":
        ("deepseek-ai/DeepSeek-V3", 2, 8, None, 1, 32, 1, True, 4096, 4096, 1, 256, "pretrain", None),
    # deepseek/deepseek_v2.py:32 hf; :44-51 TP1 PP1 CP1 EP8 (ETP unset: ETP=TP before v0.6); :62-63 GBS 512
    "deepseek_v2_lite_pretrain_config":
        ("deepseek-ai/DeepSeek-V2-Lite", 1, 1, None, 1, 8, None, False, 4096, 512, 1, 8, "pretrain", None),
    # gpt_oss/gpt_oss.py:33 hf; :46-54 TP2 PP4 CP1 EP4 ETP1 SP; :42 seq 4096; :72-73 GBS 512 MBS 1
    "gpt_oss_20b_pretrain_config":
        ("openai/gpt-oss-20b", 2, 4, None, 1, 4, 1, True, 4096, 512, 1, 16, "pretrain", None),
    # gpt_oss/gpt_oss.py:165-173 TP2 PP4 EP16 ETP1; :190-191 GBS 512 MBS 1
    "gpt_oss_120b_pretrain_config":
        ("openai/gpt-oss-120b", 2, 4, None, 1, 16, 1, True, 4096, 512, 1, 64, "pretrain", None),
    # gemma/gemma3.py: explicit provider class (no HF id); :54-60 TP1 PP1 CP1 SP False; :51 seq 32K; :69-70
    "gemma3_1b_pretrain_config":
        (None, 1, 1, None, 1, None, None, False, 32768, 512, 1, 1, "pretrain", None),
    # gemma/gemma2.py:36 hf; :47-53 TP2 PP1 CP1; GBS/MBS defaults common.py:65-66 (comment at :57 agrees)
    "gemma2_2b_pretrain_config":
        ("google/gemma-2-2b", 2, 1, None, 1, None, None, False, 4096, 32, 2, 2, "pretrain", None),
    # nemotronh/nemotron_3_nano.py:40-49 provider constructor kwargs TP4 PP1 CP1 SP ETP1 EP8; :56 seq; :71-72
    "nemotron_3_nano_pretrain_config":
        (None, 4, 1, None, 1, 8, 1, True, 8192, 3072, 2, 8, "pretrain", None),
    # nemotronh/nemotronh.py:43-48 constructor kwargs TP1 PP1 CP1 SP False; :61 seq 8192; :66-67 GBS 768 MBS 1
    "nemotronh_4b_pretrain_config":
        (None, 1, 1, None, 1, None, None, False, 8192, 768, 1, 1, "pretrain", None),
    # nemotronh/nemotron_nano_v2.py:41-46 TP2 PP1 SP; :59 seq 8192; :64-65 GBS 768 MBS 1
    "nemotron_nano_9b_v2_pretrain_config":
        (None, 2, 1, None, 1, None, None, True, 8192, 768, 1, 2, "pretrain", None),
    # moonlight/moonlight_16b.py:58 hf; :74-82 TP2 PP1 CP1 EP8 ETP1 SP; :95-96 GBS 2048 MBS 1
    "moonlight_16b_pretrain_config":
        ("moonshotai/Moonlight-16B-A3B", 2, 1, None, 1, 8, 1, True, 4096, 2048, 1, 8, "pretrain", None),
    # olmoe/olmoe_7b.py:57-64 OlMoEModelProvider kwargs TP1 PP1 CP1 EP8 SP False; :84 seq; :94-95 GBS 2048
    "olmoe_7b_pretrain_config":
        (None, 1, 1, None, 1, 8, None, False, 4096, 2048, 1, 8, "pretrain", None),
    # qwen/qwen2.py:39 hf; :52-58 TP1 PP1 CP1; GBS/MBS defaults common.py:65-66
    "qwen2_500m_pretrain_config":
        ("Qwen/Qwen2-0.5B", 1, 1, None, 1, None, None, False, 4096, 32, 2, 1, "pretrain", None),
    # glm/glm45.py:34 hf; :47-55 TP2 PP8 CP1 EP16 ETP1 SP; :43 seq; :73-74 GBS 2048 MBS 1
    "glm45_355b_pretrain_config":
        ("zai-org/GLM-4.5", 2, 8, None, 1, 16, 1, True, 4096, 2048, 1, 128, "pretrain", None),
    # llama/llama2.py:32 hf; :44-50 TP2 PP1 CP1; :55-56 GBS 512 MBS 1
    "llama2_7b_pretrain_config":
        ("meta-llama/Llama-2-7b-hf", 2, 1, None, 1, None, None, False, 4096, 512, 1, 2, "pretrain", None),
    # qwen/qwen3_next.py:36 hf; :49-57 TP1 PP4 CP1 EP8 ETP1; GBS/MBS defaults common.py:65-66
    "qwen3_next_80b_a3b_pretrain_config":
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", 1, 4, None, 1, 8, 1, False, 4096, 32, 2, 32, "pretrain", None),
    # kwargs layout: qwen_vl/qwen3_vl.py:113-116 hf TP4 PP1 EP1; helper defaults :294 CP1, :296 ETP1,
    # :304 GBS 32, :305 MBS 2, :306 seq 4096
    "qwen3_vl_8b_pretrain_config":
        ("Qwen/Qwen3-VL-8B-Instruct", 4, 1, None, 1, 1, 1, False, 4096, 32, 2, 4, "pretrain", None),
    # qwen_vl/qwen3_vl.py:177 peft defaults to None -> full SFT -> :182 TP4; :183 PP1; :185 EP1;
    # :194-195 MBS 1 GBS 32; seq from helper :306
    "qwen3_vl_8b_finetune_config":
        ("Qwen/Qwen3-VL-8B-Instruct", 4, 1, None, 1, 1, 1, False, 4096, 32, 1, 4, "sft", None),
    # qwen_vl/qwen3_vl.py:218-222 TP1 PP1 EP8; :231-232 MBS 1 GBS 32; ETP from helper :296
    "qwen3_vl_30b_a3b_finetune_config":
        ("Qwen/Qwen3-VL-30B-A3B-Instruct", 1, 1, None, 1, 8, 1, False, 4096, 32, 1, 8, "sft", None),
    # gemma3_vl/gemma3_vl.py:152 peft None -> :157-158 TP8 PP2; helper :184 CP1,
    # :189-191 GBS 32 MBS 2 seq 4096
    "gemma3_vl_27b_finetune_config":
        ("google/gemma-3-27b-it", 8, 2, None, 1, None, None, False, 4096, 32, 2, 16, "sft", None),
    # ministral3/ministral3.py:154 peft defaults to "lora" -> :159 TP2; :160 PP1; helper :185 CP1,
    # :190-192 GBS 32 MBS 1 seq 4096
    "ministral3_14b_finetune_config":
        ("mistralai/Ministral-3-14B-Instruct-2512", 2, 1, None, 1, None, None, False, 4096, 32, 1, 2, "peft",
         "lora"),
    # glm_vl/glm_45v.py:166 peft None -> :171-175 TP1 PP8 EP16 GBS 64; helper :201 CP1, :207 MBS 1,
    # :208 seq 8192; no ETP anywhere -> ETP=TP=1 before v0.6 -> min 8 * 16
    "glm_45v_finetune_config":
        ("zai-org/GLM-4.5V", 1, 8, None, 1, 16, None, False, 8192, 64, 1, 128, "sft", None),
}
# fmt: on


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recipe_matches_source(records, name: str) -> None:
    hf, tp, pp, vp, cp, ep, etp, sp, seq, gbs, mbs, min_gpus, mode, peft = EXPECTED[name]
    record = records[name]
    par = record.parallelism
    assert (record.hf_model_id, par.tp, par.pp, par.vp, par.cp, par.ep, par.etp, par.sp) == (
        hf,
        tp,
        pp,
        vp,
        cp,
        ep,
        etp,
        sp,
    )
    assert (record.seq_length, record.global_batch_size, record.micro_batch_size) == (seq, gbs, mbs)
    assert record.min_gpus == min_gpus
    assert (record.mode, record.peft) == (mode, peft)
    assert record.source.path.startswith("megatron/bridge/recipes/")
    assert record.kind == "library" and record.canonical == name


def test_families_covered() -> None:
    families = {name.split("_")[0] for name in EXPECTED}
    assert len(EXPECTED) >= 25 and len(families) >= 10


def test_reachability_of_0_3_1(records) -> None:
    reachable = [r for r in records.values() if r.reachable]
    assert len(reachable) == 153  # survey §1: names reachable as megatron.bridge.recipes.<name>
    # nemotron_vl has an __all__ but the top-level package does not star-import it (survey H7)
    assert not records["nemotron_nano_v2_vl_12b_pretrain_config"].reachable
    # kimi/ has no __init__.py in 0.3.1: the function is a record the launcher cannot reach
    kimi = records["kimi_k2_pretrain_config"]
    assert not kimi.reachable and "not exported by megatron.bridge.recipes" in (kimi.unreachable_reason or "")


def test_source_lines_point_at_the_def(records) -> None:
    assert records["llama3_8b_pretrain_config"].source.model_dump() == {
        "path": "megatron/bridge/recipes/llama/llama3.py",
        "line": 225,
    }
    assert records["qwen3_30b_a3b_pretrain_config"].source.line == 26  # qwen/qwen3_moe.py:26
    assert records["qwen3_vl_8b_finetune_config"].source.line == 167  # qwen_vl/qwen3_vl.py:167


def test_field_details(records) -> None:
    sft = records["llama3_70b_sft_config"]
    # llama/llama3.py:1650 packed size = seq; :1653 the CP>1 branch is skipped, so pad_seq_to_mult keeps
    # its default
    assert sft.fields["dataset.packed_sequence_specs.packed_sequence_size"] == 4096
    assert sft.packed_sequence is True
    assert "dataset.packed_sequence_specs.pad_seq_to_mult" not in sft.unknown
    peft = records["llama32_1b_peft_config"]
    assert peft.fields["peft._target_"] == "LoRA"
    # a required parameter stays unknown instead of being guessed (llama/llama3.py:549, survey H16)
    low = records["llama3_8b_low_precision_pretrain_config"]
    assert low.precision is None and "precision" in low.unknown
    # a recipe that only raises is recorded with the reason (qwen/qwen3_next.py:288)
    assert "NotImplementedError" in records["qwen3_next_80b_a3b_peft_config"].unknown["*"]


def test_installed_package_dir_gives_the_same_records(wheel_path: Path, records, tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(wheel_path) as archive:
        archive.extractall(tmp_path / "site-packages")
    installed = extract(open_source(tmp_path / "site-packages" / "megatron" / "bridge"), "0.3.1")
    by_name = {r.name: r for r in installed.records if r.kind == "library"}
    assert set(by_name) == set(records)
    for name in EXPECTED:
        assert by_name[name].fields == records[name].fields


def test_mixed_precision_presets_are_read_from_the_wheel(wheel_path: Path) -> None:
    import json
    import zipfile

    from assistant.settings import KNOWLEDGE_BASE
    from ingest.mixed_precision import extract_presets

    with zipfile.ZipFile(wheel_path) as archive:
        source = archive.read("megatron/bridge/training/mixed_precision.py").decode()
    presets = extract_presets(source)
    # mixed_precision.py:171 bf16_mixed, :272 bf16_with_fp8_current_scaling_mixed, :242 bf16_with_mxfp8_mixed
    assert {"bf16_mixed", "bf16_with_fp8_current_scaling_mixed", "bf16_with_mxfp8_mixed"} <= set(presets)
    assert "get_mixed_precision_config" not in presets and "register" not in presets  # not @register
    bundled = json.loads((KNOWLEDGE_BASE / "mixed_precision.json").read_text(encoding="utf-8"))
    assert bundled["versions"]["0.3.1"]["presets"] == presets
