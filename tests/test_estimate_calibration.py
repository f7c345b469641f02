"""Calibration data: the perf-table parser, the stored rows and the fitted parameters."""

from __future__ import annotations

import json

from assistant.kb import knowledge_base
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration import parse_perf_markdown
from ingest.calibration_fit import is_training_row, latest_per_config, release_tuple

CALIBRATION = KNOWLEDGE_BASE / "calibration"

# A made-up page in the layout of Megatron-Bridge's performance summary (two table styles).
PAGE = """
## 26.06 NeMo Container

### Pre-Training Performance

#### Model: LLAMA3_70B

| System | #-GPUs | Precision | GBS | MBS | Sequence Length | TP | PP | CP | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU |
|--------|--------|-----------|-----|-----|-----------------|----|----|----|----|----|-----------------------|-------------------------|
| DGX-H100 | 64 | FP8 | 256 | 1 | 8192 | 4 | 8 | 1 | 5 | n/a | 1600 | 719[^note] |

### LoRA Performance

#### Model: LLAMA3_70B

| System | #-GPUs | Precision | GBS | MBS | Sequence Length | TP | PP | CP | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU |
|--------|--------|-----------|-----|-----|-----------------|----|----|----|----|----|-----------------------|-------------------------|
| DGX-GB200 | 8 | MXFP8 | 32 | 1 | 4096 | 1 | 4 | 1 | 20 | n/a | 5958 | 1663 |

## 25.09 NeMo Container

### Pre-Training Performance

#### System: DGX-GB200

| Model | #-GPUs | GBS | MBS | Sequence Length | FSDP | TP | PP | CP | VP | EP | GA | Tokens / sec / GPU | Model TFLOP / sec / GPU |
|-------|--------|-----|-----|-----------------|------|----|----|----|----|----|----|-----------------------|-------------------------|
| LLAMA3_70B | 64 | 128 | 2 | 8192 | 64 (0) | 1 (2) | 1 (4) | 1 | 1 (5) | 1 | 1 (16) | 3986 (3546) | 1791 (1593) |
"""  # noqa: E501


def test_parser_reads_both_table_styles() -> None:
    rows = parse_perf_markdown(PAGE, "docs/x.md", "abc")
    assert len(rows) == 4
    h100, lora, main, alt = rows
    assert (h100["release"], h100["mode"], h100["gpu"], h100["precision"]) == (
        "26.06",
        "pretrain",
        "h100",
        "fp8_cs",
    )
    assert (h100["tp"], h100["pp"], h100["vp"], h100["ep"], h100["model_tflops_per_gpu"]) == (4, 8, 5, 1, 719)
    assert lora["mode"] == "peft" and lora["precision"] == "mxfp8"
    assert (h100["footnotes"], lora["footnotes"]) == (["note"], [])
    # 25.09 has no precision column: the main value is FP8 current scaling, the parenthesised one MXFP8,
    # and the parentheses also carry that variant's layout.
    assert (main["precision"], main["fsdp"], main["tp"], main["vp"], main["tokens_per_sec_per_gpu"]) == (
        "fp8_cs", 64, 1, None, 3986,
    )  # fmt: skip
    picked = (alt["precision"], alt["fsdp"], alt["tp"], alt["pp"], alt["vp"], alt["tokens_per_sec_per_gpu"])
    assert picked == ("mxfp8", 0, 2, 4, 5, 3546)
    assert h100["source"] == {"repo": "NVIDIA-NeMo/Megatron-Bridge", "commit": "abc", "path": "docs/x.md",
                              "line": 10}  # fmt: skip


def test_stored_rows_have_sources_and_both_splits() -> None:
    rows = json.loads((CALIBRATION / "perf_rows.json").read_text())["rows"]
    assert len(rows) > 200
    assert all(r["source"]["path"].startswith("docs/performance-summary") for r in rows)
    releases = {r["release"] for r in rows}
    assert {"26.06", "26.06.01", "26.08"} <= releases and "26.04.01" in releases
    assert not any(is_training_row(r) for r in rows if r["release"] in {"26.06", "26.06.01", "26.08"})
    memory = json.loads((CALIBRATION / "memory_rows.json").read_text())
    assert memory["bridge_cards"] and all(
        r["source"]["path"].endswith("card.yaml") for r in memory["bridge_cards"]
    )


