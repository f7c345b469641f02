"""Composed answer pieces that a user pastes: override strings must be Hydra literals that parse back."""

from __future__ import annotations

from assistant.compose import changed_overrides
from assistant.planning.search import layout_overrides
from assistant.records import Plan
from assistant.rules.config import parse_overrides
from tests.archs import LLAMA3_70B


def test_suggested_overrides_parse_back_to_the_same_values() -> None:
    plan = Plan.sized(num_gpus=64, tp=4, pp=4, cp=2, mbs=1, gbs=512, vp=5, ep=1, etp=None, sp=True)
    faster = Plan.sized(num_gpus=64, tp=1, pp=1, cp=1, mbs=1, gbs=512, vp=None, ep=1, etp=None, sp=False)
    overrides = layout_overrides(faster, LLAMA3_70B, None, fsdp=True, offload_layers=11)
    text = changed_overrides(overrides, plan)
    pasted = [token.strip("`") for token in text.split()]
    assert "model.virtual_pipeline_model_parallel_size=null" in pasted
    assert "model.sequence_parallel=false" in pasted
    assert "model.cpu_offloading=true" in pasted
    assert not [token for token in pasted if token.endswith(("=None", "=True", "=False"))]
    parsed = parse_overrides(pasted)
    assert parsed == {k: v for k, v in overrides.items() if k in parsed}
    assert parsed["model.cpu_offloading_num_layers"] == 11


def test_the_fit_verdict_is_said_in_the_answer_language() -> None:
    import re

    from assistant.compose import _fit_section
    from assistant.recommend import Recommendation
    from assistant.records import Cluster, Slots
    from assistant.rules.fit import FitVerdict

    rec = Recommendation(slots=Slots(), version="0.6.0", cluster=Cluster(num_gpus=2, gpu_type="a100"))
    gb = 1e9
    verdicts = {
        "tight": FitVerdict(status="does-not-fit", peak_bytes=85.2 * gb, usable_bytes=85 * gb, tight=True),
        "unknown": FitVerdict(
            status="unknown", note="the model architecture is not known", note_zh="模型结构未知"
        ),
    }
    for name, verdict in verdicts.items():
        rec.fit = verdict
        zh = "\n".join(_fit_section(rec, "zh"))
        en = "\n".join(_fit_section(rec, "en"))
        assert not re.search(r"[a-z]{4,}", zh.replace("GB", "")), (name, zh)  # no English sentence
        assert "临界" in zh if name == "tight" else "模型结构未知" in zh
        assert "borderline" in en if name == "tight" else "not known" in en


def test_a_recipe_run_on_the_gpus_its_name_says_is_not_called_unfit_without_saying_so() -> None:
    from assistant.compose import _fit_section
    from assistant.recommend import Recommendation, Selection
    from assistant.records import Cluster, Slots
    from assistant.rules.fit import FitVerdict
    from tests.test_rules_fixtures import make_record

    record = make_record(
        "gemma3_1b_pretrain_1gpu_h100_bf16_config", encoded_gpus=1, gpu_type="h100", seq=32768,
        kind="benchmark",
    )  # fmt: skip
    own = Plan.sized(num_gpus=1, tp=1, pp=1, cp=1, mbs=1, gbs=512, vp=None, ep=1, etp=None, sp=False)
    unfit = FitVerdict(status="does-not-fit", peak_bytes=125e9, usable_bytes=85e9)
    rec = Recommendation(slots=Slots(), version="0.6.0", selection=Selection(record, "exact"), plan=own,
                         cluster=Cluster(num_gpus=1, gpu_type="h100"), fit=unfit)  # fmt: skip
    assert "named for exactly these GPUs" in _fit_section(rec, "en")[0]
    assert "上游按原样运行它" in _fit_section(rec, "zh")[0]
    rec.cluster = Cluster(num_gpus=1, gpu_type="a100")  # not the hardware the name says
    assert "named for exactly" not in _fit_section(rec, "en")[0]
    # A library recipe's name gives its layout's minimum world size, not a run: no such excuse.
    rec.cluster = Cluster(num_gpus=1, gpu_type="h100")
    rec.selection = Selection(record.model_copy(update={"kind": "library"}), "exact")
    assert "named for exactly" not in _fit_section(rec, "en")[0]


def test_a_library_name_that_counts_more_gpus_than_its_layout_is_not_called_its_minimum() -> None:
    """qwen3_8b_pretrain_16gpu_h100_bf16_config runs TP 1 · PP 1: its 16 GPUs are the size it was written
    for; llama3_8b_pretrain_2gpu_h100_bf16_config (TP 2) is named for its layout's minimum."""
    from assistant.compose import _recipe_section
    from assistant.recommend import Recommendation, Selection
    from assistant.records import Slots
    from tests.test_rules_fixtures import make_record

    def header(encoded: int, minimum: int, lang: str) -> str:
        record = make_record("x_16gpu_h100_bf16_config", encoded_gpus=encoded, min_gpus=minimum)
        rec = Recommendation(slots=Slots(), version="0.6.0", selection=Selection(record, "exact"))
        return "\n".join(_recipe_section(rec, lang))

    sized = header(16, 1, "en")
    assert "the size it was written for, not its layout's minimum" in sized
    assert "minimum world size" not in sized
    assert "编写时针对的规模" in header(16, 1, "zh")
    assert "its layout's minimum world size" in header(2, 2, "en")
