"""Print the estimators' errors against published measurements (no assertions; numbers for the report).

Throughput: mean absolute percentage error of tokens/s/GPU per GPU type and precision, on the rows the
efficiencies were fitted on (releases <= 26.04.01) and on the held-out releases (26.06, 26.06.01, 26.08).
A persistence baseline shows how much the same configuration's published number moved between releases.
Blind: the rows of a model the fit never sees (Nemotron 3 Super), every release.
Memory: median absolute error of the predicted peak on A100/H100 (fitted) and GB200 (held out), worst cases.
Usage: python benchmarks/bench_estimate_calibration.py
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

from assistant.estimate.throughput import precision_key
from assistant.kb import knowledge_base
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration import load_archs, memory_cases
from ingest.calibration_fit import (
    CONFIG_FIELDS,
    distinct_cases,
    error_table,
    is_training_row,
    predict_allocated,
    predict_tokens,
    release_tuple,
    usable_rows,
)

CALIBRATION = KNOWLEDGE_BASE / "calibration"
# Perf-table models the estimators describe but the fit leaves out, scored blind (archs.json has no entry).
BLIND_MODELS = {
    "nemotron_3_super": "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
    "nemotron_3_ultra": "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
}


def throughput() -> None:
    hw = knowledge_base().hardware
    cal = knowledge_base().calibration
    archs = load_archs(CALIBRATION)
    rows = json.loads((CALIBRATION / "perf_rows.json").read_text())["rows"]
    usable = usable_rows(rows, archs, hw)
    print(
        f"perf rows: {len(rows)} published, {len(usable)} with a modelled architecture "
        f"({len(rows) - len(usable)} left out: hybrid Mamba / unknown architectures)"
    )

    def predict(row: dict) -> float:
        return predict_tokens(row, archs[row["model"]], hw[row["gpu"]], cal)

    def key(row: dict) -> str:
        return f"{row['gpu']}:{precision_key(row['precision'])}"

    train = [r for r in usable if is_training_row(r)]
    held = [r for r in usable if not is_training_row(r)]
    for title, subset in (
        ("calibration (releases <= 26.04.01)", train),
        ("held-out (26.06, 26.06.01, 26.08)", held),
    ):
        print(f"\n{title}: tokens/s/GPU MAPE per GPU:precision")
        for group, stats in error_table(subset, predict, key).items():
            print(f"  {group:14s} {100 * stats['mape']:6.1f}%  n={stats['n']}")
        print("  by model:")
        for group, stats in error_table(subset, predict, lambda r: f"{r['model']}:{r['mode']}").items():
            print(f"  {group:26s} {100 * stats['mape']:6.1f}%  n={stats['n']}")
    noted = [r for r in held if r.get("footnotes")]
    if noted:
        clean = [r for r in held if not r.get("footnotes")]
        stats = error_table(clean, predict, key)["ALL"]
        print(
            f"\nheld-out without the {len(noted)} rows the source table footnotes "
            f"({', '.join(sorted({n for r in noted for n in r['footnotes']}))}): "
            f"MAPE {100 * stats['mape']:.1f}% over {stats['n']} rows"
        )
    persistence(train, held)
    pinned(held, predict, archs)
    blind(rows, hw, cal)


# The committed held-out row list: a row leaves it only with a reason written in the file.
PINNED = CALIBRATION / "heldout_rows.json"
ROW_ID = ("release", "model", "mode", "gpu", "precision", "num_gpus", "tp", "pp", "cp", "ep", "vp", "fsdp")


def pinned(held: list[dict], predict, archs: dict) -> None:
    """Median, mean and max |error| on the pinned held-out rows, split by model kind, GPU and precision."""
    pinned_list = json.loads(PINNED.read_text())
    ids = [tuple(item[f] for f in ROW_ID) for item in pinned_list["rows"]]
    by_id = {tuple(r[f] for f in ROW_ID): r for r in held}
    missing = [i for i in ids if i not in by_id]
    rows = [by_id[i] for i in ids if i in by_id]
    errors = {id(r): abs(predict(r) / r["tokens_per_sec_per_gpu"] - 1) for r in rows}

    def kind(row: dict) -> str:
        arch = archs[row["model"]]
        return "hybrid" if arch.is_hybrid else "MoE" if arch.num_moe_experts else "dense"

    def line(label: str, subset: list[dict]) -> str:
        e = sorted(errors[id(r)] for r in subset)
        return (f"  {label:14s} n={len(e):3d}  mean {100 * statistics.fmean(e):5.1f}%  median "
                f"{100 * statistics.median(e):5.1f}%  max {100 * e[-1]:5.1f}%")  # fmt: skip

    found = f"{len(rows)} of {len(ids)} found" + (f", missing: {missing}" if missing else "")
    print(f"\npinned held-out rows ({PINNED.name}): {found}")
    print(line("ALL (MAPE)", rows))
    for name, group in (("kind", kind), ("gpu", lambda r: r["gpu"]),
                        ("precision", lambda r: precision_key(r["precision"]))):  # fmt: skip
        split: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            split[group(row)].append(row)
        for label, subset in sorted(split.items()):
            print(line(f"{name}={label}", subset))
    for item in pinned_list["removed"]:
        row = by_id.get(tuple(item[f] for f in ROW_ID))
        error = f"{100 * (predict(row) / row['tokens_per_sec_per_gpu'] - 1):+.1f}%" if row else "not found"
        print(f"  removed ({error}): {item['release']} {item['model']} {item['gpu']} {item['precision']} "
              f"{item['num_gpus']} GPUs: {item['reason'][:90]}...")


def blind(rows: list[dict], hw: dict, cal) -> None:
    from assistant.models import load_model_arch

    for model, hf_id in BLIND_MODELS.items():
        arch = load_model_arch(hf_id, kb=knowledge_base())
        subset = [r for r in rows if r["model"] == model and r["gpu"] in hw and r["tokens_per_sec_per_gpu"]]
        predicted = [predict_tokens(r, arch, hw[r["gpu"]], cal) for r in subset]
        errors = [p / r["tokens_per_sec_per_gpu"] - 1 for p, r in zip(predicted, subset, strict=True)]
        if errors:
            mape, signed = statistics.fmean(abs(e) for e in errors), statistics.fmean(errors)
            print(
                f"\nblind ({model}, never fitted, all releases): MAPE {100 * mape:.1f}% over {len(errors)} "
                f"rows, mean signed {100 * signed:+.1f}%"
            )


def persistence(train: list[dict], held: list[dict]) -> None:
    """Error of predicting a held-out row by the newest training-release measurement of the same config."""
    latest: dict[tuple, dict] = {}
    for row in train:
        k = tuple(row[f] for f in CONFIG_FIELDS)
        if k not in latest or release_tuple(row["release"]) > release_tuple(latest[k]["release"]):
            latest[k] = row
    pairs = [
        (r, latest[tuple(r[f] for f in CONFIG_FIELDS)])
        for r in held
        if tuple(r[f] for f in CONFIG_FIELDS) in latest
    ]
    if pairs:
        errors = [
            abs(old["tokens_per_sec_per_gpu"] / new["tokens_per_sec_per_gpu"] - 1) for new, old in pairs
        ]
        print(
            f"\npersistence baseline (same configuration's newest <= 26.04.01 number as the prediction): "
            f"MAPE {100 * statistics.fmean(errors):.1f}% over {len(pairs)} held-out rows"
        )


def memory() -> None:
    hw = knowledge_base().hardware
    ov = knowledge_base().memory_overheads
    cases = memory_cases(CALIBRATION, hw)
    print(f"\nmemory: {len(cases)} measured peaks ({ov.source})")
    errors: list[tuple[float, str, float, float]] = []
    by_gpu: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        predicted = predict_allocated(case["case"], hw[case["gpu"]], ov, case["stage"])
        error = predicted / case["measured"] - 1
        errors.append((error, case["name"], case["measured"], predicted))
        by_gpu[case["gpu"]].append(abs(error))
    for gpu, values in sorted(by_gpu.items()):
        role = "held out" if gpu == "gb200" else "fitted"
        distinct = distinct_cases(
            [(c["case"], hw[c["gpu"]], c["measured"], c["stage"]) for c in cases if c["gpu"] == gpu]
        )
        d_err = [abs(predict_allocated(c, h, ov, st) / m - 1) for c, h, m, st in distinct]
        print(
            f"  {gpu:6s} ({role}): median |error| {100 * statistics.median(values):5.1f}% over {len(values)} "
            f"rows; {100 * statistics.median(d_err):5.1f}% over {len(distinct)} distinct configurations"
        )
    fitted = [abs(e[0]) for e, c in zip(errors, cases, strict=True) if c["gpu"] in {"a100", "h100"}]
    print(f"  all fitted rows (A100 + H100): median |error| {100 * statistics.median(fitted):.1f}% "
          f"over {len(fitted)} rows")  # fmt: skip
    big = [e for e in errors if e[2] >= 10 * 1024**3]
    print(
        f"  runs above 10 GiB: median |error| {100 * statistics.median(abs(e[0]) for e in big):.1f}% "
        f"over {len(big)} rows"
    )
    print("  worst cases:")
    for error, name, measured, predicted in sorted(errors, key=lambda e: -abs(e[0]))[:8]:
        print(
            f"    {100 * error:+6.1f}%  {name}: measured {measured / 1024**3:.2f} GiB, "
            f"predicted {predicted / 1024**3:.2f} GiB"
        )
    print("  runs above 10 GiB:")
    for error, name, measured, predicted in sorted(big, key=lambda e: e[1]):
        print(
            f"    {100 * error:+6.1f}%  {name}: measured {measured / 1024**3:.2f} GiB, "
            f"predicted {predicted / 1024**3:.2f} GiB"
        )


if __name__ == "__main__":
    throughput()
    memory()
