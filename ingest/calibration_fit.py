"""Fit the estimator constants on published measurements and score them (pure: rows are passed in).

Offline only (scipy): ingest/calibration.py, the calibration tests and benchmarks use it; the runtime
estimators in assistant/estimate/ read the fitted constants, never this module.

Throughput: efficiencies are fitted on Megatron-Bridge perf-table rows of releases up to 26.04.01 only;
newer releases are the held-out set. Memory: fixed overheads are fitted on A100/H100 measured peaks only;
GB200 peaks are held out.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import product
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from assistant.estimate.features import RunFeatures
from assistant.estimate.hardware import GpuSpec
from assistant.estimate.memory import MemoryOverheads, estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import Calibration, TrackRecord, estimate_throughput, precision_key
from assistant.records import ModelArch, Plan

LAST_TRAINING_RELEASE = (26, 4, 1)
# Name parts of functional tests whose peak is not a plain pretraining step (RL, inference, distillation,
# export, hybrids) or that use a memory feature the estimator does not model (activation offloading).
NOT_PRETRAINING = (
    "offloading",
    "grpo",
    "rl",
    "inference",
    "distill",
    "modelopt",
    "export",
    "hybrid",
    "mamba",
    "bert",
    "t5",
    "retro",
    "multimodal",
    "llava",
    "vlm",
    "dynamic",
    "sft",
    "reshard",
    "convert",
)
GLOBAL_KNOBS = (
    "expert_gemm_ratio",
    "expert_gemm_ratio_lowp",
    "attention_efficiency",
    "gemm_size_half",
    "expert_tokens_half",
    "elementwise_passes",
    "tp_exposed",
    "dp_exposed",
    "pp_exposed",
    "microbatch_overhead_s",
    "cp_exposed",
    "layer_host_s",
    "moe_host_factor",
    "partial_graph_host",
    "ep_overlap_exposed",
    "quant_passes",
)
KNOB_BOUNDS = {
    "expert_gemm_ratio": (0.1, 1.5),
    "expert_gemm_ratio_lowp": (0.1, 1.5),
    "attention_efficiency": (0.1, 1.0),
    "gemm_size_half": (1.0, 4096.0),
    "expert_tokens_half": (1.0, 16384.0),
    "elementwise_passes": (0.0, 40.0),
    "tp_exposed": (0.0, 1.0),
    "ep_exposed": (0.0, 1.0),
    "dp_exposed": (0.0, 1.0),
    "pp_exposed": (0.0, 1.0),
    "microbatch_overhead_s": (0.0, 0.02),
    "cp_exposed": (0.0, 1.0),
    "layer_host_s": (0.0, 0.005),
    "moe_host_factor": (1.0, 20.0),
    "partial_graph_host": (0.0, 1.0),
    "ep_overlap_exposed": (0.0, 1.0),
    "quant_passes": (0.0, 20.0),
}


def release_tuple(release: str) -> tuple[int, ...]:
    parts = tuple(int(x) for x in release.split("."))
    return parts + (0,) * (3 - len(parts))


def is_training_row(row: dict[str, Any]) -> bool:
    return release_tuple(row["release"]) <= LAST_TRAINING_RELEASE


def plan_of_row(row: dict[str, Any]) -> Plan:
    tp = row["tp"]
    return Plan.sized(
        num_gpus=row["num_gpus"],
        tp=tp,
        pp=row["pp"],
        cp=row["cp"],
        mbs=row["mbs"],
        gbs=row["gbs"],
        vp=row["vp"],
        ep=row["ep"],
        etp=1 if row["ep"] > 1 else tp,
        sp=tp > 1,
    )


# Bridge's LoRA performance runs adapt only linear_qkv (scripts/performance/configs/llama/
# llama3_llm_finetune.py in v0.5.1, perf_recipes in v0.6.0: `cfg.peft.target_modules = ["linear_qkv"]`).
PERF_LORA_TARGETS = ("linear_qkv",)


def row_features(row: dict[str, Any]) -> RunFeatures | None:
    """The performance features a row ran with: its release recipe's (None when no recipe matched), with
    the LoRA targets of Bridge's LoRA performance runs on a LoRA row."""
    features = RunFeatures(**row["features"]) if row.get("features") else None
    if row.get("mode") == "peft":
        features = (features or RunFeatures()).model_copy(update={"lora_targets": PERF_LORA_TARGETS})
    return features


