"""Record `ask --json` for every golden question, and diff two such records.

A restructuring that must not change answers (typed records, message catalogs) is checked by taking a
snapshot before and after and diffing them: one JSON line per (row, answer language), keys in output order,
so a renamed key, a reordered key or a changed sentence all show. Each row is asked in its own language and
again with the other language forced, so both message catalogs are covered.

    python -m evals.answer_snapshot --out before.jsonl
    python -m evals.answer_snapshot --diff before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from evals.run import DEFAULT_SET, GoldenRow, load_golden

# Keys whose values change from run to run (timings, generated ids); their values become "<volatile>".
VOLATILE_KEYS = frozenset(
    {"latency_ms", "elapsed_ms", "elapsed", "duration", "timestamp", "created", "run_id"}
)
OTHER_LANGUAGE = {"en": "zh", "zh": "en"}


def normalise(value: Any) -> Any:
    """The answer with volatile values masked; key order kept (it is part of the JSON contract)."""
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE_KEYS else normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def snapshot_lines(
    rows: list[GoldenRow], ask: Callable[..., Any], new_conversation: Callable[[], Any]
) -> Iterator[str]:
    """One JSON line per (row, language): the row id, the forced language ("auto" = the question's) and
    the normalised answer, or the error a crash raised."""
    for row in rows:
        for lang in ("auto", OTHER_LANGUAGE.get(row.lang, "en")):
            conversation = new_conversation() if row.turns else None
            try:
                for turn in row.turns:
                    ask(turn, version=row.version, conversation=conversation, lang=lang)
                answer: Any = ask(row.question, version=row.version, conversation=conversation, lang=lang)
                payload = normalise(answer.to_json())
            except Exception as error:  # noqa: BLE001 - a crash is recorded, it must match too
                payload = {"error": f"{type(error).__name__}: {error}"}
            yield json.dumps({"id": row.id, "lang": lang, "answer": payload}, ensure_ascii=False)


def take(golden: Path, out: Path) -> int:
    # deferred: the answer stack loads when an eval runs, not when evals are imported
    from assistant.service import ask
    from assistant.session import Conversation

    rows = load_golden(golden)
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for line in snapshot_lines(rows, ask, Conversation):
            handle.write(line + "\n")
            count += 1
    print(f"{count} answers from {len(rows)} rows -> {out}")
    return 0


def _keyed(path: Path) -> dict[tuple[str, str], str]:
    entries: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        entries[(entry["id"], entry["lang"])] = json.dumps(entry["answer"], ensure_ascii=False, indent=1)
    return entries


def diff(before: Path, after: Path, *, limit: int = 200) -> int:
    """Print a unified diff per changed answer; exit status 1 when anything differs."""
    old, new = _keyed(before), _keyed(after)
    changed = 0
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key, "<missing>"), new.get(key, "<missing>")
        if a == b:
            continue
        changed += 1
        lines = list(
            difflib.unified_diff(
                a.splitlines(), b.splitlines(), f"{before}:{key}", f"{after}:{key}", lineterm=""
            )
        )
        print("\n".join(lines[:limit]))
    print(f"{changed} of {len(old.keys() | new.keys())} answers differ")
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.answer_snapshot", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="golden JSONL (default: qa.jsonl)")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="write a snapshot here")
    group.add_argument("--diff", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="diff two snapshots")
    args = parser.parse_args(argv)
    if args.diff:
        return diff(*args.diff)
    return take(args.set, args.out)


if __name__ == "__main__":
    sys.exit(main())
