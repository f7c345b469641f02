"""The measured memory rows through the path a user's `autorecipe estimate --spec` takes.

Every measured peak in knowledge_base/calibration/memory_rows.json (Megatron-LM functional tests' max
allocated bytes, Bridge's documented Llama 3 70B runs) is written as a spec file with Megatron field names,
estimated by the CLI's own code, and its `allocated_bytes` compared with the measured `max_allocated`. The
CLI reports the busiest pipeline stage while the Megatron rows were measured on the last rank, which is part
of the error a user sees. GB200 rows are held out of every fit; they are listed one by one.
Usage: python benchmarks/bench_estimate_spec_rows.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from assistant.estimate.hardware import GIB
from assistant.kb import knowledge_base
from assistant.models import TRANSFORMER_ARCH_FIELDS
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration import memory_cases
from ui.commands.estimate import parse_args, run_estimate

HELD_OUT_GPU = "gb200"
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
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, item in enumerate(cases):
            path = Path(tmp) / f"{number}.json"
            path.write_text(json.dumps(spec_of(item["case"], item["gpu"])), encoding="utf-8")
            try:
                out = run_estimate(parse_args(["--spec", str(path)]))
            except Exception as error:  # noqa: BLE001 - a row the spec path rejects is counted, not hidden
                results.append((item, None, str(error)))
                continue
            results.append((item, out["memory"]["allocated_bytes"] / item["measured"] - 1, None))
    scored = [(i, e) for i, e, _ in results if e is not None]
    failed = [(i, m) for i, _, m in results if m is not None]

    def median(rows: list) -> str:
        return (
            f"{100 * statistics.median(abs(e) for _, e in rows):.1f}% over {len(rows)} rows" if rows else "-"
        )

    print(f"measured rows through --spec: {len(scored)} estimated, {len(failed)} rejected by the spec path")
    print(f"  all rows: median |error| of allocated_bytes {median(scored)}")
    print(f"  rows peaking at >= 10 GiB: {median([x for x in scored if x[0]['measured'] >= LARGE])}")
    fitted = [x for x in scored if x[0]["gpu"] != HELD_OUT_GPU]
    held = [x for x in scored if x[0]["gpu"] == HELD_OUT_GPU]
    print(f"  fitted GPUs (A100, H100): {median(fitted)}; held-out {HELD_OUT_GPU}: {median(held)}")
    for reason in sorted({m.split(":")[0][:80] for _, m in failed})[:5]:
        print(f"  rejected: {reason}")
    print(f"\nheld-out {HELD_OUT_GPU} rows:")
    for item, error in sorted(held, key=lambda x: -abs(x[1])):
        print(f"  {100 * error:+6.1f}%  {item['name']}: measured {item['measured'] / GIB:.2f} GiB")


if __name__ == "__main__":
    main()