def predict_tokens(row: dict[str, Any], arch: ModelArch, hw: GpuSpec, cal: Calibration) -> float:
    run = RunSettings(
        seq_length=row["seq_length"],
        mode=row["mode"],
        precision=row["precision"],
        fsdp=bool(row.get("fsdp")),
        gpus_per_node=8,
        features=row_features(row) or RunFeatures(),
        recompute=row.get("recompute"),
        recompute_modules=row.get("recompute_modules"),
        offload_layers=row.get("offload_layers") or 0,
    )
    result = estimate_throughput(arch, plan_of_row(row), hw, run, calibration=cal)
    return result.tokens_per_sec_per_gpu


def usable_rows(rows: Iterable[dict], archs: dict[str, ModelArch], hw: dict[str, GpuSpec]) -> list[dict]:
    """Rows the estimator can model: a known architecture and a layout that divides the GPU count."""
    out = []
    for row in rows:
        if row["model"] not in archs or row["gpu"] not in hw or not row.get("tokens_per_sec_per_gpu"):
            continue
        if row["num_gpus"] % (row["tp"] * row["pp"] * row["cp"]):
            continue
        dp = row["num_gpus"] // (row["tp"] * row["pp"] * row["cp"])
        if row["gbs"] % (row["mbs"] * dp):
            continue
        out.append(row)
    return out


LARGE_CASE_BYTES = 10 * 1024**3
PRIOR_WEIGHT = 0.1
RECENCY_DECAY = 0.5  # default; ingest/calibration.py picks one of DECAY_CHOICES with select_recency_decay
VALIDATION_SPLIT = ((26, 2, 1), (26, 4, 1))
DECAY_CHOICES = (1.0, 0.7, 0.5, 0.3)
CONFIG_FIELDS = (
    "model",
    "mode",
    "gpu",
    "precision",
    "num_gpus",
    "gbs",
    "mbs",
    "seq_length",
    "fsdp",
    "tp",
    "pp",
    "cp",
    "vp",
    "ep",
)


def latest_per_config(rows: list[dict]) -> list[dict]:
    """Keep the newest measurement of each configuration: older releases of the same configuration describe
    software that has since changed, so they would pull the efficiencies toward stale numbers."""
    latest: dict[tuple, dict] = {}
    for row in rows:
        key = tuple(row[f] for f in CONFIG_FIELDS)
        if key not in latest or release_tuple(row["release"]) > release_tuple(latest[key]["release"]):
            latest[key] = row
    return list(latest.values())


def track_records(
    rows: list[dict], archs: dict[str, ModelArch], hw: dict[str, GpuSpec], cal: Calibration
) -> list[TrackRecord]:
    """Per model and precision, the fitted estimate against the newest published run of each
    configuration, fitted or held out; rows the source table footnotes are left out, as in the benchmark."""
    errors: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in latest_per_config(usable_rows(rows, archs, hw)):
        if row.get("footnotes"):
            continue
        arch = archs[row["model"]]
        predicted = predict_tokens(row, arch, hw[row["gpu"]], cal)
        errors[(arch.hf_model_id, precision_key(row["precision"]))].append(
            predicted / row["tokens_per_sec_per_gpu"] - 1
        )
    return [
        TrackRecord(
            hf_model_id=model,
            precision=precision,
            runs=len(found),
            mean_signed_error=round(statistics.fmean(found), 4),
            mape=round(statistics.fmean(abs(e) for e in found), 4),
        )
        for (model, precision), found in sorted(errors.items())
    ]


def _calibration_from_vector(x: np.ndarray, keys: list[str]) -> Calibration:
    knobs = dict(zip(GLOBAL_KNOBS, x[: len(GLOBAL_KNOBS)], strict=True))
    effs = dict(zip(keys, x[len(GLOBAL_KNOBS) :], strict=True))
    return Calibration(gemm_efficiency=effs, **{k: float(v) for k, v in knobs.items()})


