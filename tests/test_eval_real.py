"""The real-question set: metric classes on hand-made answers, the runner and report, the shipped file."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from assistant.answer import Answer
from assistant.errors import UserError
from assistant.records import (
    Catalog,
    CatalogSource,
    Citation,
    Commands,
    DatasetPreset,
    LauncherFlag,
    LauncherSpec,
    RecipeRecord,
    Slots,
    SourceRef,
)
from evals import run as eval_run
from evals.metrics import THRESHOLDS, Thresholds, VersionFacts
from evals.real import (
    HonestAbstention,
    MustInclude,
    MustNotInclude,
    RealCase,
    RealRow,
    Relevance,
    own_text,
    real_gates,
    score_real_row,
    summarize_real,
)

TORCHRUN = "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py"
GLM_PASSAGE = (
    "GLM-4.5 355B uses 92 decoder layers; with PP 8 set num_layers_in_first_pipeline_stage and "
    "num_layers_in_last_pipeline_stage."
)


def _recipe(name: str) -> RecipeRecord:
    return RecipeRecord(
        name=name,
        canonical=name,
        version="0.6.0",
        kind="library",
        family="glm",
        source=SourceRef(path="src/x.py", line=1),
    )


@pytest.fixture(scope="module")
def facts() -> VersionFacts:
    catalog = Catalog(
        version="0.6.0",
        source=CatalogSource(kind="git", ref="v0.6.0"),
        recipes=[_recipe("glm45_355b_pretrain_config")],
        launcher=LauncherSpec(
            script="scripts/training/run_recipe.py",
            flags=[
                LauncherFlag(names=["--recipe"]),
                LauncherFlag(names=["--dataset"], choices=["mock", "squad"]),
            ],
            dataset_presets=[DatasetPreset(name="mock", modes=["pretrain"])],
        ),
    )
    return VersionFacts.from_catalog(catalog)


def real_row(**fields) -> RealRow:
    base = {
        "id": "real-x",
        "source": "https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/5551",
        "question": "glm45_355b_pretrain_config fails: num_layers=92 should be divisible by PP=8. Broken?",
        "lang": "en",
        "version": "0.6.0",
        "topic": "error_on_config",
        "maintainer_answer": "Yes; 92 layers do not divide by 8.",
        "about": [r"glm45_355b|GLM[- ]?4\.5"],
        "checks": {"must_include": [r"\b92\b", r"num_layers_in_first_pipeline_stage"]},
        "split": "dev",
    }
    checks = {**base["checks"], **fields.pop("checks", {})}
    return RealRow.model_validate({**base, **fields, "checks": checks})


def answer(markdown: str, *, passages: tuple[str, ...] = (), torchrun: str | None = None) -> Answer:
    return Answer(
        language="en",
        intent="troubleshoot",
        slots=Slots(),
        version="0.6.0",
        commands=Commands(torchrun=torchrun),
        citations=[
            Citation(n=i, source=f"guide/en/x.md#s{i}", heading="x > s", text=f"## S{i}\n\n{p}")
            for i, p in enumerate(passages, 1)
        ],
        answer_markdown=markdown,
    )


def quoted(own: str, passage: str) -> str:
    """An answer in the assistant's layout: its own line, then the quoted passage, then the sources."""
    return (
        f"{own}\n\nFrom the guide:\n\n**S1** [1]\n\n{passage}\n\n**Sources**\n[1] `guide/en/x.md#s1` — x > s"
    )


# ---------------------------------------------------------------- own text and relevance


def test_own_text_drops_quoted_passages_and_sources() -> None:
    a = answer(quoted("PP 8 cannot split the layers.", GLM_PASSAGE), passages=(GLM_PASSAGE,))
    text = own_text(a)
    assert "PP 8 cannot split the layers." in text
    assert "92 decoder layers" not in text and "Sources" not in text and "[1]" not in text


def test_relevance_needs_the_entity_in_the_answers_own_words(facts: VersionFacts) -> None:
    row = real_row()
    only_quoted = answer(quoted("This matches:", GLM_PASSAGE), passages=(GLM_PASSAGE,))
    assert not Relevance().evaluate(RealCase.of(row, only_quoted, facts)).passed
    said = answer(quoted("glm45_355b_pretrain_config sets PP 8.", GLM_PASSAGE), passages=(GLM_PASSAGE,))
    assert Relevance().evaluate(RealCase.of(row, said, facts)).passed


