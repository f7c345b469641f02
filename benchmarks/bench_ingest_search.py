"""Benchmark: full ingest of the bundled knowledge base into a fresh index, then warm search latency.

Targets (issue 22, 2 cores): ingest from an empty data directory <= 30 s (this includes exporting the model
to ONNX, which a later ingest reuses; the figure with the export already made is printed too), re-ingest
with nothing changed <= 1 s; warm search p50 <= 100 ms. Prints numbers and the load, next to a yardstick
from the same run (the cold `plan` process, median of 3, as bench_cold.py measures it), so figures from a
shared machine can be compared; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.retrieval import HybridRetriever  # noqa: E402
from assistant.settings import Settings  # noqa: E402
from benchmarks.bench_cold import PLAN, ROOT, seconds  # noqa: E402
from ingest.build import ingest  # noqa: E402

QUERIES = [
    "CUDA graph accepts only Tensor inputs",
    "MoE 显存溢出",
    "how many GPUs for qwen3 235b peft",
    "两机十六卡怎么启动",
    "tensor_model_parallel_size must divide num_query_groups",
    "长上下文 128K 需要 CP 吗",
    "global batch size micro batch size gradient accumulation",
    "PEFT 需要检查点",
]


def cold_plan_seconds(runs: int = 3) -> float:
    return statistics.median(seconds(PLAN, {**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(runs))


def main() -> None:
    plan_before = cold_plan_seconds()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as again_tmp:
        settings = Settings(data_dir=Path(tmp))
        load = os.getloadavg()[0]
        started, cpu = time.perf_counter(), time.process_time()
        report, _ = ingest(settings, [])
        ingest_s, ingest_cpu = time.perf_counter() - started, time.process_time() - cpu
        again, _ = ingest(settings, [])
        export_dir = settings.resolved_embedding_export_dir()
        reused = Settings(data_dir=Path(again_tmp), embedding_export_dir=export_dir)
        started = time.perf_counter()
        ingest(reused, [])
        with_export_s = time.perf_counter() - started
        print(
            f"ingest from empty: {report.total} chunks in {ingest_s:.1f} s, {ingest_cpu:.0f} CPU s "
            f"(target <= 30 s); with the export already made {with_export_s:.1f} s; "
            f"re-ingest {again.seconds:.2f} s with {again.changed} changed (target <= 1 s); "
            f"load average {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        plan = statistics.median([plan_before, cold_plan_seconds()])
        print(
            f"yardstick, same run: cold `plan` {plan:.2f} s (before and after the ingests); "
            f"ingest from empty = {ingest_s / plan:.0f}x plan"
        )
        started = time.perf_counter()
        retriever = HybridRetriever(settings)
        retriever.search(QUERIES[0])
        print(f"retriever cold start + first query: {time.perf_counter() - started:.2f} s")
        latencies = []
        for _ in range(5):
            for query in QUERIES:
                t0 = time.perf_counter()
                retriever.search(query, k=5)
                latencies.append((time.perf_counter() - t0) * 1000)
        latencies.sort()
        p95 = latencies[int(0.95 * (len(latencies) - 1))]
        print(
            f"warm search over {len(latencies)} queries: p50 {statistics.median(latencies):.1f} ms "
            f"(target <= 100 ms), p95 {p95:.1f} ms"
        )


if __name__ == "__main__":
    main()