def fit_throughput(
    rows: list[dict],
    archs: dict[str, ModelArch],
    hw: dict[str, GpuSpec],
    *,
    last_release: tuple[int, ...] = LAST_TRAINING_RELEASE,
    recency_decay: float = RECENCY_DECAY,
) -> Calibration:
    """Least squares on log(predicted / published tokens/s/GPU) over the releases up to `last_release`."""
    train = latest_per_config(
        [r for r in usable_rows(rows, archs, hw) if release_tuple(r["release"]) <= last_release]
    )
    keys = sorted({f"{r['gpu']}:{precision_key(r['precision'])}" for r in train})
    prior = Calibration()
    x0 = [getattr(prior, k) for k in GLOBAL_KNOBS] + [prior.default_gemm_efficiency] * len(keys)
    lower = [KNOB_BOUNDS[k][0] for k in GLOBAL_KNOBS] + [0.05] * len(keys)
    upper = [KNOB_BOUNDS[k][1] for k in GLOBAL_KNOBS] + [1.0] * len(keys)

    priors = np.array([getattr(prior, k) for k in GLOBAL_KNOBS])
    releases = sorted({release_tuple(r["release"]) for r in train})
    # Newer releases describe the software users run now: each older release counts recency_decay times less.
    weights = [
        recency_decay ** ((len(releases) - 1 - releases.index(release_tuple(r["release"]))) / 2)
        for r in train
    ]

    def residuals(x: np.ndarray) -> np.ndarray:
        cal = _calibration_from_vector(x, keys)
        errors = [
            weight
            * math.log(predict_tokens(r, archs[r["model"]], hw[r["gpu"]], cal) / r["tokens_per_sec_per_gpu"])
            for r, weight in zip(train, weights, strict=True)
        ]
        # A weak pull toward the physical priors keeps knobs the rows cannot separate from drifting to bounds.
        pull = PRIOR_WEIGHT * (x[: len(GLOBAL_KNOBS)] - priors) / priors
        return np.concatenate([errors, pull])

    result = least_squares(
        residuals, np.clip(x0, lower, upper), bounds=(lower, upper), loss="soft_l1", f_scale=0.1, max_nfev=400
    )
    cal = _calibration_from_vector(result.x, keys)
    effs = {k: round(v, 4) for k, v in cal.gemm_efficiency.items()}
    knobs = {k: round(float(getattr(cal, k)), 4) for k in GLOBAL_KNOBS}
    errors = [
        abs(predict_tokens(r, archs[r["model"]], hw[r["gpu"]], cal) / r["tokens_per_sec_per_gpu"] - 1)
        for r in train
    ]
    return Calibration(
        gemm_efficiency=effs,
        **knobs,
        median_error=round(statistics.median(errors), 4),
        source=f"fitted on {len(train)} Megatron-Bridge perf rows of releases <= "
        f"{'.'.join(f'{x:02d}' for x in last_release)}, recency decay {recency_decay}",
    )


def select_recency_decay(rows: list[dict], archs: dict[str, ModelArch], hw: dict[str, GpuSpec]) -> dict:
    """Pick the recency decay without touching the held-out releases: fit on <= 26.02.01, score on 26.04 and
    26.04.01 (the last training releases), return {decay: validation MAPE}."""
    fit_until, validate_until = VALIDATION_SPLIT
    usable = usable_rows(rows, archs, hw)
    val = [r for r in usable if fit_until < release_tuple(r["release"]) <= validate_until]
    scores = {}
    for decay in DECAY_CHOICES:
        cal = fit_throughput(rows, archs, hw, last_release=fit_until, recency_decay=decay)
        errors = [
            abs(predict_tokens(r, archs[r["model"]], hw[r["gpu"]], cal) / r["tokens_per_sec_per_gpu"] - 1)
            for r in val
        ]
        scores[decay] = statistics.fmean(errors)
    return scores


def error_table(
    rows: list[dict], predict: Callable[[dict], float], key: Callable[[dict], str]
) -> dict[str, dict]:
    """Mean absolute percentage error and row count per group."""
    groups: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(abs(predict(row) / row["tokens_per_sec_per_gpu"] - 1))
    table = {k: {"mape": statistics.fmean(v), "n": len(v)} for k, v in sorted(groups.items())}
    every = [e for v in groups.values() for e in v]
    if every:
        table["ALL"] = {"mape": statistics.fmean(every), "n": len(every)}
    return table


# ---------------------------------------------------------------- memory


