"""The dialectic protocol's reasoning-evals command: spotcheck-import (human-judge agreement)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_commands(commands) -> None:
    spot = commands.add_parser("spotcheck-import", help="human-judge agreement from a filled spot-check queue")
    spot.add_argument("filled", help="the spot-check queue with the rubric scores filled in (JSONL)")
    spot.add_argument(
        "--results", required=True, help="the dialectic run folder with spotcheck_key.json (results/<model>_dialectic)"
    )
    spot.set_defaults(run=spotcheck_import)


def spotcheck_import(args: argparse.Namespace) -> int:
    import json

    from pytest_reasoning_evals.dialectic.spotcheck import import_reviews
    from pytest_reasoning_evals.results import write_json

    results = Path(args.results)
    try:
        agreement = import_reviews(Path(args.filled), results / "spotcheck_key.json")
    except (OSError, ValueError) as exc:
        print(f"spotcheck-import: {exc}", file=sys.stderr)
        return 2
    write_json(results / "spotcheck_agreement.json", agreement)
    shown = "n/a" if agreement["agreement"] is None else f"{agreement['agreement']:.0%}"
    print(
        f"spotcheck-import: {agreement['reviewed']} reviewed, human-judge agreement {shown} "
        f"(within 2 points per dimension); {results / 'spotcheck_agreement.json'}"
    )
    if agreement["reviewed_without_judge_scores"]:
        print(
            f"spotcheck-import: {agreement['reviewed_without_judge_scores']} reviewed response(s) left out: "
            "every judge reply for them was a judge error, so there is no judge score to compare"
        )
    print(json.dumps(agreement["per_dimension"], indent=2))
    return 0
