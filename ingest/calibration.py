"""Extract published measurements into knowledge_base/calibration/ and fit the estimator constants.

Sources (read-only mirrors, never imported or executed):
- Megatron-Bridge docs/performance-summary.md and docs/performance-summary-archive.md: tokens/s/GPU rows,
  each with the performance features of its release's benchmark recipe (ingest/perf_features.py);
- Megatron-Bridge skills/*/card.yaml: documented peak-memory measurements;
- Megatron-LM tests/functional_tests/test_cases/**: mem-max-allocated-bytes golden values + model_config.yaml.
Writes perf_rows.json, memory_rows.json (data with a source each) and fit.json (fitted parameters).
Usage: python -m ingest.calibration [--bridge GIT_DIR] [--megatron GIT_DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from assistant.kb import knowledge_base
from assistant.models import load_model_arch
from assistant.records import Plan
from assistant.settings import get_settings
from ingest.atomic import write_atomic
from ingest.calibration_fit import (
    fit_memory,
    fit_throughput,
    golden_case,
    select_recency_decay,
    track_records,
)
from ingest.catalog_build import bridge_git_dir, mcore_git_dir
from ingest.perf_features import attach_features

BRIDGE_COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
PERF_DOCS = ("docs/performance-summary.md", "docs/performance-summary-archive.md")
GPU_OF_SYSTEM = {
    "DGX-GB300": "gb300",
    "DGX-GB200": "gb200",
    "DGX-B300": "b300",
    "DGX-B200": "b200",
    "DGX-H100": "h100",
}
MODE_OF_SECTION = {"pre-training": "pretrain", "sft": "sft", "lora": "peft"}
MODEL_KEYS = {
    "llama3_8b": "llama3_8b",
    "llama3_70b": "llama3_70b",
    "llama3.1_405b": "llama31_405b",
    "deepseekv3": "deepseek_v3",
    "deepseekv4 flash": "deepseek_v4_flash",
    "gpt oss 120b": "gpt_oss_120b",
    "qwen3_30b_a3b": "qwen3_30b_a3b",
    "qwen3_235b_a22b": "qwen3_235b_a22b",
    "kimi_k2": "kimi_k2",
    "nemotron_3_nano": "nemotron_3_nano",
    "nemotron_3_super": "nemotron_3_super",
    "nemotron_3_ultra": "nemotron_3_ultra",
    "nemotron_3_5_lightning": "nemotron_3_5_lightning",
}


def git_show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


# ---------------------------------------------------------------- performance tables


def _split_alt(cell: str) -> tuple[str, str | None]:
    """'31357 (29925)' -> ('31357', '29925'); footnote markers are dropped."""
    cell = re.sub(r"\[\^[^\]]*\]", "", cell).strip()
    match = re.fullmatch(r"(.+?)\s*\((.+)\)", cell)
    return (match.group(1).strip(), match.group(2).strip()) if match else (cell, None)


def _number(cell: str) -> int | float | None:
    cell = cell.replace(",", "").strip()
    if cell.lower() in {"n/a", "", "-"}:
        return None
    value = float(cell)
    return int(value) if value.is_integer() else value


def _model_key(name: str) -> tuple[str, str | None]:
    base, note = _split_alt(name)
    key = MODEL_KEYS.get(base.strip().lower())
    if key is None:
        raise ValueError(f"unknown model name in perf table: {name!r}")
    return key, note


def _precision(raw: str | None, release: str, gpu: str, alt: bool) -> str:
    """Normalise a precision cell; 25.09 has none: its main value is FP8 current scaling, the alternative
    (in parentheses) is MXFP8 on Blackwell and blockwise FP8 on H100 (footnote of that table)."""
    if raw is None:
        return ("fp8_blockwise" if gpu == "h100" else "mxfp8") if alt else "fp8_cs"
    text = raw.strip().upper()
    return {
        "FP8-CS": "fp8_cs",
        "FP8": "fp8_cs",
        "FP8-MX": "mxfp8",
        "MXFP8": "mxfp8",
        "NVFP4": "nvfp4",
        "BF16": "bf16",
    }[text]


def parse_perf_markdown(text: str, path: str, commit: str) -> list[dict[str, Any]]:
    """Every table row of a performance summary page, one dict per (row, variant)."""
    rows: list[dict[str, Any]] = []
    release = mode = model_heading = system_heading = None
    header: list[str] | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if m := re.match(r"## (\d+\.\d+(?:\.\d+)?) NeMo Container", line):
            release, header = m.group(1), None
        elif m := re.match(r"### (.+) Performance", line):
            mode = MODE_OF_SECTION[m.group(1).strip().lower()]
        elif m := re.match(r"#### Model: (.+)", line):
            model_heading, system_heading, header = m.group(1).strip(), None, None
        elif m := re.match(r"#### System: (.+)", line):
            system_heading, model_heading, header = m.group(1).strip(), None, None
        elif line.startswith("|") and release:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if set(cells[0]) <= {"-", ":"}:
                continue
            rows.extend(
                _table_rows(
                    dict(zip(header, cells, strict=True)),
                    release,
                    mode,
                    model_heading,
                    system_heading,
                    path,
                    commit,
                    lineno,
                )
            )
        elif not line.startswith("|"):
            header = header if line.strip() == "" else None
    return rows


def _table_rows(cells, release, mode, model_heading, system_heading, path, commit, lineno):
    system = cells.get("system", system_heading)
    gpu = GPU_OF_SYSTEM[system]
    model, note = _model_key(cells.get("model", model_heading))
    split = {k: _split_alt(v) for k, v in cells.items() if k not in {"model", "system"}}
    footnotes = sorted({name for cell in cells.values() for name in re.findall(r"\[\^([^\]]+)\]", cell)})
    variants = [False]
    if split["tokens / sec / gpu"][1] is not None:
        variants.append(True)
    out = []
    for alt in variants:

        def pick(key, alt=alt):
            main, other = split.get(key, (None, None))
            return other if alt and other is not None else main

        precision_cell = split.get("precision")
        raw_precision = None if precision_cell is None else (precision_cell[1] if alt else precision_cell[0])
        fsdp = _number(pick("fsdp") or "0") or 0
        vp = _number(pick("vp"))
        out.append(
            {
                "release": release,
                "mode": mode,
                "model": model,
                "model_note": note,
                "system": system,
                "gpu": gpu,
                "num_gpus": _number(pick("#-gpus")),
                "precision": _precision(raw_precision, release, gpu, alt),
                "gbs": _number(pick("gbs")),
                "mbs": _number(pick("mbs")),
                "seq_length": _number(pick("sequence length")),
                "fsdp": fsdp,
                "tp": _number(pick("tp")),
                "pp": _number(pick("pp")),
                "cp": _number(pick("cp")),
                "vp": None if vp in (None, 1) else vp,
                "ep": _number(pick("ep")) or 1,
                "tokens_per_sec_per_gpu": _number(pick("tokens / sec / gpu")),
                "model_tflops_per_gpu": _number(pick("model tflop / sec / gpu")),
                "variant": "parenthesised" if alt else "main",
                "footnotes": footnotes,  # names of the source table's footnotes on this row
                "source": {
                    "repo": "NVIDIA-NeMo/Megatron-Bridge",
                    "commit": commit,
                    "path": path,
                    "line": lineno,
                },
            }
        )
    return out


# ---------------------------------------------------------------- memory measurements


def bridge_card_memory_rows(git_dir: str, commit: str) -> list[dict[str, Any]]:
    """Peak memory rows of skill cards whose workload names a full dense configuration."""
    listing = subprocess.run(
        ["git", "-C", git_dir, "ls-tree", "-r", "--name-only", commit, "skills/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    rows = []
    for path in (p for p in listing if p.endswith("card.yaml")):
        data = yaml.safe_load(git_show(git_dir, commit, path))
        for study in _walk_dicts(data):
            if not {"model", "parallelism", "experiments", "seq_length"} <= set(study):
                continue
            sizes = dict(re.findall(r"(TP|PP|VPP|DP|CP|EP)(\d+)", str(study["parallelism"])))
            for exp in study["experiments"]:
                if "peak_mem_gb" not in exp:
                    continue
                rows.append(
                    {
                        "model": str(study["model"]),
                        "mode": study.get("task", "pretrain"),
                        "gpu": str(study.get("gpu", "")).lower().split("_")[0],
                        "num_gpus": study.get("gpus"),
                        "precision": str(study.get("precision", "bf16")).lower(),
                        "seq_length": study["seq_length"],
                        "mbs": study.get("mbs"),
                        "gbs": study.get("gbs"),
                        "tp": int(sizes.get("TP", 1)),
                        "pp": int(sizes.get("PP", 1)),
                        "vp": int(sizes["VPP"]) if "VPP" in sizes else None,
                        "cp": int(sizes.get("CP", 1)),
                        "ep": int(sizes.get("EP", 1)),
                        "recompute_modules": exp.get("recompute_modules"),
                        "experiment": exp.get("name"),
                        "status": exp.get("status"),
                        "peak_bytes": float(exp["peak_mem_gb"]) * 1e9,
                        "peak_unit_note": "card reports GB",
                        "measured_rank": "rank 0 (first pipeline stage)"
                        if "rank0" in str(exp.get("status", ""))
                        else "not stated",
                        "source": {"repo": "NVIDIA-NeMo/Megatron-Bridge", "commit": commit, "path": path},
                    }
                )
    return rows


def _walk_dicts(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk_dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk_dicts(value)


def megatron_golden_memory_rows(git_dir: str) -> list[dict[str, Any]]:
    """mem-max-allocated-bytes (steady state) of Megatron-LM GPT functional tests, paired with their args."""
    commit = subprocess.run(
        ["git", "-C", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    listing = subprocess.run(
        ["git", "-C", git_dir, "ls-tree", "-r", "--name-only", commit, "tests/functional_tests/test_cases/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    configs = {p.rsplit("/", 1)[0]: p for p in listing if p.endswith("/model_config.yaml")}
    rows = []
    for path in listing:
        name = path.rsplit("/", 1)[-1]
        if not (name.startswith("golden_values") and name.endswith(".json")):
            continue
        folder = path.rsplit("/", 1)[0]
        if folder not in configs or folder.split("/")[3] not in {"gpt", "moe"}:
            continue
        try:
            golden = json.loads(git_show(git_dir, commit, path))
            args = yaml.safe_load(git_show(git_dir, commit, configs[folder])).get("MODEL_ARGS") or {}
        except (json.JSONDecodeError, yaml.YAMLError):
            continue
        metric = golden.get("mem-max-allocated-bytes") if isinstance(golden, dict) else None
        series = metric.get("values") if isinstance(metric, dict) else None
        if not isinstance(series, dict):
            continue
        values = [float(v) for v in series.values() if isinstance(v, int | float) or _is_float(v)]
        if not values:
            continue
        gpu = _golden_gpu(name)
        if gpu is None:
            continue
        rows.append(
            {
                "test": folder.split("test_cases/")[1],
                "gpu": gpu,
                "peak_bytes": max(values),
                "args": {
                    k.lstrip("-"): v for k, v in args.items() if isinstance(v, int | float | str | bool)
                },
                "measured_rank": "last global rank (last pipeline stage)",
                "source": {
                    "repo": "NVIDIA/Megatron-LM",
                    "commit": commit,
                    "path": path,
                    "config": configs[folder],
                },
            }
        )
    return rows


def _is_float(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return str(value).lower() != "nan"


def _golden_gpu(name: str) -> str | None:
    for tag, gpu in (("gb200", "gb200"), ("h100", "h100"), ("a100", "a100")):
        if tag in name:
            return gpu
    return None


# ---------------------------------------------------------------- writing


def write_json(path: Path, data: Any) -> None:
    """Atomic write: a crash never leaves a half-written data file."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def load_archs(out: Path) -> dict:
    """Perf-table model name -> bundled ModelArch (knowledge_base/models)."""
    data = json.loads((out / "archs.json").read_text(encoding="utf-8"))
    archs = {key: load_model_arch(hf_id, kb=knowledge_base()) for key, hf_id in data["models"].items()}
    missing = sorted(key for key, arch in archs.items() if arch is None)
    if missing:
        raise SystemExit(f"no bundled architecture for {missing}; run the model ingest first")
    return archs


