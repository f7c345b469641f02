"""Benchmark: 20 concurrent chat sessions x 5 turns through the service, against a Chroma server, first
alone (the baseline), then while 5 ingests switch generations and one session sends an oversized question.

Issue 20 asks for 0 errors and 0 leakage under ingests (it was 20 failed turns and 60 turns that lost their
context), with p95 against the baseline. A session's turns name its own model and GPU count, so an answer
that carries another session's model or count is leakage. Starts `chroma run` on loopback and stops it.
Prints figures; asserts nothing. About 2-4 minutes on 2 idle cores.

    python -m benchmarks.bench_load [--sessions 20] [--ingests 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

for _var, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ.setdefault(_var, _value)

from assistant.bounds import MAX_QUESTION_CHARS  # noqa: E402
from assistant.service import ask  # noqa: E402
from assistant.session import Conversation  # noqa: E402
from assistant.settings import KNOWLEDGE_BASE, Settings  # noqa: E402
from ingest.build import ingest  # noqa: E402

MODELS = [
    ("Llama3 8B", "llama3_8b"),
    ("Qwen3 8B", "qwen3_8b"),
    ("Llama3 70B", "llama3_70b"),
    ("Qwen3 32B", "qwen3_32b"),
]
PAGES = 6
OVERSIZED = "Llama3 8B SFT on 8 H100, " * (MAX_QUESTION_CHARS // 20)


@dataclass
class Session:
    number: int
    model: str
    stem: str
    gpus: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)

    def turns(self, oversized: bool) -> list[tuple[str, int | None]]:
        """(question, the GPU count its answer must carry, or None when it carries none)."""
        third = (OVERSIZED, None) if oversized else ("what is tensor parallelism?", None)
        return [
            (f"{self.model} SFT on {self.gpus} H100", self.gpus),
            (f"and with {self.gpus * 2} GPUs?", self.gpus * 2),
            third,
            ("how do I fix CUDA out of memory?", None),
            (f"back to {self.gpus} GPUs", self.gpus),
        ]


def _chat(session: Session, settings: Settings, oversized: bool) -> None:
    conversation = Conversation()
    for question, gpus in session.turns(oversized):
        started = time.perf_counter()
        try:
            answer = ask(question, conversation=conversation, settings=settings)
        except Exception as error:  # noqa: BLE001 - every failure is counted
            session.errors.append(f"{type(error).__name__}: {error}")
            continue
        finally:
            session.latencies.append(time.perf_counter() - started)
        text = answer.answer_markdown
        if "internal error" in text.lower() or not text.strip():
            session.errors.append(f"turn {question[:30]!r}: {text[:80]!r}")
        if answer.notices and any("index could not be read" in n for n in answer.notices):
            session.errors.append(f"turn {question[:30]!r}: no citations, the index could not be read")
        if question is OVERSIZED:
            if "the limit is 8,000" not in text:
                session.errors.append("the oversized question was not refused")
            continue
        stem = answer.slots.model_stem
        if stem and stem != session.stem:
            session.leaks.append(f"session {session.number} got model {stem}")
        if gpus is not None and answer.slots.num_gpus != gpus:
            session.leaks.append(f"session {session.number} asked {gpus} GPUs, got {answer.slots.num_gpus}")


def _round(settings: Settings, sessions: int) -> list[Session]:
    # Each session its own (model, GPU count) pair: 4 models x 8, 16, 32, 64, 128 GPUs.
    people = [Session(i, *MODELS[i % len(MODELS)], gpus=8 * 2 ** (i // len(MODELS))) for i in range(sessions)]
    with ThreadPoolExecutor(max_workers=sessions) as pool:
        for future in [pool.submit(_chat, s, settings, s.number == 0) for s in people]:
            future.result()
    return people


def _ingests(settings: Settings, count: int, done: list[float]) -> None:
    page = next(iter(sorted((settings.knowledge_base / "guide" / "en").glob("*.md"))))
    for n in range(count):
        page.write_text(page.read_text(encoding="utf-8") + f"\n\nLoad-test edit {n}.\n", encoding="utf-8")
        started = time.perf_counter()
        ingest(settings, [])
        done.append(time.perf_counter() - started)


def _report(label: str, people: list[Session], seconds: float) -> None:
    latencies = sorted(t for s in people for t in s.latencies)
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    print(
        f"{label:<22} turns {len(latencies):>3}  errors {sum(len(s.errors) for s in people):>2}  "
        f"leakage {sum(len(s.leaks) for s in people):>2}  p50 {statistics.median(latencies) * 1000:6.0f} ms  "
        f"p95 {p95 * 1000:6.0f} ms  max {latencies[-1] * 1000:6.0f} ms  wall {seconds:5.1f} s"
    )
    for problem in [p for s in people for p in s.errors + s.leaks][:5]:
        print(f"  {problem}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_chroma(path: Path, port: int) -> subprocess.Popen:
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    command = [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2)
            return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("chroma run did not come up")


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)  # figures appear as they are measured
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--ingests", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        root = Path(tmp)
        # Ingests index a few guide pages, so five of them fit inside the chat (the chat reads the real
        # knowledge base for everything else).
        guide_only = root / "kb"
        (guide_only / "guide" / "en").mkdir(parents=True)
        (guide_only / "catalogs").mkdir()
        for page in sorted((KNOWLEDGE_BASE / "guide" / "en").glob("*.md"))[:PAGES]:
            shutil.copy(page, guide_only / "guide" / "en" / page.name)
        port = _free_port()
        server = _serve_chroma(root / "chroma", port)
        try:
            # The model's ONNX export from your own data dir (an earlier ingest made it), not a fresh one.
            export = Settings().resolved_embedding_export_dir()
            common = {
                "data_dir": root / "data",
                "chroma_mode": "http",
                "chroma_port": port,
                "embedding_export_dir": export,
            }
            chat_settings = Settings(**common)
            ingest_settings = Settings(**common, knowledge_base=guide_only)
            started = time.perf_counter()
            first, _ = ingest(ingest_settings, [])
            print(f"load {os.getloadavg()[0]:.1f}; first ingest {first.total} passages in "
                  f"{time.perf_counter() - started:.1f} s; {args.sessions} sessions x 5 turns")  # fmt: skip
            ask("Llama3 8B SFT on 8 H100", settings=chat_settings)  # warm the catalog and the encoder
            started = time.perf_counter()
            _report(
                "baseline (no ingests)", _round(chat_settings, args.sessions), time.perf_counter() - started
            )
            durations: list[float] = []
            writer = threading.Thread(target=_ingests, args=(ingest_settings, args.ingests, durations))
            started = time.perf_counter()
            writer.start()
            people = _round(chat_settings, args.sessions)
            rounds = 1
            while writer.is_alive():  # keep chatting until every ingest has switched generations
                people += _round(chat_settings, args.sessions)
                rounds += 1
            chat_seconds = time.perf_counter() - started
            during = len(durations)
            writer.join()
            _report(f"with {args.ingests} ingests", people, chat_seconds)
            print(f"  ({rounds} round(s) of {args.sessions} sessions, so every ingest ran under the chat)")
            spread = f"{min(durations):.1f}-{max(durations):.1f} s" if durations else "-"
            print(f"ingests: {len(durations)} done ({during} while sessions chatted), each {spread}; "
                  f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
