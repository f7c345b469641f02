"""The eval runner and its metrics on hand-made answers and a hand-made catalog (both sides of each gate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.answer import Answer, AnswerEstimate, PeftAlternative
from assistant.errors import UserError
from assistant.records import (
    Catalog,
    CatalogSource,
    Citation,
    Commands,
    DatasetPreset,
    Finding,
    LauncherFlag,
    LauncherSpec,
    Plan,
    RecipeRecord,
    Slots,
    SourceRef,
)
from evals import run as eval_run
from evals.metrics import (
    GoldenRow,
    RetrievalScore,
    VersionFacts,
    check_command,
    invented_identifiers,
    rank_of_first_hit,
    score_row,
    summarize,
)

TORCHRUN = "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py"


def _recipe(name: str, canonical: str | None = None, aliases: tuple[str, ...] = ()) -> RecipeRecord:
    return RecipeRecord(
        name=name,
        canonical=canonical or name,
        aliases=list(aliases),
        version="9.9",
        kind="library",
        family="llama",
        source=SourceRef(path="src/x.py", line=1),
    )


RECIPES = {
    "llama3_8b_pretrain_config": _recipe(
        "llama3_8b_pretrain_config", "llama3_8b_pretrain_2gpu_h100_bf16_config"
    ),
    "qwen3_30b_a3b_sft_config": _recipe(
        "qwen3_30b_a3b_sft_config", "qwen3_30b_a3b_sft_16gpu_h100_bf16_config"
    ),
}


@pytest.fixture(scope="module")
def facts() -> VersionFacts:
    flags = [
        LauncherFlag(names=["--model"]),
        LauncherFlag(names=["--recipe"]),
        LauncherFlag(names=["--mode"], choices=["pretrain", "sft", "lora", "dora"]),
        LauncherFlag(names=["--dataset"], choices=["mock", "squad", "tulu3"]),
        LauncherFlag(names=["-tp", "--tensor_model_parallel_size"], type="int"),
        LauncherFlag(names=["--dry-run", "--dry_run"], action="store_true", dest="dryrun"),
    ]
    catalog = Catalog(
        version="9.9",
        source=CatalogSource(kind="git", ref="v9.9"),
        recipes=list(RECIPES.values()),
        launcher=LauncherSpec(
            script="scripts/training/run_recipe.py",
            flags=flags,
            dataset_presets=[
                DatasetPreset(name="mock", modes=["pretrain"]),
                *(DatasetPreset(name=n, modes=["sft", "lora", "dora"]) for n in ("squad", "tulu3")),
            ],
        ),
    )
    return VersionFacts.from_catalog(catalog)


def make_answer(
    recipe: str | None = "qwen3_30b_a3b_sft_config",
    *,
    dataset: str | None = "squad",
    nodes: int = 2,
    markdown: str | None = None,
    torchrun: str | None = None,
    citations: int = 1,
    intent: str = "recommend",
) -> Answer:
    rec = RECIPES.get(recipe) if recipe else None
    if recipe and rec is None:
        rec = _recipe(recipe)
    cmd = (
        torchrun
        if torchrun is not None
        else (f"{TORCHRUN} \\\n    --recipe {recipe} \\\n    --dataset {dataset}" if recipe else None)
    )
    multinode = cmd.replace("--nproc_per_node=8", f"--nproc_per_node=8 --nnodes={nodes}") if cmd else None
    return Answer(
        language="en",
        intent=intent,
        slots=Slots(),
        version="9.9",
        recipe=rec,
        dataset=dataset if recipe else None,
        commands=Commands(torchrun=cmd, multinode=multinode),
        citations=[
            Citation(n=i + 1, source="guide/en/checklist.md#dataset-presets", heading="h")
            for i in range(citations)
        ],
        answer_markdown=markdown if markdown is not None else f"Use `{recipe}` with `--dataset {dataset}`.",
    )


def row(**expected) -> GoldenRow:
    return GoldenRow(
        id=expected.pop("id", "r1"),
        question=expected.pop("question", "Qwen3 30B-A3B SFT on 16 GPUs"),
        lang=expected.pop("lang", "en"),
        version="9.9",
        category=expected.pop("category", "c"),
        expected=expected,
    )


# ---------------------------------------------------------------- command validity


def test_valid_command_with_overrides_parses(facts: VersionFacts) -> None:
    cmd = (
        f"{TORCHRUN} \\\n  --recipe llama3_8b_pretrain_config --dataset mock -tp 2 \\\n"
        "  'train.global_batch_size=64'"
    )
    assert check_command("torchrun", cmd, facts).valid


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        ("--recipe x --bogus 1", "--bogus"),
        ("--recipe x --dataset llm-finetune", "invalid choice"),
        ("--recipe x model.tensor_model_parallel_size", "KEY=VALUE"),
        ("--recipe x -tp two", "invalid int"),
        ("--dataset mock", "no --recipe"),
        ("--recipe llama3_8b_sft_config --dataset mock", "Mode 'sft' is incompatible with dataset 'mock'"),
        ("--recipe llama3_8b_pretrain_config --mode lora --dataset mock", "incompatible"),
    ],
)
def test_invalid_commands_are_caught(facts: VersionFacts, tail: str, reason: str) -> None:
    check = check_command("torchrun", f"{TORCHRUN} {tail}", facts)
    assert check is not None and not check.valid
    assert reason in check.detail


def test_mode_and_preset_that_agree_are_valid(facts: VersionFacts) -> None:
    assert check_command(
        "torchrun", f"{TORCHRUN} --recipe qwen3_30b_a3b_sft_config --dataset tulu3", facts
    ).valid
    assert check_command("torchrun", f"{TORCHRUN} --model llama3_8b --mode lora --dataset squad", facts).valid


def test_run_recipe_inside_sbatch_script_is_parsed(facts: VersionFacts) -> None:
    script = (
        '#!/bin/bash\n#SBATCH --nodes=2\nsrun --ntasks-per-node=1 bash -c "torchrun --nnodes=2 '
        'scripts/training/run_recipe.py --recipe qwen3_30b_a3b_sft_config --mode sft"\n'
    )
    assert check_command("slurm", script, facts).valid
    assert not check_command("slurm", script.replace("--mode sft", "--mode finetune"), facts).valid


def test_command_without_launcher_is_not_scored(facts: VersionFacts) -> None:
    assert check_command("benchmark", "python scripts/performance/setup_experiment.py -m x", facts) is None


# ---------------------------------------------------------------- invented identifiers


def test_invented_recipe_flag_and_dataset_are_counted(facts: VersionFacts) -> None:
    answer = make_answer(
        markdown="Try llama3_8b_turbo_config or 使用llama9_70b_sft_config; `model_config` is fine.\n"
        "```bash\ntorchrun --nproc_per_node=8 --nnodes=2 scripts/training/run_recipe.py \\\n"
        "  --recipe qwen3_30b_a3b_sft_config --frobnicate --dataset llm-finetune\n```\n"
    )
    found = invented_identifiers(answer, facts)
    assert found == [
        "recipe:llama3_8b_turbo_config",
        "recipe:llama9_70b_sft_config",
        "flag:--frobnicate",
        "dataset:llm-finetune",
    ]


def test_flags_and_presets_in_prose_are_not_judged(facts: VersionFacts) -> None:
    # quoting another release's table ("v0.5.1 uses --dataset llm-finetune") is not offering a command
    answer = make_answer(markdown="v0.3.1 has no `--dataset` flag; v0.5.1 used `--dataset llm-finetune`.")
    assert invented_identifiers(answer, facts) == []
    answer.commands.slurm = (
        "#SBATCH --nodes=2\nsrun --gpus 8 python scripts/training/run_recipe.py --recipe x"
    )
    assert invented_identifiers(answer, facts) == ["flag:--gpus"]


def test_command_lines_labelled_for_another_release_are_not_judged(facts: VersionFacts) -> None:
    block = (
        "```bash\n#v9.9+\n... run_recipe.py --recipe x --dataset squad\n"
        "#v0.4.x-v0.5.1\n... run_recipe.py --recipe x --dataset llm-finetune --hf_path p\n```"
    )
    assert invented_identifiers(make_answer(markdown=block), facts) == []
    unlabelled = block.replace("#v0.4.x-v0.5.1\n", "")
    assert invented_identifiers(make_answer(markdown=unlabelled), facts) == [
        "flag:--hf_path",
        "dataset:llm-finetune",
    ]


def test_a_file_name_ending_in_config_is_not_a_recipe(facts: VersionFacts) -> None:
    answer = make_answer(markdown="It reads the checkpoint's `run_config.yaml`. Use llama3_8b_turbo_config.")
    assert invented_identifiers(answer, facts) == ["recipe:llama3_8b_turbo_config"]


def test_identifiers_the_user_typed_are_not_invented(facts: VersionFacts) -> None:
    answer = make_answer(markdown="`llama5_8b_sft_config` is not a recipe in this version.")
    assert invented_identifiers(answer, facts, user_text="run llama5_8b_sft_config please") == []
    assert invented_identifiers(answer, facts) == ["recipe:llama5_8b_sft_config"]


def test_canonical_and_alias_names_are_known(facts: VersionFacts) -> None:
    answer = make_answer(
        markdown="Alias of llama3_8b_pretrain_2gpu_h100_bf16_config; also qwen3_*_sft_config."
    )
    assert invented_identifiers(answer, facts) == []


# ---------------------------------------------------------------- one row


def test_row_scoring_reads_recipe_dataset_and_launch_shape(facts: VersionFacts) -> None:
    expected = dict(
        recipes=["qwen3_30b_a3b_sft_16gpu_h100_bf16_config"],
        dataset=["squad", "tulu3"],
        nproc_per_node=8,
        nnodes=2,
        must_include=[r"run_recipe\.py"],
        must_not_include=[r"--dataset mock"],
    )
    score = score_row(row(**expected), make_answer(), facts, latency_ms=3.0)
    assert score.passed, score.failures()
    bad = score_row(row(**expected), make_answer(dataset="mock", nodes=1), facts)
    assert not bad.passed
    assert bad.slots == {"dataset": False, "nproc_per_node": True, "nnodes": False}
    assert bad.must_not_hits == [r"--dataset mock"]


def test_no_recipe_expected_means_none_may_be_named(facts: VersionFacts) -> None:
    declined = make_answer(
        recipe=None,
        markdown="I can only help with Megatron-Bridge recipes.",
        citations=0,
        intent="out_of_scope",
    )
    score = score_row(row(recipes=[], intent="out_of_scope"), declined, facts)
    assert score.passed, score.failures()
    assert not score_row(row(recipes=[], intent="out_of_scope"), make_answer(), facts).passed


def test_missing_citation_fails_a_recommendation(facts: VersionFacts) -> None:
    score = score_row(row(recipes=["qwen3_30b_a3b_sft_config"]), make_answer(citations=0), facts)
    assert score.failures() == ["no citation"]


def test_expected_findings_match_id_or_message(facts: VersionFacts) -> None:
    answer = make_answer()
    answer.findings = [
        Finding(id="tp_heads", severity="error", message="32 heads are not divisible by TP=3", message_zh="")
    ]
    assert score_row(row(findings=["tp_heads", "divisible"]), answer, facts).slots["findings"]
    assert not score_row(row(findings=["world_size"]), answer, facts).slots["findings"]


# ---------------------------------------------------------------- retrieval and gates


def test_rank_ignores_guide_language_prefix() -> None:
    hits = ["guide/zh/checklist.md#first", "guide/en/pitfalls.md#cuda-graph-packed-seq"]
    assert rank_of_first_hit(["pitfalls.md#cuda-graph-packed-seq"], hits) == 2
    assert rank_of_first_hit(["pitfalls.md#other"], hits) is None


def _scores(facts: VersionFacts, wrong_en: int, wrong_zh: int = 0, per_lang: int = 20):
    scores = []
    for lang, wrong in (("en", wrong_en), ("zh", wrong_zh)):
        for i in range(per_lang):
            wrong_recipe = i < wrong
            answer = make_answer(
                "llama3_8b_pretrain_config" if wrong_recipe else "qwen3_30b_a3b_sft_config",
                dataset="mock" if wrong_recipe else "squad",
            )
            scores.append(
                score_row(
                    row(id=f"{lang}{i}", lang=lang, recipes=["qwen3_30b_a3b_sft_config"]),
                    answer,
                    facts,
                    latency_ms=float(i),
                )
            )
    return scores


def _retrieval(hit: int, total: int = 10) -> list[RetrievalScore]:
    return [
        RetrievalScore(
            id=str(i),
            query="q",
            lang="en",
            expected_sources=["a.md#x"],
            hits=["a.md#x"],
            rank=1 if i < hit else None,
            origin="retrieval",
        )
        for i in range(total)
    ]


def _gate(summary, name):
    return next(g for g in summary.gates if g.name == name)


def test_recipe_accuracy_gate_at_and_below_threshold(facts: VersionFacts) -> None:
    at = summarize(_scores(facts, wrong_en=1), _retrieval(9))  # 19/20 = 0.95
    assert _gate(at, "recipe_accuracy[en]").ok and at.ok
    below = summarize(_scores(facts, wrong_en=0, wrong_zh=2), _retrieval(9))  # zh 18/20 = 0.90
    assert _gate(below, "recipe_accuracy[en]").ok and not _gate(below, "recipe_accuracy[zh]").ok
    assert not below.ok
    assert below.data["recipe_accuracy"]["by_lang"] == {"en": 1.0, "zh": 0.9}
    empty = summarize([], _retrieval(10))  # no recipe rows at all is a failed run, not a pass
    assert [g.name for g in empty.gates if not g.ok] == ["recipe_accuracy[any]", "command_validity"]


def test_retrieval_gate_and_mrr() -> None:
    good = summarize([], _retrieval(9))
    assert _gate(good, "retrieval_recall@5").ok and good.data["retrieval"]["mrr"] == 0.9
    assert not _gate(summarize([], _retrieval(8)), "retrieval_recall@5").ok
    assert not _gate(summarize([], None), "retrieval_recall@5").ok  # not run is not passed


def test_invented_identifier_and_command_gates(facts: VersionFacts) -> None:
    scores = _scores(facts, wrong_en=0)
    assert summarize(scores, _retrieval(10)).ok
    scores[0] = score_row(
        row(recipes=["qwen3_30b_a3b_sft_config"]),
        make_answer(markdown="qwen3_30b_a3b_sft_config or qwen3_30b_a3b_sft_fast_config"),
        facts,
    )
    assert not _gate(summarize(scores, _retrieval(10)), "invented_identifiers").ok
    scores[0] = score_row(
        row(recipes=["qwen3_30b_a3b_sft_config"]),
        make_answer(torchrun=f"{TORCHRUN} --recipe qwen3_30b_a3b_sft_config --dataset tulu3 oops"),
        facts,
    )
    summary = summarize(scores, _retrieval(10))
    assert not _gate(summary, "command_validity").ok and _gate(summary, "invented_identifiers").ok


# ------------------------------------------------------------ the whole runner: working and broken lookups


class FakeHit:
    def __init__(self, source: str) -> None:
        self.source = source


class FakeRetriever:
    def search(
        self,
        query: str,
        k: int = 5,
        lang: str | None = None,
        version: str | None = None,
        doc_type: str | None = None,
    ) -> list[FakeHit]:
        return [FakeHit("guide/en/other.md#x"), FakeHit(f"guide/{lang or 'en'}/checklist.md#dataset-presets")]


GOLDEN = [
    {
        "id": "sft-en",
        "question": "Qwen3 30B-A3B SFT on 16 GPUs",
        "lang": "en",
        "version": "9.9",
        "category": "upstream",
        "expected": {
            "recipes": ["qwen3_30b_a3b_sft_config"],
            "dataset": ["squad", "tulu3"],
            "nproc_per_node": 8,
            "nnodes": 2,
            "expected_sources": ["checklist.md#dataset-presets"],
        },
    },
    {
        "id": "sft-zh",
        "question": "两机十六卡做 Qwen3 30B-A3B 的 SFT",
        "lang": "zh",
        "version": "9.9",
        "category": "upstream",
        "turns": ["我想微调 Qwen3 30B-A3B"],
        "expected": {"recipes": ["qwen3_30b_a3b_sft_16gpu_h100_bf16_config"], "nnodes": 2},
    },
]


def _write_set(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in GOLDEN) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, answer_fn):
    return eval_run.main(
        set_path=_write_set(tmp_path),
        report_dir=tmp_path / "report",
        retrieval_path=None,
        results_dir=tmp_path / "results",
        answer_fn=answer_fn,
        facts_for=lambda v: _FACTS,
        retriever=FakeRetriever(),
        new_conversation=list,
    )


_FACTS: VersionFacts


def test_runner_passes_a_correct_assistant_and_writes_the_report(tmp_path: Path, facts: VersionFacts) -> None:
    global _FACTS
    _FACTS = facts
    seen: list[tuple[str, object]] = []

    def ask(question: str, *, version: str | None = None, conversation=None) -> Answer:
        seen.append((question, conversation))
        return make_answer()

    code, result = _run(tmp_path, ask)
    assert code == 0, result.summary.gates
    # the multi-turn row replayed its earlier turn into the same conversation object
    assert [q for q, _ in seen] == [
        "Qwen3 30B-A3B SFT on 16 GPUs",
        "我想微调 Qwen3 30B-A3B",
        "两机十六卡做 Qwen3 30B-A3B 的 SFT",
    ]
    assert seen[1][1] is seen[2][1] and seen[0][1] is None
    report = tmp_path / "report"
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert summary["ok"] and summary["retrieval"]["queries"] == 1 and summary["retrieval"]["mrr"] == 0.5
    assert (report / "accuracy.png").read_bytes().startswith(b"\x89PNG")
    assert "## Gates" in (report / "report.md").read_text(encoding="utf-8")
    archived = list((tmp_path / "results").glob("*.json"))
    assert len(archived) == 1 and json.loads(archived[0].read_text(encoding="utf-8"))["rows"] == 2


def test_a_broken_recipe_lookup_fails_the_gate(tmp_path: Path, facts: VersionFacts) -> None:
    global _FACTS
    _FACTS = facts

    def broken_ask(question: str, *, version: str | None = None, conversation=None) -> Answer:
        return make_answer("qwen3_30b_a3b_finetune_config")  # a name no version has

    code, result = _run(tmp_path, broken_ask)
    assert code != 0
    failed = {g.name for g in result.summary.gates if not g.ok}
    assert failed == {"recipe_accuracy[en]", "recipe_accuracy[zh]", "invented_identifiers"}
    assert "qwen3_30b_a3b_finetune_config" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_a_crashing_assistant_is_scored_not_fatal(tmp_path: Path, facts: VersionFacts) -> None:
    global _FACTS
    _FACTS = facts

    def crash(question: str, **_) -> Answer:
        raise RuntimeError("boom")

    code, result = _run(tmp_path, crash)
    assert code != 0 and result.summary.data["errors"] == 2


def test_malformed_golden_row_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        json.dumps(GOLDEN[0]) + "\n" + json.dumps({**GOLDEN[1], "expected": {"recipe": "x"}}) + "\n"
    )
    with pytest.raises(UserError, match=r"qa.jsonl:2"):
        eval_run.load_golden(path)


# ---------------------------------------------------------------- the shipped golden set


def test_golden_set_shape() -> None:
    rows = eval_run.load_golden(eval_run.DEFAULT_SET)
    assert len(rows) >= 80
    assert sum(r.lang == "zh" for r in rows) / len(rows) >= 0.4
    assert {"0.3.1", "0.5.1", "0.6.0", "main"} <= {r.version for r in rows}
    assert any(r.turns for r in rows)
    assert any(r.expected.intent == "out_of_scope" for r in rows)


def test_golden_expectations_exist_in_the_real_catalogs() -> None:
    """Every expected recipe name and dataset preset is one that version's catalog really has."""
    rows = eval_run.load_golden(eval_run.DEFAULT_SET)
    unknown = []
    for r in rows:
        facts = eval_run.default_facts(r.version)
        unknown += [f"{r.id}: recipe {n}" for n in r.expected.recipes or [] if n not in facts.recipe_names]
        datasets = [r.expected.dataset] if isinstance(r.expected.dataset, str) else r.expected.dataset or []
        unknown += [f"{r.id}: dataset {d}" for d in datasets if d not in facts.dataset_presets]
    assert unknown == []