def memory_cases(out: Path, hw: dict) -> list[dict[str, Any]]:
    """Measured peaks as estimator inputs: [{"case", "gpu", "measured", "stage", "name", "source"}]."""
    data = json.loads((out / "memory_rows.json").read_text(encoding="utf-8"))
    archs = load_archs(out)
    cases = []
    for row in data.get("megatron_golden", []):
        case = golden_case(row)
        if case is not None:
            cases.append(
                {
                    "case": case,
                    "gpu": row["gpu"],
                    "measured": row["peak_bytes"],
                    "stage": "last",
                    "name": f"megatron:{row['test']}:{row['gpu']}",
                    "source": row["source"]["path"],
                }
            )
    for row in data.get("bridge_cards", []):
        if row["model"] != "Llama3 70B" or row.get("status") == "OOM_on_rank0":
            continue  # only completed runs of a model we have; an OOM peak is a lower bound, not a peak
        case = _bridge_case(row, archs["llama3_70b"])
        cases.append(
            {
                "case": case,
                "gpu": row["gpu"],
                "measured": row["peak_bytes"],
                "stage": "first",
                "name": f"bridge:{row['model']}:{row['experiment']}",
                "source": row["source"]["path"],
            }
        )
    return [c for c in cases if c["gpu"] in hw]


