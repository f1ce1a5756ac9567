"""Command line: reasoning-evals <command> ... (also python -m pytest_reasoning_evals)"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def serve_local(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.local_server import LocalServer, LocalServerError, PortInUse

    server = LocalServer(port=args.port, ready_timeout=args.ready_timeout, n_threads=args.n_threads)
    try:
        server.start()
    except LocalServerError as exc:
        print(f"serve-local: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, PortInUse) else 1
    print(f"serve-local: SmolLM2-135M-Instruct ready on {server.base_url} (Ctrl-C stops it)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        return server.process.wait()
    except (KeyboardInterrupt, SystemExit):
        return 0
    finally:
        server.stop()


def scan_secrets(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.secrets import main

    return main(args.paths)


def merge(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.chaosbench.gates import check_gates
    from pytest_reasoning_evals.chaosbench.merge import MergeError
    from pytest_reasoning_evals.chaosbench.merge import merge as merge_shards
    from pytest_reasoning_evals.chaosbench.report import summary_lines
    from pytest_reasoning_evals.gates import write_gates
    from pytest_reasoning_evals.report import write_report

    if args.min_accuracy is not None and not 0.0 <= args.min_accuracy <= 1.0:
        print(f"merge: --min-accuracy must be between 0 and 1, got {args.min_accuracy}", file=sys.stderr)
        return 2
    try:
        target, summary = merge_shards(
            [Path(d) for d in args.dirs], Path(args.out) if args.out else None, allow_partial=args.allow_partial
        )
    except MergeError as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
    gates = check_gates(summary, min_accuracy=args.min_accuracy, strict_items=False)
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
    from pytest_reasoning_evals.chaosbench.compare import BaselineError, baseline_file, dump_baseline

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


def report(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.chaosbench.outputs import run_files_problem
    from pytest_reasoning_evals.gates import GatesFileError
    from pytest_reasoning_evals.report import write_report

    run_dir = Path(args.run_dir)
    problem = run_files_problem(run_dir) if (run_dir / "summary.json").is_file() else None
    if problem:
        print(f"report.html not written: {problem}", file=sys.stderr)
        return 2
    try:
        written = write_report(
            run_dir, Path(args.baseline) if args.baseline else None, Path(args.out) if args.out else None
        )
    except GatesFileError as exc:
        print(f"report.html not written: {exc}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # a file no check above covers
        print(
            f"report.html not written: {run_dir}: a run file is not what a run writes, hand-edited or damaged? "
            f"({type(exc).__name__}: {exc})",
            file=sys.stderr,
        )
        return 2
    if written.path is None:
        print(written.note, file=sys.stderr)
        return 2
    print(f"report: {written.path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reasoning-evals", description="evaluation harness commands")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve-local", help="run the local SmolLM2 model behind llama.cpp's OpenAI-compatible server"
    )
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument(
        "--ready-timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)"
    )
    serve.add_argument(
        "--n-threads",
        type=int,
        default=None,
        help="CPU threads for llama.cpp (default: all; use 1 when other processes share the machine)",
    )
    serve.set_defaults(run=serve_local)

    scan = commands.add_parser("scan-secrets", help="fail on API-key shapes in cassettes, snapshots and results")
    scan.add_argument("paths", nargs="*", help="files or directories (default: cassettes snapshots results)")
    scan.set_defaults(run=scan_secrets)

    merging = commands.add_parser("merge", help="merge the directories of a sharded run into one run directory")
    merging.add_argument("dirs", nargs="+", metavar="DIR", help="shard run directories (<model>_<mode>_shard<i>of<K>)")
    merging.add_argument(
        "--out", default=None, help="merged run directory (default: <model>_<mode> beside the first shard)"
    )
    merging.add_argument(
        "--min-accuracy",
        type=float,
        default=None,
        metavar="X",
        help="gate: exit 1 when the merged overall accuracy < X (0..1)",
    )
    merging.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge shards that stopped early (the merged summary says complete: false)",
    )
    merging.set_defaults(run=merge)

    page = commands.add_parser("report", help="(re)build report.html of a run directory from its output files")
    page.add_argument(
        "run_dir",
        metavar="RUN_DIR",
        help="a ChaosBench (<model>_<mode>) or dialectic (<model>_dialectic) run directory",
    )
    page.add_argument(
        "--baseline",
        default=None,
        metavar="PATH",
        help="compare with an earlier run directory (or a baseline file) on the page; the run's own files are not changed",
    )
    page.add_argument(
        "--out", default=None, metavar="FILE", help="where to write the page (default: RUN_DIR/report.html)"
    )
    page.set_defaults(run=report)

    base = commands.add_parser(
        "baseline", help="write a ChaosBench run's per-item results as a baseline file to commit (for --eval-baseline)"
    )
    base.add_argument("run_dir", metavar="RUN_DIR", help="a ChaosBench run directory (<model>_<mode>)")
    base.add_argument(
        "out", metavar="OUT", help="the baseline file to write, e.g. snapshots/smollm2-135m_zeroshot.baseline.json"
    )
    base.set_defaults(run=baseline)

    spot = commands.add_parser("spotcheck-import", help="human-judge agreement from a filled spot-check queue")
    spot.add_argument("filled", help="the spot-check queue with the rubric scores filled in (JSONL)")
    spot.add_argument(
        "--results", required=True, help="the dialectic run folder with spotcheck_key.json (results/<model>_dialectic)"
    )
    spot.set_defaults(run=spotcheck_import)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
