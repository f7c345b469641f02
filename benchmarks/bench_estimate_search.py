"""Print how often the parallelism search ranks the published layout in its top 5, and how long it takes.

For every distinct configuration in Megatron-Bridge's performance tables with a modelled architecture, run
search_layouts on the same model, GPU count, GPU type, precision, sequence length and global batch, with the
perf recipes' bf16 gradient reduction, and check whether the published (TP, PP, CP, EP, Megatron-FSDP or not)
is among the top 5 (and, stricter, the published VP too); the top 3 and top 10 rates are printed too. The
search runs under the performance features (CUDA graphs, MoE all-to-all overlap, FP8 attention, fused expert
MLP) of the row's release recipe.
Timing: the search on 1,024 GPUs for three shapes.
Usage: python benchmarks/bench_estimate_search.py
"""

from __future__ import annotations

import json
import time
from collections import defaultdict

from assistant.estimate.features import RunFeatures
from assistant.estimate.memory import estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.kb import knowledge_base
from assistant.planning.search import is_valid_layout, recompute_options, search_layouts
from assistant.records import Cluster
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration import load_archs
from ingest.calibration_fit import latest_per_config, plan_of_row, row_features, usable_rows

CALIBRATION = KNOWLEDGE_BASE / "calibration"
TOP_K = 5


def hit_rate() -> None:
    hw = knowledge_base().hardware
    archs = load_archs(CALIBRATION)
    rows = json.loads((CALIBRATION / "perf_rows.json").read_text())["rows"]
    configs = latest_per_config(usable_rows(rows, archs, hw))
    hits = strict = rejected = 0
    ranks: list[int | None] = []
    gaps: list[float] = []
    by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    slowest = 0.0
    for row in configs:
        start = time.perf_counter()
        ranked = search_layouts(
            archs[row["model"]], Cluster(num_gpus=row["num_gpus"], gpu_type=row["gpu"]),
            seq_length=row["seq_length"], global_batch_size=row["gbs"], mode=row["mode"],
            precision=row["precision"], top_k=10_000, grad_reduce_in_fp32=False,
            features=row_features(row), kb=knowledge_base(),
        )  # fmt: skip
        slowest = max(slowest, time.perf_counter() - start)
        published = (row["tp"], row["pp"], row["cp"], row["ep"], bool(row["fsdp"]))
        layouts = [(r.plan.tp, r.plan.pp, r.plan.cp, r.plan.ep, r.fsdp) for r in ranked]
        rank = layouts.index(published) + 1 if published in layouts else None
        ranks.append(rank)
        hit = rank is not None and rank <= TOP_K
        hits += hit
        strict += hit and ranked[layouts.index(published)].plan.vp == row["vp"]
        by_model[row["model"]][0] += hit
        by_model[row["model"]][1] += 1
        where = f"rank {rank}" if rank else "absent"
        if rank is None and not is_valid_layout(
            plan_of_row(row), archs[row["model"]], Cluster(num_gpus=row["num_gpus"], gpu_type=row["gpu"]),
            row["seq_length"], precision=row["precision"], gpu=hw[row["gpu"]],
        ):  # fmt: skip
            where = "invalid"
            rejected += 1
        own = published_estimate(row, archs[row["model"]], hw[row["gpu"]])
        if ranked and own:
            gaps.append(1 - own / ranked[0].throughput.tokens_per_sec_per_gpu)
        print(f"  {where:7s} {row['release']:9s} {row['model']:16s} {row['gpu']:6s} {row['precision']:8s} "
              f"{row['num_gpus']:5d} GPUs published TP{row['tp']} PP{row['pp']} CP{row['cp']} EP{row['ep']} "
              f"VP{row['vp']}{' FSDP' if row['fsdp'] else ''}")  # fmt: skip
    n = len(configs)
    print(
        f"\npublished (TP, PP, CP, EP, FSDP) in our top {TOP_K}: {hits}/{n} = {hits / n:.1%} "
        f"(with the same VP too: {strict}/{n} = {strict / n:.0%})"
    )
    top3 = sum(r is not None and r <= 3 for r in ranks)
    print(f"in our top 3: {top3}/{n} = {top3 / n:.1%}")
    top10 = sum(r is not None and r <= 10 for r in ranks)
    found = sorted(r for r in ranks if r is not None)
    print(
        f"in our top 10: {top10}/{n} = {top10 / n:.0%}; median rank {found[len(found) // 2]} of "
        f"the distinct layouts that fit; not among them at all: {ranks.count(None)}"
    )
    valid = n - rejected
    print(
        f'published layouts that Megatron\'s rules reject as written ("invalid" above): {rejected}; '
        f"over the other {valid} rows, in our top {TOP_K}: {hits}/{valid} = {hits / valid:.1%}"
    )
    for model, (h, total) in sorted(by_model.items()):
        print(f"  {model:16s} {h}/{total}")
    print(f"slowest single search over these configurations: {slowest:.2f} s")
    gaps.sort()
    within = sum(g <= 0.05 for g in gaps)
    print(
        f"published layout's own estimate vs our top-1: median {100 * gaps[len(gaps) // 2]:.1f}% slower; "
        f"within 5% of the top for {within}/{len(gaps)} rows"
    )


def published_estimate(row: dict, arch, hw) -> float | None:
    """Estimated tokens/s/GPU of the published layout with the first recompute setting that fits."""
    plan = plan_of_row(row)
    options = {"seq_length": row["seq_length"], "mode": row["mode"], "precision": row["precision"],
               "grad_reduce_in_fp32": False, "fsdp": bool(row["fsdp"])}  # fmt: skip
    for recompute, modules in recompute_options(arch):
        run = RunSettings(recompute=recompute, recompute_modules=modules, **options)
        memory = estimate_memory(arch, plan, hw, run, overheads=knowledge_base().memory_overheads)
        if memory.fits:
            speed_run = run.but(features=row_features(row) or RunFeatures())
            speed = estimate_throughput(arch, plan, hw, speed_run, calibration=knowledge_base().calibration)
            return speed.tokens_per_sec_per_gpu
    return None


def timing() -> None:
    from assistant.models import load_model_arch

    print("\nsearch time on 1,024 GPUs (best of 3):")
    for hf_id, gpu, seq, gbs, precision in (
        ("meta-llama/Meta-Llama-3.1-405B", "h100", 8192, 1536, "fp8_cs"),
        ("meta-llama/Meta-Llama-3-70B", "h100", 8192, 1024, "bf16"),
        ("deepseek-ai/DeepSeek-V3", "gb200", 4096, 8192, "mxfp8"),
    ):
        arch = load_model_arch(hf_id, kb=knowledge_base())
        times = []
        for _ in range(3):
            start = time.perf_counter()
            ranked = search_layouts(arch, Cluster(num_gpus=1024, gpu_type=gpu), seq_length=seq,
                                    global_batch_size=gbs, precision=precision,
                                    kb=knowledge_base())  # fmt: skip
            times.append(time.perf_counter() - start)
        top = ranked[0].plan if ranked else None
        print(
            f"  {hf_id:32s} {gpu:6s} {min(times):.3f} s  top: "
            + (f"TP{top.tp} PP{top.pp} VP{top.vp} CP{top.cp} EP{top.ep} MBS{top.mbs}" if top else "none fits")
        )


if __name__ == "__main__":
    hit_rate()
    timing()
