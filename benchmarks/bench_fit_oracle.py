"""Check the memory estimate against NVIDIA's own benchmark runs: every benchmark recipe fits its GPUs.

Megatron-Bridge's benchmark recipes (`perf_recipes`, the scripts' presets) name the GPU count and type they
are run on, and NVIDIA publishes their throughput, so each one fits in memory at its own layout. For every
such recipe in every bundled catalog, estimate it at its own layout on its own GPUs and count how many the
estimate says fit, do not fit, or cannot be estimated (with the reason), then list the worst cases.
Usage: python benchmarks/bench_fit_oracle.py [--version V ...] [--worst N]
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter

from assistant.catalog import load_catalog
from assistant.errors import UserError
from assistant.estimate.hardware import GIB
from assistant.planning.estimate import estimate_run
from assistant.rules.versions import BUNDLED_VERSIONS
from ui.commands.estimate import parse_args, run_from_record

VERSIONS = BUNDLED_VERSIONS


def oracle_records(version: str) -> list:
    """Benchmark records with an encoded GPU count and type."""
    catalog = load_catalog(version)
    return [r for r in catalog.recipes if r.kind == "benchmark" and r.encoded_gpus and r.gpu_type]


def reason_class(message: str, record) -> str:
    """A short, countable reason for an estimate that could not be made."""
    if "workload_base_configs" in (record.module or "") and not record.hf_model_id:
        return "layout preset only: the perf script adds the model at run time (not composed statically)"
    if message.startswith("not estimated: "):
        return "known gap: " + message.split(": ", 2)[2].split(";")[0].split(" (")[0][:80]
    if message.startswith("no bundled architecture for"):
        return "no architecture record"
    if "does not define its architecture" in message:
        return "no architecture (no HF id)"
    if "unknown GPU" in message or "GPU type" in message:
        return "GPU type not in hardware.json"
    return re.sub(r"\d+", "N", message)[:90]


def missing_piece(message: str, record) -> str:
    """What an estimate lacked: the model (for an architecture reason), else the GPU type or the reason."""
    reason = reason_class(message, record)
    if "architecture" in reason or "known gap" in reason or "hybrid" in message or "vocab_size" in message:
        return record.hf_model_id or record.family or "?"
    if "GPU type" in reason:
        return record.gpu_type
    return "other"


def estimate_record(record, version: str) -> dict:
    """Fit verdict for one benchmark record on its own GPUs: {"status", "peak", "usable", "reason"}."""
    args = parse_args(
        ["--recipe", record.name, "--gpus", str(record.encoded_gpus), "--gpu-type", record.gpu_type,
         "--version", version]
    )  # fmt: skip
    try:
        result = estimate_run(run_from_record(record, args))
    except UserError as error:
        return {"status": "not estimated", "reason": str(error)}
    memory = result["memory"]
    return {
        "status": "fits" if memory["fits"] else "does not fit",
        "peak": memory["peak_bytes"],
        "usable": memory["usable_bytes"],
        "tight": memory["tight"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", choices=VERSIONS)
    parser.add_argument("--worst", type=int, default=8)
    options = parser.parse_args()
    for version in options.version or VERSIONS:
        start = time.perf_counter()
        records = oracle_records(version)
        outcomes = [(r, estimate_record(r, version)) for r in records]
        status = Counter(o["status"] for _, o in outcomes)
        estimated = status["fits"] + status["does not fit"]
        share = status["does not fit"] / estimated if estimated else 0.0
        print(
            f"{version}: {len(records)} benchmark recipes with encoded GPUs "
            f"({sum(r.reachable for r in records)} reachable): {status['fits']} fit, "
            f"{status['does not fit']} do not fit ({share:.1%} of the estimated), "
            f"{status['not estimated']} not estimated  [{time.perf_counter() - start:.1f} s]"
        )
        reasons = Counter(reason_class(o["reason"], r) for r, o in outcomes if o["status"] == "not estimated")
        for reason, count in reasons.most_common():
            print(f"    not estimated {count:4d}: {reason}")
        missing = Counter(
            missing_piece(o["reason"], r) for r, o in outcomes if o["status"] == "not estimated"
        )
        if missing:
            print("    missing: " + ", ".join(f"{k} ({n})" for k, n in missing.most_common()))
        worst = sorted(
            ((r, o) for r, o in outcomes if o["status"] == "does not fit"),
            key=lambda item: item[1]["peak"] / item[1]["usable"],
            reverse=True,
        )
        for record, outcome in worst[: options.worst]:
            print(
                f"    worst: {record.name} on {record.encoded_gpus}x {record.gpu_type}: "
                f"{outcome['peak'] / GIB:.1f} of {outcome['usable'] / GIB:.1f} GiB "
                f"({outcome['peak'] / outcome['usable']:.0%})"
            )


if __name__ == "__main__":
    main()