def arch_from_megatron_args(args: dict[str, Any], name: str) -> ModelArch | None:
    """A ModelArch from Megatron-LM command-line arguments of a functional test (None if not a GPT model)."""
    if "num-layers" not in args or "hidden-size" not in args:
        return None
    heads = int(args["num-attention-heads"])
    groups = int(args["num-query-groups"]) if args.get("group-query-attention") else None
    vocab = args.get("vocab-size")
    if vocab is None:
        vocab = 50257 if "GPT2" in str(args.get("tokenizer-type", "GPT2BPETokenizer")) else None
    if vocab is None:
        return None
    return ModelArch(
        hf_model_id=name,
        family="megatron-test",
        num_layers=int(args["num-layers"]),
        hidden_size=int(args["hidden-size"]),
        ffn_hidden_size=args.get("ffn-hidden-size"),
        num_attention_heads=heads,
        num_query_groups=groups,
        kv_channels=args.get("kv-channels"),
        vocab_size=int(vocab),
        tied_embeddings=not args.get("untie-embeddings-and-output-weights", False),
        gated_linear_unit=bool(args.get("swiglu", False)),
        num_moe_experts=args.get("num-experts"),
        moe_router_topk=args.get("moe-router-topk"),
        moe_ffn_hidden_size=args.get("moe-ffn-hidden-size"),
        moe_shared_expert_intermediate_size=args.get("moe-shared-expert-intermediate-size"),
        multi_latent_attention=bool(args.get("multi-latent-attention", False)),
        q_lora_rank=args.get("q-lora-rank"),
        kv_lora_rank=args.get("kv-lora-rank"),
        qk_head_dim=args.get("qk-head-dim"),
        qk_pos_emb_head_dim=args.get("qk-pos-emb-head-dim"),
        v_head_dim=args.get("v-head-dim"),
        source=name,
    )


def golden_case(row: dict[str, Any], num_gpus: int = 8) -> dict[str, Any] | None:
    """The estimate_memory arguments of one Megatron-LM golden row, or None when it uses features we skip."""
    args = row["args"]
    if set(re.split(r"[_/]", row["test"])) & set(NOT_PRETRAINING):
        return None
    skip = (
        "fp8-param-gather",
        "cpu-offloading",
        "use-torch-fsdp2",
        "use-megatron-fsdp",
        "num-distributed-optimizer-instances",
        "hybrid-override-pattern",
        "optimizer-cpu-offload",
    )
    if any(args.get(k) for k in skip) or str(args.get("optimizer", "adam")) != "adam":
        return None
    arch = arch_from_megatron_args(args, row["test"])
    if arch is None:
        return None
    if "moe-layer-freq" in args:
        freq = args["moe-layer-freq"]
        pattern = re.fullmatch(r"\(?\[0\]\*(\d+)\+\[1\]\*(\d+)\)?", str(freq).replace(" ", ""))
        if isinstance(freq, int):
            arch = arch.model_copy(update={"moe_layer_freq": freq})
        elif pattern and int(pattern.group(1)) + int(pattern.group(2)) == arch.num_layers:
            arch = arch.model_copy(update={"moe_first_k_dense": int(pattern.group(1))})
        else:
            return None
    tp, pp = int(args.get("tensor-model-parallel-size", 1)), int(args.get("pipeline-model-parallel-size", 1))
    cp = int(args.get("context-parallel-size", 1))
    if num_gpus % (tp * pp * cp):
        return None
    dp = num_gpus // (tp * pp * cp)
    mbs = int(args.get("micro-batch-size", 1))
    gbs = int(args.get("global-batch-size", mbs * dp))
    if gbs % (mbs * dp):
        return None
    vp = None
    if args.get("num-layers-per-virtual-pipeline-stage"):
        vp = arch.num_layers // (pp * int(args["num-layers-per-virtual-pipeline-stage"]))
    elif args.get("virtual-pipeline-model-parallel-size") or args.get("num-virtual-stages-per-pipeline-rank"):
        vp = int(
            args.get("virtual-pipeline-model-parallel-size") or args["num-virtual-stages-per-pipeline-rank"]
        )
    ep = int(args.get("expert-model-parallel-size", 1))
    etp = args.get("expert-tensor-parallel-size")
    recompute = args.get("recompute-granularity")
    plan = Plan.sized(
        num_gpus=num_gpus,
        tp=tp,
        pp=pp,
        cp=cp,
        mbs=mbs,
        gbs=gbs,
        vp=vp if vp and vp > 1 else None,
        ep=ep,
        etp=int(etp) if etp else None,
        sp=bool(args.get("sequence-parallel")),
    )
    precision = "fp8" if args.get("fp8-format") else "bf16"
    return {
        "arch": arch,
        "layout": plan,
        "seq_length": int(args.get("seq-length", 1024)),
        "precision": precision,
        "recompute": recompute if recompute in ("full", "selective") else None,
        "recompute_num_layers": args.get("recompute-num-layers") if recompute == "full" else None,
        "recompute_method": args.get("recompute-method") if recompute == "full" else None,
        "distributed_optimizer": bool(args.get("use-distributed-optimizer")),
        "grad_reduce_in_fp32": True,
        # --transformer-impl local builds Megatron's own DotProductAttention, which is unfused as well.
        "unfused_attention": args.get("attention-backend") in ("unfused", "local")
        or args.get("transformer-impl") == "local",
        # Unset: TransformerConfig's defaults, which Megatron-LM's arguments take (0.1 each).
        "attention_dropout": float(args.get("attention-dropout", 0.1)),
        "hidden_dropout": float(args.get("hidden-dropout", 0.1)),
        "mtp_layers": int(args.get("mtp-num-layers") or 0),
        "fp8_param": bool(args.get("fp8-param-gather")) and precision == "fp8",
        "te_cross_entropy": bool(args.get("cross-entropy-loss-fusion"))
        and args.get("cross-entropy-fusion-impl") == "te",
    }


