"""Command line: reasoning-evals <command> ... (also python -m pytest_reasoning_evals)"""

from __future__ import annotations

import argparse
import math
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


def report(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.gates import GatesFileError
    from pytest_reasoning_evals.report import write_report

    run_dir = Path(args.run_dir)
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
    if written.warning:
        print(written.warning, file=sys.stderr)
    return 0


def runs(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.runs_table import collect, markdown, step_summary, write_outputs

    folders = [Path(d) for d in args.dirs]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        print(f"runs: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else folders[0]
    if out.exists() and not out.is_dir():
        print(f"runs: --out {out}: not a folder", file=sys.stderr)
        return 2
    collected = collect(folders, alpha=args.alpha)
    if not any(table["rows"] for table in collected["tables"]):
        print(f"runs: no run directory under {', '.join(args.dirs)}", file=sys.stderr)
        return 2
    print(markdown(collected), end="")
    try:
        written, note = write_outputs(collected, out)
    except OSError as exc:
        print(f"runs: cannot write into {out} ({exc.strerror or exc}): name another folder with --out", file=sys.stderr)
        return 2
    print(f"runs: wrote {', '.join(str(p) for p in written)}")
    if note:
        print(note)
    summary = step_summary(collected)
    if summary:
        print(summary)
    return 0


def cassettes_prune(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.cassette_prune import prune

    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    return prune(pytest_args, args.dry_run, Path.cwd())


def batch_cancel(args: argparse.Namespace) -> int:
    from pytest_reasoning_evals.batch.cancel import cancel_batches

    models_file = Path(args.models_file) if args.models_file else None
    return cancel_batches(
        Path(args.run_dir), models_file, args.base_url, print, lambda line: print(line, file=sys.stderr)
    )


def level(text: str) -> float:
    """--alpha: a test level strictly between 0 and 1 (nan, 0, 1 or more would make every test, or none, significant)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (exclusive), got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reasoning-evals", description="evaluation harness commands")
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (_serve_command, _scan_command, _report_command, _runs_command, _cassettes_command, _batch_command):
        add(commands)
    from pytest_reasoning_evals.declarations import declared_protocols, load, warn_left_out

    warn_left_out()
    for info in declared_protocols():
        if info.commands:
            load(info.commands)(commands)
    args = parser.parse_args(argv)
    return args.run(args)


def _serve_command(commands) -> None:
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


def _scan_command(commands) -> None:
    scan = commands.add_parser("scan-secrets", help="fail on API-key shapes in cassettes, snapshots and results")
    scan.add_argument("paths", nargs="*", help="files or directories (default: cassettes snapshots results)")
    scan.set_defaults(run=scan_secrets)


def _report_command(commands) -> None:
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


def _runs_command(commands) -> None:
    table = commands.add_parser(
        "runs",
        help="many runs side by side: a table of every run directory under the folders, with paired comparisons",
    )
    table.add_argument("dirs", nargs="+", metavar="DIR", help="folders holding run directories (or run directories)")
    table.add_argument(
        "--alpha",
        type=level,
        default=0.05,
        help="level of the pairwise tests after Holm's correction (default 0.05)",
    )
    table.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where runs.json, runs.csv, runs.md and runs.html go (default: the first DIR)",
    )
    table.set_defaults(run=runs)


def _cassettes_command(commands) -> None:
    tapes = commands.add_parser("cassettes", help="manage the cassettes").add_subparsers(dest="action", required=True)
    prune = tapes.add_parser(
        "prune",
        help="replay a pytest command with no call and drop the interactions it did not play from the cassettes it read",
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would be dropped; change nothing")
    prune.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        metavar="-- PYTEST_ARGS",
        help="the command whose configurations are kept (every --eval-prompts folder of it), after --",
    )
    prune.set_defaults(run=cassettes_prune)


def _batch_command(commands) -> None:
    batches = commands.add_parser("batch", help="the batches of a run with --eval-batch").add_subparsers(
        dest="action", required=True
    )
    cancel = batches.add_parser(
        "cancel", help="cancel on the provider every batch of a run directory's batch.json that has not ended"
    )
    cancel.add_argument("run_dir", metavar="DIR", help="the run directory whose batch.json holds the batches")
    cancel.add_argument(
        "--models-file", default=None, metavar="FILE", help="the models file the run used (its --eval-models-file)"
    )
    cancel.add_argument(
        "--base-url", default=None, metavar="URL", help="the base URL the run used (its --eval-base-url)"
    )
    cancel.set_defaults(run=batch_cancel)


if __name__ == "__main__":
    sys.exit(main())