def test_a_quote_alone_does_not_make_a_row_pass(facts: VersionFacts) -> None:
    """Must-include may be met by a quoted passage, but the row still fails without relevance."""
    row = real_row()
    a = answer(quoted("This matches:", GLM_PASSAGE), passages=(GLM_PASSAGE,))
    score = score_real_row(row, a, facts)
    assert score.checks["must_include"] and not score.checks["relevance"] and not score.passed
    assert any("own text mentions none" in f for f in score.failures())


# ---------------------------------------------------------------- include / exclude


def test_must_include_reports_each_missing_pattern(facts: VersionFacts) -> None:
    row = real_row()
    check = MustInclude().evaluate(RealCase.of(row, answer("glm45_355b has 92 layers."), facts))
    assert (
        not check.passed and "num_layers_in_first_pipeline_stage" in check.detail and "92" not in check.detail
    )


def test_forbidden_claim_fails_a_row_that_otherwise_answers(facts: VersionFacts) -> None:
    row = real_row(checks={"must_not_include": [r"recipe (is|looks) (fine|correct)"]})
    good = "glm45_355b: 92 layers over PP 8; set num_layers_in_first_pipeline_stage=10."
    assert score_real_row(row, answer(good), facts).passed
    claim = answer(good + " Otherwise the recipe is fine.")
    assert not score_real_row(row, claim, facts).passed
    check = MustNotInclude().evaluate(RealCase.of(row, claim, facts))
    assert not check.passed and "recipe (is|looks)" in check.detail


def test_word_rules_are_ascii_so_numbers_next_to_chinese_match(facts: VersionFacts) -> None:
    row = real_row(lang="zh", checks={"must_include": [r"\b92\b", r"\bPP\s*=?\s*4\b"]})
    check = MustInclude().evaluate(RealCase.of(row, answer("glm45_355b 共92层，改成PP 4即可。"), facts))
    assert check.passed, check.detail


# ---------------------------------------------------------------- abstention


def test_honest_abstention_needs_a_pointer(facts: VersionFacts) -> None:
    row = real_row(checks={"abstain_ok": True})
    pointed = answer("I don't know for glm45_355b; see docs/training/checkpointing.md in 0.6.0.")
    bare = answer("I found nothing relevant in the knowledge base.")
    assert HonestAbstention().evaluate(RealCase.of(row, pointed, facts)).passed
    assert not HonestAbstention().evaluate(RealCase.of(row, bare, facts)).passed
    assert score_real_row(row, pointed, facts).passed
    assert not score_real_row(row, bare, facts).passed


def test_abstention_does_not_pass_where_the_row_wants_an_answer(facts: VersionFacts) -> None:
    row = real_row()  # abstain_ok is False
    pointed = answer("I don't know; see docs/training/checkpointing.md.")
    assert not score_real_row(row, pointed, facts).passed


def test_abstention_in_chinese_is_recognised(facts: VersionFacts) -> None:
    row = real_row(lang="zh", checks={"abstain_ok": True})
    a = answer("知识库中没有找到相关内容，请查看 0.6.0 的 docs/training/peft.md。")
    assert score_real_row(row, a, facts).abstained


# ---------------------------------------------------------------- identifiers and commands


def test_an_invented_recipe_fails_the_row(facts: VersionFacts) -> None:
    row = real_row()
    text = "Use glm45_355b_pretrain_fixed_config: 92 layers, num_layers_in_first_pipeline_stage=10."
    score = score_real_row(row, answer(text), facts)
    assert not score.checks["identifiers"] and not score.passed
    assert any("recipe:glm45_355b_pretrain_fixed_config" in f for f in score.failures())


def test_flags_of_other_upstream_tools_are_not_judged_against_the_launcher(facts: VersionFacts) -> None:
    row = real_row()
    text = "glm45_355b_pretrain_config: 92 layers; set num_layers_in_first_pipeline_stage=10.\n\n"
    tool = "python examples/conversion/convert_checkpoints.py import --hf-model x --megatron-path y"
    convert = f"```bash\n{tool}\n```"
    assert score_real_row(row, answer(text + convert), facts).checks["identifiers"]
    launch = f"```bash\n{TORCHRUN} --recipe glm45_355b_pretrain_config --hf-model x\n```"
    score = score_real_row(row, answer(text + launch), facts)
    assert not score.checks["identifiers"] and "flag:--hf-model" in score.details["identifiers"]


def test_a_command_the_launcher_rejects_fails_the_row(facts: VersionFacts) -> None:
    row = real_row()
    text = "glm45_355b_pretrain_config: 92 layers; set num_layers_in_first_pipeline_stage=10."
    ok = f"{TORCHRUN} --recipe glm45_355b_pretrain_config --dataset mock"
    assert score_real_row(row, answer(text, torchrun=ok), facts).passed
    bad = score_real_row(row, answer(text, torchrun=ok + " --pp 4"), facts)
    assert not bad.checks["commands"] and not bad.passed


