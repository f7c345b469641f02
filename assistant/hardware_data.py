"""Reads the estimator data files (hardware table, fitted calibration) once; the estimators stay pure."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from assistant.errors import UserError
from assistant.estimate.hardware import GpuSpec, load_hardware, resolve_gpu
from assistant.estimate.memory import MemoryOverheads
from assistant.estimate.throughput import Calibration, TrackRecord, precision_key
from assistant.settings import get_settings


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise UserError(f"missing data file {path}; run the ingest step that writes it") from error


@lru_cache(maxsize=1)
def hardware_table() -> dict[str, GpuSpec]:
    return load_hardware(_read(get_settings().knowledge_base / "hardware.json"))


@lru_cache(maxsize=64)
def gpu_spec(gpu_type: str) -> GpuSpec:
    """The GpuSpec for a type or alias such as "h100", "DGX-GB200" or "a100-40g" (the rules ask per check)."""
    return resolve_gpu(hardware_table(), gpu_type)


@lru_cache(maxsize=1)
def _fit() -> dict:
    path = get_settings().knowledge_base / "calibration" / "fit.json"
    return _read(path) if path.exists() else {}


def calibration() -> Calibration:
    """Fitted throughput efficiencies (knowledge_base/calibration/fit.json), or the priors if unfitted."""
    data = _fit().get("throughput")
    return Calibration.model_validate(data) if data else Calibration()


def memory_overheads() -> MemoryOverheads:
    """Fitted memory overhead constants, or the priors if not fitted yet."""
    data = _fit().get("memory")
    return MemoryOverheads.model_validate(data) if data else MemoryOverheads()


@lru_cache(maxsize=1)
def _track_records() -> dict[tuple[str, str], TrackRecord]:
    records = (TrackRecord.model_validate(item) for item in _fit().get("track_records", []))
    return {(t.hf_model_id, t.precision): t for t in records}


def track_record(hf_model_id: str, precision: str) -> TrackRecord | None:
    """How the estimate did on the published runs of this model in this precision, if there are any."""
    return _track_records().get((hf_model_id, precision_key(precision)))


@lru_cache(maxsize=1)
def _precision_params() -> dict:
    path = get_settings().knowledge_base / "calibration" / "precision_params.json"
    return _read(path) if path.exists() else {}


def preset_stores_fp8_weights(version: str | None, preset: str | None) -> bool:
    """Whether a release's mixed-precision preset sets fp8_param_gather (weights held as FP8 tensors)."""
    table = _precision_params().get("fp8_param_gather", {})
    presets = table.get(version or "0.6.0") or table.get("0.6.0", {})
    return bool(presets.get(str(preset or "").rsplit(".", 1)[-1], False))
