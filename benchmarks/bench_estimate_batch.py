"""Time `autorecipe estimate --batch` over every recipe of a bundled catalog (default 0.6.0).

Each line estimates one recipe on the GPUs its name encodes (else its minimum, else 8) of its own GPU
type (else H100), exactly as a user's batch file would; a recipe the estimator cannot describe yields an
error line, which is counted, not hidden. Wall and CPU seconds are both printed: the machine may be shared.
--save FILE writes the batch output; --compare FILE says whether this run's output is identical to it (a speed
change must not change an answer).
Usage: python benchmarks/bench_estimate_batch.py [--version V] [--save FILE] [--compare FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from assistant.catalog import load_catalog
from assistant.rules.versions import DEFAULT_VERSION
from ui.commands.estimate import run_batch


def batch_lines(version: str) -> list[dict]:
    lines = []
    for record in load_catalog(version).recipes:
        gpus = record.encoded_gpus or record.min_gpus or 8
        args = ["--recipe", record.name, "--gpus", str(gpus), "--version", version]
        if record.gpu_type:
            args += ["--gpu-type", record.gpu_type]
        lines.append({"id": record.name, "args": args})
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--save", type=Path, help="write the batch output (JSON) here")
    parser.add_argument("--compare", type=Path, help="a --save file to compare this run's output with")
    options = parser.parse_args()
    version = options.version
    lines = batch_lines(version)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        start, cpu_start = time.perf_counter(), time.process_time()
        out = run_batch(path)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    errors = Counter(o["error"].split(";")[0][:70] for o in out if "error" in o)
    print(f"estimate --batch over {len(lines)} recipes of {version}: {elapsed:.1f} s wall, {cpu:.1f} s CPU "
          f"({len(out) - sum(errors.values())} estimated, {sum(errors.values())} error lines)")  # fmt: skip
    for message, count in errors.most_common(5):
        print(f"  {count:4d} {message}")
    text = json.dumps(out, sort_keys=True, indent=0)
    if options.save:
        options.save.write_text(text, encoding="utf-8")
    if options.compare:
        same = options.compare.read_text(encoding="utf-8") == text
        print(f"output {'identical to' if same else 'DIFFERS from'} {options.compare}")


if __name__ == "__main__":
    main()
