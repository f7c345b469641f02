"""`autorecipe skill export`: the generated skill names only what the version's catalog has, every command
parses with the version's own launcher, and every index row repeats the catalog's sizes and GPU counts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from assistant.catalog import load_catalog
from assistant.errors import UserError
from evals.metrics import VersionFacts, build_launcher_parser, check_command, launcher_argv
from tests.conftest import BRIDGE_GIT, MCORE_GIT, REPO
from ui.skill_export import (
    EVALS_FILE,
    INDEX_FILE,
    SKILL_FILE,
    catalog_from_source,
    check_defaults,
    own_cluster,
    render_skill,
    write_skill,
)

pytestmark = pytest.mark.integration  # skills rendered from whole catalogs, and the CLI

# Private names (_nemotron_3_ultra_...) are records too; a placeholder's tail (<model>_sft_config) is not.
RECIPE = re.compile(r"(?<![A-Za-z0-9_>*}])_?[a-z0-9][a-z0-9_]*_config\b")
FENCE = re.compile(r"```bash\n(.*?)```", re.S)
SECTIONS_EN = (
    "How to use this skill", "First-answer checklist", "Entry points", "Recipe index", "Decision tree",
    "Parallelism resizing rules", "Batch size tuning", "Pitfalls with exact error texts", "Override examples",
    "Quick reference", "Code index", "Recipes whose defaults fail their own checks",
)  # fmt: skip
LAYOUT = re.compile(r"(TP|PP|VP|CP|EP|ETP) (\d+)")


@pytest.fixture(scope="module", params=["0.6.0", "main"])
def exported(request):
    catalog = load_catalog(request.param)
    return catalog, render_skill(catalog, "en")


def _names(catalog) -> set[str]:
    return {n for r in catalog.recipes for n in (r.name, r.canonical, *r.aliases)}


def _index_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("| `"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_every_recipe_name_exists_in_the_versions_catalog(exported):
    catalog, files = exported
    named = {m for text in files.values() for m in RECIPE.findall(text)}
    assert "llama3_8b_pretrain_config" in named
    assert named - _names(catalog) == set()


def test_every_command_parses_with_the_versions_launcher(exported):
    catalog, files = exported
    facts = VersionFacts.from_catalog(catalog)
    blocks = [b for text in files.values() for b in FENCE.findall(text)]
    assert len(blocks) >= 6
    slurm = catalog.launcher.slurm
    for block in blocks:
        checked = check_command("skill", block, facts)
        if checked is None:  # train.sh: the Slurm wrapper's flags plus the run_recipe.py flags it passes on
            assert slurm is not None and slurm.entry in block
            parser = build_launcher_parser([*slurm.flags, *catalog.launcher.flags])
            (argv,) = launcher_argv(block, slurm.entry)
            args, rest = parser.parse_known_args(argv)
            assert not rest and args.recipe in _names(catalog)
            continue
        assert checked.valid, (checked.detail, block)


def _rows_by_kind(text: str) -> list[tuple[str, list[str]]]:
    """Index rows with the kind of the section they sit in (a name can be both library and benchmark)."""
    library, benchmark = text.split("## Benchmark recipes", 1)
    return [("library", row) for row in _index_rows(library)] + [
        ("benchmark", row) for row in _index_rows(benchmark)
    ]


def test_index_rows_repeat_the_catalogs_sizes_and_gpus(exported):
    catalog, files = exported
    by_name = {(r.kind, r.name): r for r in catalog.recipes}
    rows = _rows_by_kind(files[INDEX_FILE])
    assert len(rows) == len(catalog.recipes)
    for kind, (name_cell, mode, layout, seq, gbs, gpus, *_) in rows:
        record = by_name[kind, RECIPE.findall(name_cell)[0]]
        p = record.parallelism
        shown = {k: int(v) for k, v in LAYOUT.findall(layout)}
        assert (shown["TP"], shown["PP"], shown["CP"]) == (p.tp or 1, p.pp or 1, p.cp or 1), record.name
        assert shown.get("VP") == p.vp and shown.get("EP", 1) == (p.ep or 1), record.name
        assert seq == str(record.seq_length or "-") and gbs == str(record.global_batch_size or "-")
        assert int(gpus.split(" ")[0]) == (record.encoded_gpus or record.min_gpus or 1), record.name
        assert mode == (record.mode or "-")


def test_quick_reference_gpus_are_the_recipes_own(exported):
    catalog, files = exported
    by_name = {r.name: r for r in catalog.recipes}
    quick = files[SKILL_FILE].split("## Quick reference", 1)[1].split("## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in quick.splitlines() if "| `" in line]
    assert len(rows) == 8
    for row in rows:
        record = by_name[RECIPE.findall(row[1])[0]]
        assert int(row[3]) == own_cluster(record).num_gpus


def test_skill_layout_sections_and_footer(exported):
    catalog, files = exported
    skill = files[SKILL_FILE]
    front = skill.split("---\n", 2)[1]
    assert re.search(r"^name: megatron-bridge-recipes-[a-z0-9-]+$", front, re.M)
    assert re.search(r"^description: .{80,}$", front, re.M)
    for heading in SECTIONS_EN:
        assert f"## {heading}\n" in skill, heading
    assert catalog.source.commit and catalog.source.commit in skill.rsplit("---", 1)[1]
    # benchmark recipes launch through train.sh in both releases (the launcher table says so)
    assert "scripts/training/train.sh --recipe <name>" in skill
    # per-recipe estimates on their own GPUs, and the change-control class of every override example
    assert re.search(r"\| \d+\.\d / \d+\.\d \| [\d,]+ \|", files[INDEX_FILE])
    examples = skill.split("## Override examples", 1)[1].split("## Quick reference", 1)[0]
    classes = set(re.findall(r"\| (convergence|execution|benchmark-only) \|", examples))
    assert classes == {"convergence", "execution", "benchmark-only"}


def test_recipes_listed_as_failing_their_own_checks_do(exported):
    catalog, files = exported
    section = files[SKILL_FILE].split("## Recipes whose defaults fail their own checks", 1)[1]
    listed = [RECIPE.findall(row[0])[0] for row in _index_rows(section)]
    assert listed
    by_name = {r.name: r for r in catalog.recipes}
    for name in listed[:10]:
        assert check_defaults(by_name[name], catalog).failing, name
    assert "llama3_8b_pretrain_2gpu_h100_bf16_config" not in listed
    assert not check_defaults(by_name["llama3_8b_pretrain_2gpu_h100_bf16_config"], catalog).failing


def test_evals_hold_the_upstream_cases_computed_for_the_version(exported):
    catalog, files = exported
    (case,) = json.loads(files[EVALS_FILE])
    expected = case["expected"]
    for name in ("qwen3_30b_a3b_sft_config", "qwen3_235b_a22b_peft_config", "llama3_8b_128k_pretrain_config",
                 "llama3_8b_pretrain_config"):  # fmt: skip
        assert name in expected["recipes"] and name in case["ground_truth"]
    assert set(expected["recipes"]) <= _names(catalog)
    assert {"mock", "squad"} <= set(expected["datasets"])
    assert "scripts/training/train.sh" in expected["launchers"]
    assert expected["classes"] == ["benchmark-only", "convergence", "execution"]


def test_060_index_shows_the_128k_recipe_as_in_code():
    files = render_skill(load_catalog("0.6.0"), "en")
    (row,) = [
        r for r in _index_rows(files[INDEX_FILE]) if r[0].startswith("`llama3_8b_128k_pretrain_config`")
    ]
    assert row[2] == "TP 4 · PP 2 · CP 8" and row[5] == "64 × h100"


def test_051_skill_uses_its_own_launchers():
    files = render_skill(load_catalog("0.5.1"), "en")
    skill = files[SKILL_FILE]
    assert "train.sh" not in skill and "--dataset llm-pretrain-mock" in skill
    assert "setup_experiment.py --model_family_name" in skill and "--gpu " in skill


def test_chinese_skill_has_the_same_index_numbers():
    catalog = load_catalog("0.6.0")
    en, zh = render_skill(catalog, "en"), render_skill(catalog, "zh")
    assert "## 首次回答检查清单" in zh[SKILL_FILE] and "## 默认值无法通过自身检查的配方" in zh[SKILL_FILE]
    assert [r[2:6] for r in _index_rows(zh[INDEX_FILE])] == [r[2:6] for r in _index_rows(en[INDEX_FILE])]
    with pytest.raises(UserError):
        render_skill(catalog, "fr")


def test_write_is_whole_and_never_clobbers_a_foreign_directory(tmp_path):
    files = {SKILL_FILE: "new\n", INDEX_FILE: "index\n", EVALS_FILE: "[]\n"}
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep")
    with pytest.raises(UserError, match="not a skill directory"):
        write_skill(files, foreign)
    assert [p.name for p in foreign.iterdir()] == ["mine.txt"]
    out = write_skill(files, tmp_path / "skill")
    (out / "stale.md").write_text("old")
    write_skill(files, out)
    assert sorted(p.name for p in out.iterdir()) == ["SKILL.md", "evals", "references"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_exports_and_refuses_bad_input(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ui.cli", "skill", "export", *args], cwd=REPO,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    done = run("--version", "0.6.0", "--lang", "zh", "--out", str(tmp_path / "zh"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "zh" / INDEX_FILE).is_file()
    bad = run("--version", "9.9", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "9.9" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.mirror("AUTORECIPE_BRIDGE_GIT", "AUTORECIPE_MCORE_GIT")
def test_from_a_checkout_matches_the_bundled_catalog(tmp_path):
    """With the Megatron-Core facts its release pins, as the bundled build reads them: DeepSeek-V4's
    CUDA-graph default on GB200 is Megatron-Core's to decide, and its estimate follows."""
    from ingest.catalog_build import materialise, pinned_mcore

    commit = materialise(BRIDGE_GIT, "v0.6.0", tmp_path / "tree")
    mcore = pinned_mcore(BRIDGE_GIT, "v0.6.0", MCORE_GIT)
    catalog = catalog_from_source(tmp_path / "tree", "0.6.0", mcore=mcore)
    files = render_skill(catalog, "en")
    bundled = render_skill(load_catalog("0.6.0"), "en")
    assert _index_rows(files[INDEX_FILE]) == _index_rows(bundled[INDEX_FILE])
    assert commit == load_catalog("0.6.0").source.commit
    with pytest.raises(UserError):
        catalog_from_source(tmp_path / "missing", None)


