"""The one reader of knowledge_base/: catalogs, model architectures, the GPU table, the fitted calibration
and the JSON tables (glossary, support, quick reference, ...), loaded once per knowledge-base directory.

`knowledge_base(settings)` is built from `Settings.knowledge_base` (AUTORECIPE_KNOWLEDGE_BASE), so moving
that directory moves every file read here. Callers hand the records it returns (`GpuSpec`, `Calibration`,
`MemoryOverheads`, `ModelArch`, `Catalog`) to the pure rules, estimators and planners as arguments.
"""

from __future__ import annotations

import json
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from assistant.errors import UserError
from assistant.estimate.hardware import GpuSpec, load_hardware, resolve_gpu
from assistant.estimate.memory import MemoryOverheads
from assistant.estimate.throughput import Calibration, TrackRecord, precision_key
from assistant.records import Catalog, ModelArch
from assistant.rules.versions import DEFAULT_VERSION, version_key
from assistant.settings import Settings, get_settings


class KnowledgeBase:
    """Lazily parsed, cached views of one knowledge_base directory (nothing is read until asked for)."""

    def __init__(self, root: Path, default_version: str = DEFAULT_VERSION) -> None:
        self.root = root
        self.default_version = default_version  # Settings.default_version: a table's fallback release
        self._json: dict[str, Any] = {}
        self._gpus: dict[str, GpuSpec] = {}
        self._catalogs: dict[str, Catalog] = {}

    # ------------------------------------------------------------ files

    @property
    def catalog_dir(self) -> Path:
        return self.root / "catalogs"

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    def guide_pages(self) -> list[tuple[str, str]]:
        """(language, page) of every bundled guide page, sorted."""
        guide = self.root / "guide"
        return sorted((d.name, f.stem) for d in guide.iterdir() if d.is_dir() for f in d.glob("*.md"))

    def guide_page(self, lang: str, page: str) -> str:
        """The markdown of one guide page (a name from `guide_pages`)."""
        return (self.root / "guide" / lang / f"{page}.md").read_text(encoding="utf-8")

    def json(self, name: str, *, required: bool = True) -> Any:
        """A parsed JSON file of the knowledge base (cached); `required=False`: None when it is absent."""
        if name not in self._json:
            path = self.root / name
            if not path.exists() and not required:
                self._json[name] = None
            else:
                try:
                    self._json[name] = json.loads(path.read_text(encoding="utf-8"))
                except FileNotFoundError as error:
                    hint = "run the ingest step that writes it"
                    raise UserError(f"missing data file {path}; {hint}") from error
        return self._json[name]

    # ------------------------------------------------------------ GPUs and calibration

    @cached_property
    def hardware(self) -> dict[str, GpuSpec]:
        return load_hardware(self.json("hardware.json"))

    def gpu_spec(self, gpu_type: str) -> GpuSpec:
        """The GpuSpec for a type or alias such as "h100", "DGX-GB200" or "a100-40g"."""
        if gpu_type not in self._gpus:
            self._gpus[gpu_type] = resolve_gpu(self.hardware, gpu_type)
        return self._gpus[gpu_type]

    @cached_property
    def _fit(self) -> dict[str, Any]:
        return self.json("calibration/fit.json", required=False) or {}

    @cached_property
    def calibration(self) -> Calibration:
        """Fitted throughput efficiencies (calibration/fit.json), or the priors if unfitted."""
        data = self._fit.get("throughput")
        return Calibration.model_validate(data) if data else Calibration()

    @cached_property
    def memory_overheads(self) -> MemoryOverheads:
        """Fitted memory overhead constants, or the priors if not fitted yet."""
        data = self._fit.get("memory")
        return MemoryOverheads.model_validate(data) if data else MemoryOverheads()

    @cached_property
    def _track_records(self) -> dict[tuple[str, str], TrackRecord]:
        records = (TrackRecord.model_validate(item) for item in self._fit.get("track_records", []))
        return {(t.hf_model_id, t.precision): t for t in records}

    def track_record(self, hf_model_id: str, precision: str) -> TrackRecord | None:
        """How the estimate did on the published runs of this model in this precision, if there are any."""
        return self._track_records.get((hf_model_id, precision_key(precision)))

    def preset_stores_fp8_weights(self, version: str | None, preset: str | None) -> bool:
        """Whether a release's mixed-precision preset sets fp8_param_gather (weights held as FP8 tensors)."""
        return self._preset_flag("fp8_param_gather", version, preset)

    def preset_stores_fp4_weights(self, version: str | None, preset: str | None) -> bool:
        """Whether a release's mixed-precision preset sets fp4_param_gather (weights as NVFP4 tensors)."""
        return self._preset_flag("fp4_param_gather", version, preset)

    def preset_reduces_grads_in_fp32(self, version: str | None, preset: str | None) -> bool | None:
        """A release's mixed-precision preset's grad_reduce_in_fp32, None for a preset the table lacks."""
        return self._preset_value("grad_reduce_in_fp32", version, preset)

    def _preset_flag(self, field: str, version: str | None, preset: str | None) -> bool:
        return bool(self._preset_value(field, version, preset))

    def _preset_value(self, field: str, version: str | None, preset: str | None) -> bool | None:
        """`field` of a preset (named bare or by its dotted `_target_`) in a release's table, else None."""
        if not preset:
            return None
        params = self.json("calibration/precision_params.json", required=False) or {}
        table = params.get(field, {})
        presets = table.get(version or self.default_version) or table.get(self.default_version, {})
        value = presets.get(str(preset).rsplit(".", 1)[-1])
        return value if isinstance(value, bool) else None

    # ------------------------------------------------------------ catalogs and models

    def catalog_versions(self) -> list[str]:
        """Bundled catalog versions, oldest first, "main" last."""
        return sorted((p.stem for p in self.catalog_dir.glob("*.json")), key=version_key)

    def catalog_payload(self, version: str) -> Catalog:
        """The catalog file of one version as written by ingest (assistant.catalog adds the tables)."""
        if version not in self._catalogs:
            path = self.catalog_dir / f"{version}.json"
            try:
                payload = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as error:
                raise UserError(
                    f"recipe catalog {path} cannot be read ({error}); regenerate it with "
                    "`python -m ingest.catalog_build`"
                ) from error
            self._catalogs[version] = Catalog.model_validate(payload)
        return self._catalogs[version]

    @cached_property
    def architecture_gaps(self) -> dict[str, dict[str, str]]:
        """Why a model, provider or recipe has no architecture record (architecture_gaps.json)."""
        data = self.json("architecture_gaps.json", required=False) or {}
        return {
            "models": {k.lower(): v for k, v in data.get("models", {}).items()},
            "providers": dict(data.get("providers", {})),
            "recipes": dict(data.get("recipes", {})),
        }

    @cached_property
    def model_archs(self) -> dict[str, ModelArch]:
        """Bundled architectures by lower-cased HF id."""
        archs: dict[str, ModelArch] = {}
        for file in sorted(self.models_dir.glob("*.json")):
            arch = ModelArch.model_validate_json(file.read_text(encoding="utf-8"))
            archs[arch.hf_model_id.lower()] = arch
        return archs


@lru_cache(maxsize=4)
def _at(root: Path, default_version: str) -> KnowledgeBase:
    return KnowledgeBase(root, default_version)


def knowledge_base(settings: Settings | None = None) -> KnowledgeBase:
    """The knowledge base of `settings` (default: the environment's), loaded once per directory."""
    settings = settings or get_settings()
    return _at(settings.knowledge_base, settings.default_version)