def test_eval_command_is_registered_and_reports_a_missing_set(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ui.cli import app

    result = CliRunner().invoke(
        app, ["eval", "--set", str(tmp_path / "none.jsonl"), "--report", str(tmp_path)]
    )
    assert isinstance(result.exception, UserError) and "none.jsonl does not exist" in str(result.exception)


def test_a_lora_alternative_counts_as_the_launch_shape_and_its_command_is_checked() -> None:
    from evals.metrics import answered_launch_shape, command_texts

    lora = f"{TORCHRUN.replace('=8', '=4')} --recipe qwen3_30b_a3b_peft_config --dataset squad"
    answer = make_answer().model_copy(
        update={
            "commands": Commands(),
            "estimate": AnswerEstimate(
                peft_alternative=PeftAlternative(
                    recipe="qwen3_30b_a3b_peft_config",
                    plan=Plan.sized(
                        num_gpus=4, tp=1, pp=1, cp=1, mbs=1, gbs=8, vp=None, ep=1, etp=None, sp=False
                    ),
                    commands=Commands(torchrun=lora),
                )
            ),
        }
    )
    assert answered_launch_shape(answer) == (4, 1)
    assert command_texts(answer) == [("peft_alternative.torchrun", lora)]
    own = make_answer()
    assert answered_launch_shape(own.model_copy(update={"estimate": answer.estimate}))[0] == 8  # own first
