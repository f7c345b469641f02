"""Check the memory estimate against NVIDIA's own benchmark runs: every benchmark recipe fits its GPUs.

Megatron-Bridge's benchmark recipes (`perf_recipes`, the scripts' presets) name the GPU count and type they
are run on, and NVIDIA publishes their throughput, so each one fits in memory at its own layout. For every
such recipe in every bundled catalog, estimate it at its own layout on its own GPUs and count how many the
estimate says fit, do not fit, or cannot be estimated (with the reason), then list the worst cases.
Usage: python benchmarks/bench_fit_oracle.py [--version V ...] [--worst N]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter

from assistant.catalog import load_catalog
from assistant.errors import UserError
from assistant.estimate.hardware import GIB
from assistant.kb import knowledge_base
from assistant.models import recipe_arch
from assistant.planning.estimate import estimate_run
from assistant.records import Cluster
from assistant.rules.config import build_config
from assistant.rules.validate import validate
from assistant.rules.versions import BUNDLED_VERSIONS
from assistant.settings import KNOWLEDGE_BASE
from ui.commands.estimate import parse_args, run_from_record

VERSIONS = BUNDLED_VERSIONS
# The perf tables' precision names, as the benchmark recipe names spell them.
PRECISION = {"bf16": "bf16", "fp8_cs": "fp8cs", "mxfp8": "fp8mx", "nvfp4": "nvfp4"}
LAYOUT = ("tp", "pp", "cp", "vp", "ep", "mbs", "gbs")


def published_layouts() -> set[tuple]:
    """(model, GPU, GPU count, precision, TP, PP, CP, VP, EP, MBS, GBS) of every row of NVIDIA's published
    performance tables (knowledge_base/calibration/perf_rows.json): the runs known to have fitted."""
    rows = json.loads((KNOWLEDGE_BASE / "calibration" / "perf_rows.json").read_text())["rows"]
    return {
        (r["model"], r["gpu"], r["num_gpus"], PRECISION[r["precision"]], *(r[k] or None for k in LAYOUT))
        for r in rows
        if r["mode"] == "pretrain"
    }


def is_published(record, plan: dict, published: set[tuple]) -> bool:
    """Whether this benchmark recipe, at the layout it was estimated at, is a published run."""
    match = re.match(r"(.+?)_pretrain_\d+gpu_[a-z0-9]+_([a-z0-9]+)_config$", record.name)
    if not match:
        return False
    model, precision = match.groups()
    layout = tuple((plan[k] if plan[k] and (k != "vp" or plan[k] > 1) else None) for k in LAYOUT)
    return (model, record.gpu_type, record.encoded_gpus, precision, *layout) in published


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
    if message.startswith("layout fails rule "):
        return "the recipe's own " + message.split(";")[0]
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
    if "layout fails rule" in reason:
        return "a broken recipe layout, not a missing piece"
    return "other"


def failed_rule(record, version: str):
    """The rule module's first error with a fix for this record on its own GPUs, or None: a recipe whose
    own layout breaks a rule (nemotronh_56b_pretrain_256gpu_*_bf16 keeps the 64-GPU global batch 192, which
    does not divide over 128 data-parallel ranks) is not a missing architecture."""
    arch = recipe_arch(record, knowledge_base())
    config = build_config(record, [], version=version)
    cluster = Cluster(num_gpus=record.encoded_gpus, gpu_type=record.gpu_type)
    gpu = knowledge_base().gpu_spec(record.gpu_type)
    errors = [f for f in validate(config, arch, cluster, version, gpu=gpu) if f.severity == "error" and f.fix]
    return errors[0] if errors else None


def _estimate(record, version: str, overrides: list[str]):
    args = parse_args(
        ["--recipe", record.name, "--gpus", str(record.encoded_gpus), "--gpu-type", record.gpu_type,
         "--version", version, *overrides]
    )  # fmt: skip
    return estimate_run(run_from_record(record, args), kb=knowledge_base())


def estimate_record(record, version: str) -> dict:
    """Fit verdict for one benchmark record on its own GPUs: {"status", "peak", "usable", "reason"}."""
    try:
        result = _estimate(record, version, [])
    except UserError as error:
        preset = "layout preset" in reason_class(str(error), record)
        rule = None if preset else failed_rule(record, version)
        if rule is None or rule.fix is None:
            return {"status": "not estimated", "reason": str(error)}
        # Not estimated at its own layout; estimated again at the rule module's repair, and said so.
        outcome = {"status": "not estimated", "reason": f"layout fails rule {rule.id}; {error}",
                   "rule": rule.id, "fix": rule.fix}  # fmt: skip
        try:
            repaired = _verdict(_estimate(record, version, rule.fix.split()))
        except UserError as again:
            repaired = {"status": "not estimated", "reason": str(again)}
        return outcome | {"repaired": repaired}
    return _verdict(result)


def _verdict(result: dict) -> dict:
    memory = result["memory"]
    breakdown = memory["breakdown"]
    return {
        "status": "fits" if memory["fits"] else "does not fit",
        "peak": memory["peak_bytes"],
        "usable": memory["usable_bytes"],
        "tight": memory["tight"],
        "plan": result["plan"],
        "stage": memory["stage"],
        "largest": max(breakdown, key=breakdown.get),
        "breakdown": breakdown,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", choices=VERSIONS)
    parser.add_argument("--worst", type=int, default=8)
    options = parser.parse_args()
    published = published_layouts()
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
        on_record = [(r, o) for r, o in outcomes if o["status"] != "not estimated" and is_published(
            r, o["plan"], published)]  # fmt: skip
        contradicted = [r.name for r, o in on_record if o["status"] == "does not fit"]
        print(
            f"    published runs (same model, GPUs, precision and layout in NVIDIA's perf tables): "
            f"{len(on_record)} estimated, {len(contradicted)} do not fit"
            + (f" ({', '.join(contradicted)})" if contradicted else "")
        )
        reasons = Counter(reason_class(o["reason"], r) for r, o in outcomes if o["status"] == "not estimated")
        for reason, count in reasons.most_common():
            print(f"    not estimated {count:4d}: {reason}")
        missing = Counter(
            missing_piece(o["reason"], r) for r, o in outcomes if o["status"] == "not estimated"
        )
        if missing:
            print("    missing: " + ", ".join(f"{k} ({n})" for k, n in missing.most_common()))
        for record, outcome in outcomes:
            if "repaired" in outcome:
                fixed = outcome["repaired"]
                verdict = (
                    f"{fixed['status']}, {fixed['peak'] / GIB:.1f} of {fixed['usable'] / GIB:.1f} GiB"
                    if "peak" in fixed
                    else f"{fixed['status']} ({fixed['reason'][:80]})"
                )
                print(
                    f"    broken recipe: {record.name} fails rule {outcome['rule']} at its own layout; "
                    f"at the rule's fix {outcome['fix']}: {verdict}"
                )
        worst = sorted(
            ((r, o) for r, o in outcomes if o["status"] == "does not fit"),
            key=lambda item: item[1]["peak"] / item[1]["usable"],
            reverse=True,
        )
        for record, outcome in worst[: options.worst]:
            plan = outcome["plan"]
            layout = " ".join(f"{k.upper()}{plan[k]}" for k in LAYOUT if plan[k])
            terms = ", ".join(f"{k} {v / GIB:.0f}" for k, v in outcome["breakdown"].items())
            print(
                f"    worst: {record.name} on {record.encoded_gpus}x {record.gpu_type}: "
                f"{outcome['peak'] / GIB:.1f} of {outcome['usable'] / GIB:.1f} GiB "
                f"({outcome['peak'] / outcome['usable']:.0%}); {layout}; {outcome['stage']} stage; "
                f"{outcome['largest']} dominate ({terms} GiB)"
                + ("; a published run" if is_published(record, plan, published) else "")
            )


if __name__ == "__main__":
    main()
