"""ChaosBench's reasoning-evals commands: merge (a sharded run's directories into one) and baseline
(a run's per-item results as a file to commit)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_reasoning_evals.chaosbench.settings import DEFAULT_MIN_COVERAGE


def add_commands(commands) -> None:
    merging = commands.add_parser("merge", help="merge the directories of a sharded run into one run directory")
    merging.add_argument(
        "dirs", nargs="+", metavar="DIR", help="shard run directories (<model>_<mode>[_<cases>-<hash8>]_shard<i>of<K>)"
    )
    merging.add_argument(
        "--out",
        default=None,
        help="merged run directory (default: the shards' run name beside the first shard, <model>_<mode>[_<cases>-<hash8>])",
    )
    merging.add_argument(
        "--min-accuracy",
        type=float,
        default=None,
        metavar="X",
        help="gate: exit 1 when the merged overall accuracy < X (0..1)",
    )
    merging.add_argument(
        "--min-coverage",
        type=float,
        default=None,
        metavar="X",
        help=f"gate: exit 1 when the merged coverage < X (0..1; default {DEFAULT_MIN_COVERAGE}, as a run's)",
    )
    merging.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge shards that stopped early (the merged summary says complete: false)",
    )
    merging.set_defaults(run=merge)

    base = commands.add_parser(
        "baseline", help="write a ChaosBench run's per-item results as a baseline file to commit (for --eval-baseline)"
    )
    base.add_argument("run_dir", metavar="RUN_DIR", help="a ChaosBench run directory (<model>_<mode>)")
    base.add_argument(
        "out", metavar="OUT", help="the baseline file to write, e.g. snapshots/smollm2-135m_zeroshot.baseline.json"
    )
    base.set_defaults(run=baseline)


def merge(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.chaosbench.gates import check_gates
    from pytest_reasoning_evals.chaosbench.merge import MergeError
    from pytest_reasoning_evals.chaosbench.merge import merge as merge_shards
    from pytest_reasoning_evals.chaosbench.terminal import summary_lines
    from pytest_reasoning_evals.gates import write_gates
    from pytest_reasoning_evals.report import write_report

    for flag, value in (("--min-accuracy", args.min_accuracy), ("--min-coverage", args.min_coverage)):
        if value is not None and not 0.0 <= value <= 1.0:
            print(f"merge: {flag} must be between 0 and 1, got {value}", file=sys.stderr)
            return 2
    try:
        target, summary = merge_shards(
            [Path(d) for d in args.dirs], Path(args.out) if args.out else None, allow_partial=args.allow_partial
        )
    except MergeError as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
    gates = check_gates(
        summary,
        min_accuracy=args.min_accuracy,
        strict_items=False,
        min_coverage=args.min_coverage,
        floor_option="--min-coverage X (0 turns it off)",
    )
    write_gates(target, gates)
    written = write_report(target)
    print(
        f"merge: {len(args.dirs)} shards, {summary['total_questions']} questions and "
        f"{summary['dialogue_details']['total_dialogues']} dialogues"
    )
    for line in summary_lines(summary, gates, target, report=written.note):
        print(line)
    return 0 if all(g.passed for g in gates) else 1


def baseline(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.chaosbench.regression import BaselineError, baseline_file, dump_baseline

    try:
        data = baseline_file(Path(args.run_dir))
    except BaselineError as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_baseline(data), encoding="utf-8")
    right = sum(item["correct"] for item in data["items"].values())
    print(f"baseline: {len(data['items'])} items ({right} right) of {data['model']} ({data['mode']}) written to {out}")
    return 0
