"""The measured memory rows through the path a user's `autorecipe estimate --spec` takes.

Every measured peak in knowledge_base/calibration/memory_rows.json (Megatron-LM functional tests' max
allocated bytes, Bridge's documented Llama 3 70B runs) is written as a spec file with Megatron field names,
estimated by the CLI's own code, and its `allocated_bytes` compared with the measured `max_allocated`: of
the stage the row was measured on (the estimate's stage_allocated_bytes; Megatron's tests log the last
rank), and of the busiest stage, which is what the fit verdict uses. GB200 rows and Megatron-LM's MoE test
family are held out of the memory fit; they are listed one by one.
Usage: python benchmarks/bench_estimate_spec_rows.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from assistant.estimate.hardware import GIB
from assistant.kb import knowledge_base
from assistant.models import TRANSFORMER_ARCH_FIELDS
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration import memory_cases
from ui.commands.estimate import parse_args, run_estimate

HELD_OUT_GPU = "gb200"
# Megatron-LM's MoE functional tests: left out of the memory fit (ingest/calibration.py) as a model family
HELD_OUT_FAMILY = "megatron:moe/"
LARGE = 10 * GIB


def spec_of(case: dict, gpu: str) -> dict:
    """The spec a user would write for this run (Megatron TransformerConfig names)."""
    arch, plan = case["arch"], case["layout"]
    model = {k: getattr(arch, k) for k in TRANSFORMER_ARCH_FIELDS if getattr(arch, k, None) is not None}
    if arch.num_moe_experts:
        first = arch.moe_first_k_dense or 0
        freq = arch.moe_layer_freq or 1
        model["moe_layer_freq"] = [int(i >= first and i % freq == 0) for i in range(arch.num_layers)]
    model.update(
        seq_length=case["seq_length"],
        tensor_model_parallel_size=plan.tp, pipeline_model_parallel_size=plan.pp,
        virtual_pipeline_model_parallel_size=plan.vp, context_parallel_size=plan.cp,
        expert_model_parallel_size=plan.ep or 1, expert_tensor_parallel_size=plan.etp,
        sequence_parallel=plan.sp, recompute_granularity=case["recompute"],
        recompute_method=case.get("recompute_method"), recompute_num_layers=case.get("recompute_num_layers"),
        recompute_modules=case.get("recompute_modules"), mtp_num_layers=case.get("mtp_layers") or None,
        untie_embeddings_and_output_weights=not arch.tied_embeddings,
        attention_backend="unfused" if case.get("unfused_attention") else None,
        cross_entropy_loss_fusion=bool(case.get("te_cross_entropy")),
        cross_entropy_fusion_impl="te" if case.get("te_cross_entropy") else None,
        fp8_param=bool(case.get("fp8_param")),
        # Megatron-LM rows carry their dropout; Bridge's Llama providers set both to 0
        attention_dropout=case.get("attention_dropout", 0.0), hidden_dropout=case.get("hidden_dropout", 0.0),
    )  # fmt: skip
    return {
        "name": arch.hf_model_id,
        "mode": case.get("mode", "pretrain"),
        "mixed_precision": case["precision"],
        "model": {k: v for k, v in model.items() if v is not None},
        "train": {"micro_batch_size": plan.mbs, "global_batch_size": plan.gbs},
        "ddp": {"grad_reduce_in_fp32": case["grad_reduce_in_fp32"],
                "use_distributed_optimizer": case["distributed_optimizer"]},
        "cluster": {"gpus": plan.num_gpus, "gpu_type": gpu},
    }  # fmt: skip


def main() -> None:
    hw = knowledge_base().hardware
    cases = memory_cases(KNOWLEDGE_BASE / "calibration", hw)
    measured_stage, busiest, failed = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for number, item in enumerate(cases):
            path = Path(tmp) / f"{number}.json"
            path.write_text(json.dumps(spec_of(item["case"], item["gpu"])), encoding="utf-8")
            try:
                memory = run_estimate(parse_args(["--spec", str(path)]))["memory"]
            except Exception as error:  # noqa: BLE001 - a row the spec path rejects is counted, not hidden
                failed.append((item, str(error)))
                continue
            # PP = 1 has one stage, named "first"; Megatron's rows were measured on the last rank
            on_stage = memory["stage_allocated_bytes"].get(item["stage"], memory["allocated_bytes"])
            measured_stage.append((item, on_stage / item["measured"] - 1))
            busiest.append((item, memory["allocated_bytes"] / item["measured"] - 1))

    def median(rows: list) -> str:
        return (
            f"{100 * statistics.median(abs(e) for _, e in rows):.1f}% over {len(rows)} rows" if rows else "-"
        )

    def held_out(item: dict) -> bool:
        return item["gpu"] == HELD_OUT_GPU or item["name"].startswith(HELD_OUT_FAMILY)

    print(f"measured rows through --spec: {len(measured_stage)} estimated, {len(failed)} rejected")
    print("  allocated_bytes of the stage the row was measured on (stage_allocated_bytes):")
    print(f"    all rows: median |error| {median(measured_stage)}")
    print(
        f"    rows peaking at >= 10 GiB: {median([x for x in measured_stage if x[0]['measured'] >= LARGE])}"
    )
    print(f"    fitted rows: {median([x for x in measured_stage if not held_out(x[0])])}; "
          f"held out: {median([x for x in measured_stage if held_out(x[0])])}")  # fmt: skip
    print("  allocated_bytes of the busiest stage (the figure the fit verdict uses):")
    print(f"    all rows: median |error| {median(busiest)}")
    print(f"    rows peaking at >= 10 GiB: {median([x for x in busiest if x[0]['measured'] >= LARGE])}")
    for reason in sorted({m.split(":")[0][:80] for _, m in failed})[:5]:
        print(f"  rejected: {reason}")
    for title, keep in (
        (f"held-out GPU {HELD_OUT_GPU}", lambda item: item["gpu"] == HELD_OUT_GPU),
        (f"held-out model family {HELD_OUT_FAMILY!r} on the fitted GPUs",
         lambda item: item["gpu"] != HELD_OUT_GPU and item["name"].startswith(HELD_OUT_FAMILY)),
    ):  # fmt: skip
        rows = [x for x in measured_stage if keep(x[0])]
        print(f"\n{title}: median |error| {median(rows)} (identical rows counted once, xN)")
        counts = Counter((item["name"], round(item["measured"]), round(error, 4)) for item, error in rows)
        for (name, measured, error), n in sorted(counts.items(), key=lambda x: -abs(x[0][2])):
            print(
                f"  {100 * error:+6.1f}%  {name}: measured {measured / GIB:.2f} GiB"
                + (f" x{n}" if n > 1 else "")
            )


if __name__ == "__main__":
    main()
