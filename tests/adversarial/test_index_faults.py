"""A damaged index costs citations only: each fault below is made on a real on-disk index, then `ask` still
answers (from the catalog and the rules, with a one-line notice when no passage can be read), `doctor`
names the damage, and the next `ingest` rebuilds the generation. A failing ingest leaves no staging."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assistant.index_health import check_index
from assistant.retrieval import make_retriever
from assistant.service import RETRIEVAL_FAILED, ask
from assistant.settings import Settings
from assistant.vectorstore import current_generation, index_root
from ingest import store as ingest_store
from ingest.build import ingest
from tests.test_ingest import small_kb

# builds, damages and rebuilds a Chroma index with the embedding model: 45 s of the fast set
pytestmark = pytest.mark.slow

QUESTION = "Llama3 8B SFT on 8 H100"


def _generation_dir(data: Path) -> Path:
    root = data / "index"
    return root / (root / "CURRENT").read_text().strip()


def _vector_segment(data: Path) -> Path:
    return next(p for p in _generation_dir(data).iterdir() if p.is_dir())


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])


FAULTS: dict[str, tuple[Callable[[Path], None], bool]] = {
    # name: (how to damage the data dir, whether readers lose their passages)
    "truncated-sqlite": (lambda d: _truncate(_generation_dir(d) / "chroma.sqlite3"), False),
    "garbage-sqlite": (
        lambda d: (_generation_dir(d) / "chroma.sqlite3").write_bytes(b"\x00garbage" * 999),
        False,
    ),
    "deleted-hnsw-segment": (lambda d: shutil.rmtree(_vector_segment(d)), False),
    "broken-manifest": (lambda d: (_generation_dir(d) / "manifest.json").write_text('{"generation": '), True),
    "manifest-not-an-object": (lambda d: (_generation_dir(d) / "manifest.json").write_text("[1, 2]"), True),
    "binary-current": (lambda d: (d / "index" / "CURRENT").write_bytes(b"\xff\xfe\x00\x81gen"), True),
    "current-names-nothing": (
        lambda d: (d / "index" / "CURRENT").write_text("gen-20000101-000000-abcdef"),
        False,
    ),
    "truncated-rows": (lambda d: _truncate(_generation_dir(d) / "rows.json"), True),
    "garbage-vectors": (
        lambda d: (_generation_dir(d) / "vectors.npy").write_bytes(b"\x93NUMPY garbage"),
        True,
    ),
    "rows-vectors-mismatch": (
        lambda d: (_generation_dir(d) / "rows.json").write_text(
            json.dumps({"ids": [], "metadatas": [], "documents": []})
        ),
        True,
    ),
}


@pytest.fixture()
def built(tmp_path) -> tuple[Settings, Settings]:
    """(ingest settings over a small knowledge base, answer settings over the same index)."""
    data = tmp_path / "data"
    ingest_settings = Settings(data_dir=data, knowledge_base=small_kb(tmp_path / "kb"))
    ingest(ingest_settings, [])
    return ingest_settings, Settings(data_dir=data)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_damaged_index_costs_citations_only_and_ingest_rebuilds_it(built, fault):
    ingest_settings, answer_settings = built
    damage, readers_lose_passages = FAULTS[fault]
    damage(answer_settings.data_dir)

    health = check_index(answer_settings)
    assert health.state in ("damaged", "missing") and health.reason, health

    answer = ask(QUESTION, settings=answer_settings)
    assert answer.recipe is not None and answer.recipe.name == "llama3_8b_sft_config"
    assert answer.commands.to_json().get("torchrun")
    if readers_lose_passages:
        assert answer.citations == [] and answer.notices == [RETRIEVAL_FAILED.render("en")]
        assert answer.answer_markdown.startswith(f"_{RETRIEVAL_FAILED.render('en')}_")

    report, _ = ingest(ingest_settings, [])
    assert report.changed > 0 and report.added == report.total
    if health.state == "damaged":
        assert report.repaired
    assert check_index(answer_settings).ok
    assert current_generation(answer_settings) == report.generation
    assert make_retriever(ingest_settings).search("expert parallel sizing", k=3).hits
    again, _ = ingest(ingest_settings, [])
    assert again.changed == 0 and again.repaired is None


@pytest.mark.timeout(300)
def test_a_failing_ingest_leaves_no_staging_and_the_index_untouched(built, monkeypatch):
    ingest_settings, answer_settings = built
    before = current_generation(answer_settings)
    page = ingest_settings.knowledge_base / "guide" / "en" / "alpha.md"
    page.write_text(page.read_text().replace("explains", "clarifies"), encoding="utf-8")

    def disk_full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ingest_store, "write_rows", disk_full)
    from assistant.errors import UserError

    with pytest.raises(UserError, match="No space left on device.*free some disk space"):
        ingest(ingest_settings, [])
    root = index_root(answer_settings)
    assert list(root.glob(".staging-*")) == []
    assert current_generation(answer_settings) == before and check_index(answer_settings).ok
    assert ask(QUESTION, settings=answer_settings).notices == []

    monkeypatch.undo()
    (root / ".staging-gen-20000101-000000-abcdef").mkdir()  # what a killed ingest leaves behind
    report, _ = ingest(ingest_settings, [])
    assert (report.added, report.removed) == (1, 1)
    assert list(root.glob(".staging-*")) == []


@pytest.mark.timeout(300)
def test_doctor_reports_the_damage_in_one_screen(built):
    ingest_settings, _ = built
    env_data = str(ingest_settings.data_dir)
    command = [sys.executable, "-m", "ui.cli", "doctor"]
    env = {**__import__("os").environ, "AUTORECIPE_DATA_DIR": env_data}
    healthy = subprocess.run(command + ["--json"], capture_output=True, text=True, timeout=120, env=env)
    report = json.loads(healthy.stdout)
    assert healthy.returncode == 0 and report["ok"] and report["index"]["state"] == "ok"
    assert report["index"]["chunks"] > 0 and "0.6.0" in report["versions"]["catalogs"]
    assert report["model"]["present"] and report["versions"]["chromadb"]

    shutil.rmtree(_vector_segment(ingest_settings.data_dir))
    damaged = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert damaged.returncode == 1 and "Traceback" not in damaged.stderr
    assert "index      damaged: the vector segment" in damaged.stdout
    assert "run `autorecipe ingest`" in damaged.stdout and len(damaged.stdout.splitlines()) <= 24


def _read_only_mount(source: Path, target: Path) -> list[str] | None:
    """A command prefix that runs under a private, read-only bind mount of `source` at `target` (a real
    read-only file system: root cannot write there either), or None where mount namespaces are not allowed."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    target.mkdir()
    probe = subprocess.run(
        [unshare, "--mount", "--propagation", "private", "sh", "-c", f"mount --bind -o ro {source} {target}"],
        capture_output=True,
    )
    return None if probe.returncode else [unshare, "--mount", "--propagation", "private", "sh", "-c"]