def test_latest_measurement_per_configuration_wins() -> None:
    base = {"model": "m", "mode": "pretrain", "gpu": "h100", "precision": "fp8_cs", "num_gpus": 8,
            "gbs": 8, "mbs": 1, "seq_length": 4096, "fsdp": 0, "tp": 1, "pp": 1, "cp": 1, "vp": None,
            "ep": 1}  # fmt: skip
    rows = [{**base, "release": "26.02"}, {**base, "release": "26.04.01"}, {**base, "release": "25.11"}]
    assert [r["release"] for r in latest_per_config(rows)] == ["26.04.01"]
    assert release_tuple("26.04") < release_tuple("26.04.01") < release_tuple("26.06")


def test_track_records_are_the_fitted_estimate_against_the_published_rows() -> None:
    """fit.json's per-model, per-precision record is what track_records gives on the committed rows with the
    committed fit (so it cannot go stale), and it covers every modelled model."""
    from ingest.calibration import load_archs
    from ingest.calibration_fit import track_records

    fit = json.loads((CALIBRATION / "fit.json").read_text())
    rows = json.loads((CALIBRATION / "perf_rows.json").read_text())["rows"]
    archs = load_archs(CALIBRATION)
    again = track_records(rows, archs, knowledge_base().hardware, knowledge_base().calibration)
    assert [t.to_json() for t in again] == fit["track_records"]
    assert {t.hf_model_id for t in again} == {a.hf_model_id for a in archs.values()}
    assert sum(t.runs for t in again) > 90


def test_fitted_parameters_come_from_the_training_releases() -> None:
    fit = json.loads((CALIBRATION / "fit.json").read_text())
    assert fit["produced_by"] == "python -m ingest.calibration"
    assert "26.04.01" in fit["throughput"]["source"]
    assert "A100/H100" in fit["memory"]["source"]
    cal = knowledge_base().calibration
    assert cal.gemm_efficiency and all(0 < v <= 1 for v in cal.gemm_efficiency.values())
    assert knowledge_base().memory_overheads.source == fit["memory"]["source"]


def test_patch_container_rows_carry_the_preset_of_the_bridge_release_they_ran() -> None:
    """26.04.01 shipped Megatron-Bridge 0.4.2 (docs/fern/docs.yml: "0.4.2 (latest) · 26.04.01"), not the
    security-only 0.4.1: the DeepSeek-V3 B200 layout it publishes (PP8 VP2 EP32) exists only in 0.4.2's
    presets, with DeepEP and the all-to-all overlap. Estimated without them it read 47% slow."""
    from ingest.calibration import load_archs
    from ingest.calibration_fit import predict_tokens
    from ingest.perf_features import BRIDGE_TAG_OF_RELEASE

    assert BRIDGE_TAG_OF_RELEASE["26.04.01"] == "v0.4.2"
    rows = json.loads((CALIBRATION / "perf_rows.json").read_text())["rows"]
    wanted = ("26.04.01", "deepseek_v3", "b200", 8, 2, 32)
    (row,) = [r for r in rows if (r["release"], r["model"], r["gpu"], r["pp"], r["vp"], r["ep"]) == wanted]
    assert row["features_source"]["tag"] == "v0.4.2"
    assert row["features"]["flex_dispatcher"] and row["features"]["moe_a2a_overlap"]
    tagged = [r for r in rows if r["release"] == "26.04.01" and r["features_source"]]
    assert tagged and {r["features_source"]["tag"] for r in tagged} == {"v0.4.2"}
    kb = knowledge_base()
    arch = load_archs(CALIBRATION)["deepseek_v3"]
    estimate = predict_tokens(row, arch, kb.hardware["b200"], kb.calibration)
    assert abs(estimate / row["tokens_per_sec_per_gpu"] - 1) < 0.15