@pytest.mark.mirror("AUTORECIPE_BRIDGE_GIT", "AUTORECIPE_MCORE_GIT")
def test_cli_from_a_checkout_reads_the_megatron_core_it_pins(tmp_path):
    """`skill export --from` finds the pinned Megatron-Core by itself: in a checked-out submodule, else
    through --mcore-git at the commit the checkout's git records; with neither it warns that CUDA-graph
    defaults stay unresolved."""
    from ingest.catalog_build import MCORE_SUBMODULE, checkout_mcore, materialise, pinned_mcore
    from ingest.recipes.mcore import ENUMS, MODEL_PARALLEL_CONFIG, TRANSFORMER_CONFIG

    tree = tmp_path / "tree"
    materialise(BRIDGE_GIT, "v0.6.0", tree)
    pinned = pinned_mcore(BRIDGE_GIT, "v0.6.0", MCORE_GIT)
    assert pinned is not None and checkout_mcore(tree, MCORE_GIT) is None  # a plain tree names no commit
    env = {k: v for k, v in os.environ.items() if k != "AUTORECIPE_MCORE_GIT"}

    def export(out: str) -> subprocess.CompletedProcess:
        argv = ["skill", "export", "--from", str(tree), "--version", "0.6.0", "--out", str(tmp_path / out)]
        return subprocess.run([sys.executable, "-m", "ui.cli", *argv], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600)  # fmt: skip

    plain = export("plain")
    assert plain.returncode == 0 and "CUDA-graph" in plain.stderr, plain.stderr
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    gitlink = f"160000,{pinned.commit},{MCORE_SUBMODULE}"
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", gitlink], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pin"], check=True)
    assert checkout_mcore(tree, MCORE_GIT) == pinned
    assert checkout_mcore(tree, None) is None
    for name in (TRANSFORMER_CONFIG, MODEL_PARALLEL_CONFIG, ENUMS):
        target = tree / MCORE_SUBMODULE / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shown = subprocess.run(["git", "-C", str(MCORE_GIT), "show", f"{pinned.commit}:{name}"],
                               capture_output=True, text=True, check=True)  # fmt: skip
        target.write_text(shown.stdout)
    assert checkout_mcore(tree, None) == pinned
    done = export("skill")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    bundled = render_skill(load_catalog("0.6.0"), "en")[INDEX_FILE]
    assert _index_rows((tmp_path / "skill" / INDEX_FILE).read_text()) == _index_rows(bundled)


def test_a_self_check_recorded_in_the_catalog_is_used_as_recorded():
    """Catalogs built with ingest/self_check.py carry `self_check` on each record; it is read, not redone."""
    from types import SimpleNamespace

    from ui.skill_export import own_check

    recorded = SimpleNamespace(passes=False, gpus=256, gpu_type="b200", failing_rules=["batch-divisible"],
                               fix={"train.global_batch_size": 256})  # fmt: skip
    record = SimpleNamespace(name="nemotronh_56b_pretrain_256gpu_b200_bf16_config", self_check=recorded)
    check = own_check(record, load_catalog("0.6.0"))
    assert (check.failing, check.num_gpus, check.fix) == (
        ["batch-divisible"],
        256,
        {"train.global_batch_size": 256},
    )
    passing = SimpleNamespace(passes=True, gpus=2, gpu_type="h100", failing_rules=[], fix=None)
    assert (
        own_check(SimpleNamespace(name="x_config", self_check=passing), load_catalog("0.6.0")).failing == []
    )