@pytest.mark.timeout(600)
def test_a_read_only_data_dir_is_read_not_written(built, tmp_path):
    ingest_settings, _ = built
    mounted = tmp_path / "read-only"
    prefix = _read_only_mount(ingest_settings.data_dir, mounted)
    if prefix is None:
        pytest.skip("no mount namespaces here to make a read-only file system")
    python = f"AUTORECIPE_DATA_DIR={mounted} {sys.executable} -m ui.cli"
    script = (
        f"mount --bind -o ro {ingest_settings.data_dir} {mounted} && "
        f"{python} search 'expert parallel sizing' --json && echo '---' && "
        f"{python} ask 'Llama3 8B SFT on 8 H100' --json && echo '---' && "
        f"{python} doctor --json && echo '---'; {python} ingest; echo \"ingest rc=$?\""
    )
    done = subprocess.run([*prefix, script], capture_output=True, text=True, timeout=600)
    search, answer, doctor, _ = done.stdout.split("---\n")
    assert json.loads(search)["hits"]
    answer_json = json.loads(answer)
    assert answer_json["recipe"]["name"] == "llama3_8b_sft_config" and answer_json["notices"] == []
    report = json.loads(doctor)
    assert report["index"]["state"] == "ok" and report["index"]["data_dir_writable"] is False
    assert "ingest rc=2" in done.stdout and "ingest needs a writable AUTORECIPE_DATA_DIR" in done.stderr
    assert "Traceback" not in done.stderr
