"""The one embedding model (MiniLM from sentence-transformers), run where it is cheapest.

Importing sentence-transformers costs seconds (torch, transformers, sklearn) for a query that takes
milliseconds once loaded. So ingest exports the sentence-transformers model, pooling and normalisation
included, to ONNX once per model (`export_onnx`), and queries and ingest run that file with onnxruntime
and tokenizers. Without a usable export, sentence-transformers itself embeds, after a notice.
The choice and its measurements: docs/embedding-runtime.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import uuid
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from assistant.errors import UserError

log = logging.getLogger(__name__)

EXPORT_FORMAT = 1  # bump when the export's graph or manifest changes, so older exports are redone
OPSET = 17
ONNX_FILE = "model.onnx"
MANIFEST_FILE = "export.json"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
BATCH = 32  # texts per run, sorted by length so a batch pads little


class Encoder(Protocol):
    runtime: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text, in the order given."""


def _check_model(model_path: str) -> Path:
    path = Path(model_path)
    if not (path / "modules.json").exists():
        raise UserError(
            f"embedding model not found at {model_path}; set AUTORECIPE_EMBEDDING_MODEL_PATH "
            "to a sentence-transformers directory"
        )
    return path


def source_fingerprint(model_path: str) -> dict[str, list[int]]:
    """Size and mtime of every file of the model directory: cheap to check on each start, and any
    change to the weights, tokenizer or pooling config makes the export stale."""
    root = _check_model(model_path)
    return {
        p.relative_to(root).as_posix(): [p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def export_dir(cache_dir: Path, model_path: str) -> Path:
    digest = hashlib.sha256(str(Path(model_path).resolve()).encode()).hexdigest()[:12]
    return cache_dir / f"onnx-{digest}"


def usable_export(cache_dir: Path, model_path: str) -> Path | None:
    """The export directory of this model when it is whole and made from the model as it is now."""
    target = export_dir(cache_dir, model_path)
    try:
        manifest = json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("format") != EXPORT_FORMAT or manifest.get("source") != source_fingerprint(model_path):
        return None
    return target if (target / ONNX_FILE).exists() and (target / "tokenizer.json").exists() else None


def _max_seq_length(model_path: Path) -> int:
    config = json.loads((model_path / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config["max_seq_length"])


def export_onnx(model_path: str, cache_dir: Path) -> Path:
    """Trace the sentence-transformers pipeline (transformer, pooling, normalise) to ONNX, atomically.

    The same model and library versions give the same bytes (the manifest keeps the file's sha256)."""
    import torch  # the exporter needs torch; only ingest comes here
    from sentence_transformers import SentenceTransformer

    source = _check_model(model_path)
    model = SentenceTransformer(str(source), device="cpu", local_files_only=True).eval()

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, pipeline):
            super().__init__()
            self.pipeline = pipeline

        def forward(self, input_ids, attention_mask, token_type_ids):
            features = dict(zip(INPUT_NAMES, (input_ids, attention_mask, token_type_ids), strict=True))
            return self.pipeline(features)["sentence_embedding"]

    # A padded example, so the trace keeps the attention mask as an input rather than a constant.
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    mask = (ids != 0).long()
    target = export_dir(cache_dir, model_path)
    staging = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
    staging.mkdir(parents=True)
    try:
        dynamic = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
        # The tracer warns about Python-level branches on shapes; the padded example above keeps the mask.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                SentenceEmbedding(model),
                (ids, mask, torch.zeros_like(ids)),
                str(staging / ONNX_FILE),
                input_names=list(INPUT_NAMES),
                output_names=["sentence_embedding"],
                dynamic_axes={**dynamic, "sentence_embedding": {0: "batch"}},
                opset_version=OPSET,
                dynamo=False,
            )
        shutil.copyfile(source / "tokenizer.json", staging / "tokenizer.json")
        # lazy: sentence-transformers (and torch) loads only on this path (start-up time)
        import sentence_transformers

        manifest = {
            "format": EXPORT_FORMAT,
            "model_path": str(source.resolve()),
            "source": source_fingerprint(model_path),
            "max_seq_length": model.max_seq_length,
            "opset": OPSET,
            "producer": {
                "sentence-transformers": sentence_transformers.__version__,
                "torch": torch.__version__,
            },
            "sha256": hashlib.sha256((staging / ONNX_FILE).read_bytes()).hexdigest(),
        }
        (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


class OnnxEncoder:
    """The exported model on onnxruntime: imports numpy, onnxruntime and tokenizers only."""

    runtime = "onnx"

    def __init__(self, export: Path, threads: int):
        # lazy: onnxruntime loads only on this path (start-up time)
        import onnxruntime
        from tokenizers import Tokenizer

        manifest = json.loads((export / MANIFEST_FILE).read_text(encoding="utf-8"))
        self._tokenizer = Tokenizer.from_file(str(export / "tokenizer.json"))
        self._tokenizer.enable_truncation(int(manifest["max_seq_length"]))
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Busy-waiting worker threads steal the other core from whoever shares the machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(export / ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self._session.get_outputs()[0].shape[1]), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in batch)
            feed = {name: np.zeros((len(batch), width), dtype=np.int64) for name in INPUT_NAMES}
            for row, i in enumerate(batch):
                tokens = encodings[i]
                feed["input_ids"][row, : len(tokens.ids)] = tokens.ids
                feed["attention_mask"][row, : len(tokens.ids)] = tokens.attention_mask
                feed["token_type_ids"][row, : len(tokens.ids)] = tokens.type_ids
            out[batch] = self._session.run(None, feed)[0]
        return out


class SentenceTransformerEncoder:
    """The fallback: the model through sentence-transformers (imports torch)."""

    runtime = "sentence-transformers"

    def __init__(self, model_path: str, threads: int):
        import torch  # the fallback runtime; absent from the ONNX path
        from sentence_transformers import SentenceTransformer

        self._torch = torch
        self._threads = threads
        self._model = SentenceTransformer(str(_check_model(model_path)), device="cpu", local_files_only=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        previous = self._torch.get_num_threads()
        self._torch.set_num_threads(self._threads)
        try:
            return self._model.encode(
                texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
            ).astype(np.float32)
        finally:
            self._torch.set_num_threads(previous)


def _notice(message: str) -> None:
    log.warning(message)
    print(f"note: {message}", file=sys.stderr)


# One query runs on one thread: on two busy cores, two threads spin against each other (measured
# 480 ms vs 8 ms per MiniLM query with torch). Ingest embeds thousands of passages and uses every core.
QUERY_THREADS = 1
INGEST_THREADS = max(1, os.cpu_count() or 1)


@lru_cache(maxsize=2)
def query_encoder(model_path: str, cache_dir: Path) -> Encoder:
    """Loaded once per process, so a long-running front end keeps the model warm."""
    export = usable_export(cache_dir, model_path)
    if export is not None:
        return OnnxEncoder(export, QUERY_THREADS)
    _notice(
        f"no ONNX export of the embedding model in {cache_dir}; using sentence-transformers, which takes "
        "seconds to import (run `autorecipe ingest` to make the export)"
    )
    return SentenceTransformerEncoder(model_path, QUERY_THREADS)


def start_export(model_path: str, cache_dir: Path) -> subprocess.Popen | None:
    """Begin the export in a child process when none is usable, so importing torch and tracing (seconds,
    mostly one core) overlap ingest's chunking, BM25 tokens and Chroma set-up on the other core.

    Only a head start: `ingest_encoder` waits for it and, if it failed, exports (or falls back) itself."""
    if usable_export(cache_dir, model_path) is not None:
        return None
    package_root = str(Path(__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "assistant.embedding", model_path, str(cache_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def ingest_encoder(model_path: str, cache_dir: Path, started: subprocess.Popen | None = None) -> Encoder:
    """The export, made first when it is missing or stale; sentence-transformers if exporting fails.
    `started` is an export begun by `start_export`, waited for first."""
    if started is not None:
        started.wait()
    export = usable_export(cache_dir, model_path)
    if export is None:
        try:
            export = export_onnx(model_path, cache_dir)
        except UserError:
            raise
        except Exception as error:  # noqa: BLE001 - exporter failures vary (onnx missing, tracing errors)
            _notice(f"could not export the embedding model to ONNX ({error}); using sentence-transformers")
            return SentenceTransformerEncoder(model_path, INGEST_THREADS)
    return OnnxEncoder(export, INGEST_THREADS)


if __name__ == "__main__":  # the child process of start_export
    export_onnx(sys.argv[1], Path(sys.argv[2]))