def predict_allocated(case: dict[str, Any], hw: GpuSpec, ov: MemoryOverheads, stage: str = "last") -> float:
    """Max allocated bytes of the stage the measurement was taken on."""
    run = RunSettings(
        seq_length=case["seq_length"],
        precision=case["precision"],
        recompute=case["recompute"],
        recompute_num_layers=case.get("recompute_num_layers"),
        recompute_method=case.get("recompute_method"),
        fp8_param=case.get("fp8_param", False),
        recompute_modules=case.get("recompute_modules"),
        mode=case.get("mode", "pretrain"),
        distributed_optimizer=case["distributed_optimizer"],
        grad_reduce_in_fp32=case["grad_reduce_in_fp32"],
        unfused_attention=case.get("unfused_attention", False),
        attention_dropout=case.get("attention_dropout", 0.0),
        hidden_dropout=case.get("hidden_dropout", 0.0),
        features=RunFeatures(
            mtp_layers=case.get("mtp_layers", 0), te_cross_entropy=case.get("te_cross_entropy", False)
        ),
    )
    est = estimate_memory(case["arch"], case["layout"], hw, run, overheads=ov, stage=stage)  # type: ignore[arg-type]
    return est.allocated_bytes


def distinct_cases(cases: list[tuple[dict, GpuSpec, float, str]]) -> list[tuple[dict, GpuSpec, float, str]]:
    """One case per distinct (configuration, GPU), measured = median over its tests: Megatron-LM runs the same
    small model in dozens of variants (resume, checkpoint format, data loader), which would otherwise
    dominate."""
    groups: dict[str, list[tuple[dict, GpuSpec, float, str]]] = defaultdict(list)
    for case in cases:
        c, hw, _, stage = case
        signature = repr(
            (
                c["arch"].model_dump(exclude={"hf_model_id", "source"}),
                c["layout"].to_json(),
                c["seq_length"],
                c["precision"],
                c["recompute"],
                c.get("recompute_num_layers"),
                c.get("recompute_method"),
                c.get("fp8_param"),
                c.get("unfused_attention"),
                c.get("attention_dropout"),
                c.get("hidden_dropout"),
                c.get("mtp_layers"),
                c.get("te_cross_entropy"),
                c.get("recompute_modules"),
                c.get("mode"),
                c["distributed_optimizer"],
                hw.key,
                stage,
            )
        )
        groups[signature].append(case)
    return [(g[0][0], g[0][1], statistics.median(x[2] for x in g), g[0][3]) for g in groups.values()]


def fit_memory(cases: list[tuple[dict, GpuSpec, float, str]]) -> MemoryOverheads:
    """Fit the workspace constant, activation scale and logits bytes on (case, gpu, measured bytes, stage)
    tuples over a grid. The score is the mean of two medians of the absolute relative error: over all
    distinct configurations, and over those above 10 GiB, so the many tiny test models do not decide alone
    how activations of real-sized runs are scaled."""
    cases = distinct_cases(cases)
    large = [c for c in cases if c[2] >= LARGE_CASE_BYTES]
    best: tuple[float, MemoryOverheads] | None = None
    for scale, workspace, logits in product(
        np.arange(0.7, 1.41, 0.05), np.arange(0.0, 2.01, 0.25), (4, 6, 8, 10)
    ):
        ov = MemoryOverheads(
            workspace_gib=round(float(workspace), 3),
            activation_scale=round(float(scale), 3),
            logits_bytes_per_element=float(logits),
        )
        errors = [abs(predict_allocated(c, hw, ov, stage) / measured - 1) for c, hw, measured, stage in cases]
        big = [abs(predict_allocated(c, hw, ov, stage) / measured - 1) for c, hw, measured, stage in large]
        score = statistics.median(errors) + (statistics.median(big) if big else 0.0)
        if best is None or score < best[0]:
            best = (score, ov)
    assert best is not None
    return best[1].model_copy(
        update={
            "source": f"fitted on {len(cases)} distinct A100/H100 measured configurations "
            f"({len(large)} above 10 GiB)"
        }
    )
