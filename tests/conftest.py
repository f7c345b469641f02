"""Shared fixtures: offline environment, one real index of the bundled knowledge base per session, and the
upstream mirrors: tests marked `mirror` are deselected, loudly, when the setting naming a mirror is absent."""

from __future__ import annotations

import os
import re

for _var, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ[_var] = _value

import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from assistant.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SKILL_SEED = REPO.parent / "shared" / "seeds" / "000_7a19b8649c0bf7c3.txt"

# The upstream bare git mirrors, from the settings ingest reads too (no machine path here: .ci/run sets them).
MIRROR_SETTINGS = {
    "AUTORECIPE_BRIDGE_GIT": "the Megatron-Bridge git mirror",
    "AUTORECIPE_MCORE_GIT": "the Megatron-LM git mirror",
}
BRIDGE_GIT = Path(os.environ.get("AUTORECIPE_BRIDGE_GIT") or "/nonexistent-AUTORECIPE_BRIDGE_GIT")
MCORE_GIT = Path(os.environ.get("AUTORECIPE_MCORE_GIT") or "/nonexistent-AUTORECIPE_MCORE_GIT")
_deselected_for_mirror: dict[str, int] = {}  # unset setting -> how many tests it kept out


FAST_SELECTION = "not slow and not integration and not mirror"
WHOLE_MODULE_SLOW = re.compile(r"^pytestmark = \[?\s*pytest\.mark\.(slow|integration)\b", re.MULTILINE)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help=f"the pure units (make test-fast): -m '{FAST_SELECTION}', and modules marked slow or "
        "integration as a whole are not even imported (Gradio, Chroma and torch take seconds to import)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under --fast a module whose `pytestmark` starts with slow or integration is not imported."""
    is_test_module = collection_path.suffix == ".py" and collection_path.name.startswith("test_")
    if config.getoption("fast") and is_test_module:
        return bool(WHOLE_MODULE_SLOW.search(collection_path.read_text(encoding="utf-8"))) or None
    return None


def pytest_configure(config: pytest.Config) -> None:
    """A mirror setting that names no directory is a mistake to stop on, not a reason to run less."""
    if config.getoption("fast"):
        config.option.markexpr = FAST_SELECTION
    for setting, what in MIRROR_SETTINGS.items():
        value = os.environ.get(setting)
        if value and not Path(value).is_dir():
            raise pytest.UsageError(f"{setting}={value}: {what} is not there (unset it to deselect them)")


def _needed_settings(item: pytest.Item) -> tuple[str, ...]:
    marker = item.get_closest_marker("mirror")
    return () if marker is None else (marker.args or ("AUTORECIPE_BRIDGE_GIT",))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect `mirror` tests whose settings are unset (counted in the summary, never a silent skip),
    and mark every test that builds the shared index `slow` so `make test-fast` leaves it out."""
    keep, dropped = [], []
    for item in items:
        if "index_settings" in item.fixturenames:
            item.add_marker(pytest.mark.slow)
        missing = [setting for setting in _needed_settings(item) if not os.environ.get(setting)]
        for setting in missing:
            _deselected_for_mirror[setting] = _deselected_for_mirror.get(setting, 0) + 1
        (dropped if missing else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_terminal_summary(terminalreporter) -> None:
    for setting, count in _deselected_for_mirror.items():
        terminalreporter.write_line(
            f"DESELECTED {count} tests marked `mirror`: {setting} is not set; point it at "
            f"{MIRROR_SETTINGS[setting]} (a bare clone) to run them",
            yellow=True,
            bold=True,
        )


@pytest.fixture(autouse=True)
def fast_units_stay_off_the_answer_service(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under --fast a test that answers a question through the service fails, with the marker to add: the
    whole service is what `integration` means, and its cold start (catalogs, retriever, jieba) is what kept
    `make test-fast` over a minute."""
    if not request.config.getoption("fast"):
        return

    def refuse(*_args: object, **_kwargs: object) -> None:
        pytest.fail(f"{request.node.nodeid} answers through the service: mark it @pytest.mark.integration")

    monkeypatch.setattr("assistant.service._answer_turn", refuse)


@pytest.fixture(scope="session", autouse=True)
def shared_model_export(tmp_path_factory):
    """One ONNX export of the embedding model for the whole run, whatever data directory a test uses."""
    os.environ["AUTORECIPE_EMBEDDING_EXPORT_DIR"] = str(tmp_path_factory.mktemp("models"))
    yield
    os.environ.pop("AUTORECIPE_EMBEDDING_EXPORT_DIR", None)


@pytest.fixture(scope="session")
def index_settings(tmp_path_factory) -> Settings:
    """Settings whose data directory holds a real index of the bundled knowledge base (built once)."""
    from ingest.build import ingest

    settings = Settings(data_dir=tmp_path_factory.mktemp("index"))
    ingest(settings, [])
    return settings


@pytest.fixture(scope="session")
def retriever(index_settings):
    from assistant.retrieval import make_retriever

    return make_retriever(index_settings)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen, seconds: float = 120) -> None:
    """Poll `url` until it answers; fail with the server's stderr if it exits or never comes up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited early: {process.stderr.read() if process.stderr else ''}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    process.kill()
    pytest.fail(f"{url} did not come up within {seconds:.0f} s")


def empty_knowledge_base(root: Path) -> Path:
    """A knowledge base with no guide pages and no catalogs: only what a test ingests itself."""
    (root / "guide").mkdir(parents=True)
    (root / "catalogs").mkdir()
    return root
