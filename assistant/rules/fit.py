"""The fit hook: whether a plan fits in GPU memory. The estimator issue replaces the body."""

from __future__ import annotations

from typing import Literal

from assistant.records import Cluster, ModelArch, Plan, RecipeRecord, Record

FitStatus = Literal["fits", "does-not-fit", "unknown"]


class FitVerdict(Record):
    status: FitStatus
    peak_bytes: float | None = None
    usable_bytes: float | None = None
    margin_bytes: float | None = None
    note: str | None = None


def estimate_fit(record: RecipeRecord, arch: ModelArch | None, plan: Plan, cluster: Cluster) -> FitVerdict:
    """Memory verdict for one plan; 'unknown' until the estimator is wired in (keep this signature)."""
    return FitVerdict(status="unknown", note="memory estimator not available")