def test_a_crash_is_a_scored_failure(facts: VersionFacts) -> None:
    score = score_real_row(real_row(), None, facts, error="RuntimeError: boom")
    assert not score.passed and score.failures() == ["error: RuntimeError: boom"]


# ---------------------------------------------------------------- rows


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("source", "https://github.com/someone/fork/issues/1", "known upstream"),
        ("source", "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/main/README.md", "known upstream"),
        ("topic", "weather", "topic"),
        ("version", "0.4.1", "version"),
        ("about", [], "about"),
        ("about", ["(unclosed"], "about"),
    ],
)
def test_bad_rows_are_rejected(field: str, value, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        real_row(**{field: value})


def test_loader_names_the_line_and_rejects_duplicates(tmp_path: Path) -> None:
    good = real_row().model_dump()
    path = tmp_path / "real.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "checks": {"must_include": ["("]}}) + "\n")
    with pytest.raises(UserError, match=r"real.jsonl:2"):
        eval_run.load_real(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(UserError, match="duplicate ids"):
        eval_run.load_real(path)


# ---------------------------------------------------------------- aggregation and gate


def _scores(facts: VersionFacts, dev_pass: int, dev_fail: int, held_pass: int = 1):
    good = answer("glm45_355b: 92 layers; set num_layers_in_first_pipeline_stage=10.")
    bad = answer("Please name the model.")
    out = []
    for i in range(dev_pass + dev_fail):
        out.append(score_real_row(real_row(id=f"d{i}"), good if i < dev_pass else bad, facts))
    for i in range(held_pass + 1):
        topic = "checkpoint" if i else "recompute"
        row = real_row(id=f"h{i}", split="heldout", topic=topic)
        out.append(score_real_row(row, good if i < held_pass else bad, facts))
    return out


def test_summary_reports_dev_and_heldout_separately_per_topic(facts: VersionFacts) -> None:
    real = summarize_real(_scores(facts, dev_pass=3, dev_fail=1))
    dev, held = real["by_split"]["dev"], real["by_split"]["heldout"]
    assert (dev["rows"], dev["passed"], dev["pass_rate"]) == (4, 3, 0.75)
    assert (held["rows"], held["passed"]) == (2, 1)
    assert held["by_topic"] == {
        "checkpoint": {"rows": 1, "passed": 0, "pass_rate": 0.0},
        "recompute": {"rows": 1, "passed": 1, "pass_rate": 1.0},
    }
    assert dev["relevance"] == 0.75 and dev["by_lang"]["en"]["passed"] == 3


def test_gate_holds_at_the_threshold_and_fails_below(facts: VersionFacts) -> None:
    real = summarize_real(_scores(facts, dev_pass=3, dev_fail=1, held_pass=0))
    assert real_gates(real, Thresholds(real_dev_pass_rate=0.75))[0].ok
    assert not real_gates(real, Thresholds(real_dev_pass_rate=0.76))[0].ok
    # held-out rows never move the gate
    assert real_gates(real, THRESHOLDS)[0].value == 0.75


# ---------------------------------------------------------------- runner and report


def test_runner_scores_the_real_set_as_its_own_category(tmp_path: Path, facts: VersionFacts) -> None:
    golden = tmp_path / "qa.jsonl"
    golden.write_text(
        json.dumps(
            {
                "id": "g1",
                "question": "glm45 355B pretrain",
                "lang": "en",
                "version": "0.6.0",
                "category": "c",
                "expected": {"recipes": ["glm45_355b_pretrain_config"]},
            }
        )
        + "\n"
    )
    real = tmp_path / "real.jsonl"
    rows = [real_row(id="real-dev"), real_row(id="real-held-secret", split="heldout", question="HELD-OUT Q")]
    real.write_text("\n".join(r.model_dump_json() for r in rows) + "\n")
    rec = _recipe("glm45_355b_pretrain_config")
    reply = answer("glm45_355b_pretrain_config: 92 layers; set num_layers_in_first_pipeline_stage=10.")
    reply = reply.model_copy(update={"recipe": rec, "citations": [Citation(n=1, source="s", heading="h")]})

    code, run = eval_run.main(
        set_path=golden,
        real_path=real,
        report_dir=tmp_path / "report",
        retrieval_path=None,
        results_dir=tmp_path / "results",
        answer_fn=lambda q, **_: reply,
        facts_for=lambda v: facts,
        skip_retrieval=True,
    )
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["real"]["by_split"]["dev"]["passed"] == 1
    assert summary["real"]["by_split"]["heldout"]["rows"] == 1
    assert "real_pass_rate[dev]" in {g["name"] for g in summary["gates"]}
    archived = json.loads(next((tmp_path / "results").glob("*.json")).read_text(encoding="utf-8"))
    assert archived["real"]["by_split"]["dev"]["pass_rate"] == 1.0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Real questions" in report and "| error_on_config | 1/1 (100.0%) | 1/1 (100.0%) |" in report
    answers = json.loads((tmp_path / "report" / "answers.json").read_text(encoding="utf-8"))
    # held-out rows are counted, never shown
    assert "real-held-secret" not in report and "HELD-OUT" not in report and "real-held-secret" not in answers
    assert "real-dev" in answers and run.real is not None and len(run.real) == 2


def test_a_run_over_one_version_reports_the_real_set_without_gating_it(
    tmp_path: Path, facts: VersionFacts
) -> None:
    golden = tmp_path / "qa.jsonl"
    golden.write_text(
        json.dumps(
            {"id": "g1", "question": "q", "lang": "en", "version": "0.6.0", "category": "c", "expected": {}}
        )
        + "\n"
    )
    real = tmp_path / "real.jsonl"
    real.write_text(real_row().model_dump_json() + "\n")
    kwargs = dict(
        set_path=golden,
        real_path=real,
        report_dir=tmp_path / "r",
        retrieval_path=None,
        results_dir=None,
        answer_fn=lambda q, **_: answer("Please name the model."),
        facts_for=lambda v: facts,
        skip_retrieval=True,
    )
    _, whole = eval_run.main(**kwargs)
    _, one = eval_run.main(**kwargs, version="0.6.0")
    assert "real_pass_rate[dev]" in {g.name for g in whole.summary.gates}
    assert "real_pass_rate[dev]" not in {g.name for g in one.summary.gates}
    assert (
        one.summary.data["real"]["by_split"]["dev"]["passed"] == 0 and not one.summary.data["real"]["gated"]
    )


def test_a_custom_golden_set_runs_without_the_real_set(tmp_path: Path, facts: VersionFacts) -> None:
    golden = tmp_path / "qa.jsonl"
    golden.write_text(
        json.dumps(
            {"id": "g1", "question": "q", "lang": "en", "version": "0.6.0", "category": "c", "expected": {}}
        )
        + "\n"
    )
    _, run = eval_run.main(
        set_path=golden,
        report_dir=tmp_path / "r",
        retrieval_path=None,
        results_dir=None,
        answer_fn=lambda q, **_: answer("x"),
        facts_for=lambda v: facts,
        skip_retrieval=True,
    )
    assert run.real is None and "real" not in run.summary.data


# ---------------------------------------------------------------- the shipped set


@pytest.fixture(scope="module")
def shipped() -> list[RealRow]:
    return eval_run.load_real(eval_run.DEFAULT_REAL_SET)


def test_shipped_set_size_languages_and_split(shipped: list[RealRow]) -> None:
    assert len(shipped) >= 90
    assert sum(r.lang == "zh" for r in shipped) * 3 >= len(shipped)
    held = [r for r in shipped if r.split == "heldout"]
    # spent batches are retired to dev once scored (2026-12-02, 2026-12-03); the newest batch, heldout-6, stays out
    assert len(held) >= 18 and len({r.topic for r in held}) >= 10
    # a translated row shares its original's split, so a held-out question never leaks through its twin
    by_base = {}
    for r in shipped:
        by_base.setdefault(r.id.removesuffix("-zh"), set()).add(r.split)
    assert all(len(splits) == 1 for splits in by_base.values())


def test_shipped_set_covers_every_topic(shipped: list[RealRow]) -> None:
    from typing import get_args

    from evals.real import Topic

    assert set(get_args(Topic)) <= {r.topic for r in shipped}
    assert Counter(r.version for r in shipped).keys() == {"0.3.1", "0.5.1", "0.6.0", "main"}


def test_chinese_rows_are_written_in_chinese(shipped: list[RealRow]) -> None:
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert all(bool(cjk.search(r.question)) == (r.lang == "zh") for r in shipped)


def test_recipe_names_the_checks_require_exist_in_that_version(shipped: list[RealRow]) -> None:
    """A literal recipe name in a must-include check is one the row's version really has."""
    literal = re.compile(r"^[a-z0-9_]+_config(?:_\w+)?$")
    unknown = []
    for r in shipped:
        names = eval_run.default_facts(r.version).recipe_names
        for pattern in r.checks.must_include:
            unknown += [f"{r.id}: {n}" for n in pattern.split("|") if literal.match(n) and n not in names]
    assert unknown == []
