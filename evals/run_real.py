"""Run only the real-question set, for quick iteration: `python -m evals.run_real --report /tmp/real`.

`autorecipe eval` runs the same rows (with the golden set); this entry point skips the 184 golden rows and
retrieval. It asks the dev rows unless `--split all` is given, and never prints a held-out row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant.errors import UserError
from evals.metrics import THRESHOLDS, Summary
from evals.real import real_gates, summarize_real
from evals.report import write_real_report
from evals.run import (
    DEFAULT_REAL_SET,
    default_answer_fn,
    default_conversation_factory,
    default_facts,
    load_real,
    run_real_rows,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.run_real", description=__doc__)
    parser.add_argument("--set", type=Path, default=DEFAULT_REAL_SET, help="real-question JSONL file")
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--version", help="only the rows of this Megatron-Bridge version")
    parser.add_argument("--report", type=Path, default=Path("eval-report-real"), help="output directory")
    args = parser.parse_args(argv)
    try:
        rows = load_real(args.set)
    except UserError as error:
        print(error, file=sys.stderr)
        return 2
    rows = [r for r in rows if args.split == "all" or r.split == args.split]
    rows = [r for r in rows if args.version is None or r.version == args.version]
    scores, answers = run_real_rows(
        rows,
        answer_fn=default_answer_fn(),
        facts_for=default_facts,
        new_conversation=default_conversation_factory(),
    )
    real = summarize_real(scores)
    summary = Summary(
        data={"real": real},
        # the threshold was measured on the whole dev split; a held-out or one-version run is not gated
        gates=real_gates(real, THRESHOLDS) if args.split != "heldout" and args.version is None else [],
    )
    write_real_report(real, scores, answers, args.report)
    for name, block in real["by_split"].items():
        if block["rows"]:
            print(f"{name}: {block['passed']}/{block['rows']} passed ({block['pass_rate']})")
    for gate in summary.gates:
        print(f"  {'PASS' if gate.ok else 'FAIL'}  {gate.name} = {gate.value} ({gate.threshold})")
    print(f"report in {args.report}/real_report.md")
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