def _bridge_case(row: dict[str, Any], arch) -> dict[str, Any]:
    plan = Plan.sized(
        num_gpus=row["num_gpus"],
        tp=row["tp"],
        pp=row["pp"],
        cp=row["cp"],
        mbs=row["mbs"],
        gbs=row["gbs"],
        vp=row["vp"],
        ep=1,
        etp=None,
        sp=row["tp"] > 1,
    )
    modules = row.get("recompute_modules") or []
    # Bridge's H100 Llama3-70B SFT perf recipe reduces gradients in bf16 (grad_reduce_in_fp32=False).
    return {
        "arch": arch,
        "layout": plan,
        "seq_length": row["seq_length"],
        "precision": row["precision"],
        "recompute": "selective" if modules else None,
        "recompute_modules": modules,
        "mode": row["mode"],
        "distributed_optimizer": True,
        "grad_reduce_in_fp32": False,
    }


# The model family the memory fit never sees (with the GB200 rows): Megatron-LM's MoE functional tests.
HELD_OUT_MEMORY_FAMILY = "megatron:moe/"


def fit_all(out: Path) -> dict[str, Any]:
    """Fit throughput efficiencies (releases <= 26.04.01, recency decay chosen on a validation split inside
    them) and memory overheads (A100/H100 rows only, MoE test family held out)."""
    hw = knowledge_base().hardware
    archs = load_archs(out)
    rows = json.loads((out / "perf_rows.json").read_text(encoding="utf-8"))["rows"]
    validation = select_recency_decay(rows, archs, hw)
    decay = min(validation, key=validation.__getitem__)
    calibration = fit_throughput(rows, archs, hw, recency_decay=decay)
    train = [
        (c["case"], hw[c["gpu"]], c["measured"], c["stage"])
        for c in memory_cases(out, hw)
        if c["gpu"] in {"a100", "h100"} and not c["name"].startswith(HELD_OUT_MEMORY_FAMILY)
    ]
    overheads = fit_memory(train)
    return {
        "throughput": calibration.to_json(),
        "recency_decay_validation_mape": {str(k): round(v, 4) for k, v in validation.items()},
        "memory": overheads.to_json(),
        "track_records": [t.to_json() for t in track_records(rows, archs, hw, calibration)],
        "produced_by": "python -m ingest.calibration",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bridge", type=Path, help="Megatron-Bridge git mirror (default $AUTORECIPE_BRIDGE_GIT)."
    )
    parser.add_argument("--commit", default=BRIDGE_COMMIT)
    parser.add_argument(
        "--megatron", type=Path, help="Megatron-LM git mirror (default $AUTORECIPE_MCORE_GIT)."
    )
    parser.add_argument("--fit-only", action="store_true", help="refit from the stored rows")
    args = parser.parse_args(argv)
    out = get_settings().knowledge_base / "calibration"
    if not args.fit_only:
        args.bridge = str(bridge_git_dir(args.bridge))  # a clear message when neither is given
        megatron = mcore_git_dir(args.megatron)
        perf = [
            row
            for path in PERF_DOCS
            for row in parse_perf_markdown(git_show(args.bridge, args.commit, path), path, args.commit)
        ]
        matched = attach_features(perf, args.bridge)
        print(f"perf rows with their release recipe's features: {sum(matched.values())} of {len(perf)}")
        write_json(out / "perf_rows.json", {"rows": perf})
        memory = {"bridge_cards": bridge_card_memory_rows(args.bridge, args.commit)}
        if megatron is not None:
            memory["megatron_golden"] = megatron_golden_memory_rows(str(megatron))
        write_json(out / "memory_rows.json", memory)
        print(f"perf rows: {len(perf)}; memory rows: {sum(len(v) for v in memory.values())}")
    write_json(out / "fit.json", fit_all(out))
    print(f"wrote {out / 'fit.json'}")


if __name__ == "__main__":
    main()
