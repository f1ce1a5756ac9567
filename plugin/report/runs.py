"""A run directory -> what report.html shows: plain values only, read from the run's own files by
the view of the protocol that wrote it (ProtocolInfo.report_view); the shared readers are here."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pytest_reasoning_evals.errors import ReportError

DEFAULT_ALPHA = 0.05  # the regression test's level when the page itself compares with --baseline


def read_json(path: Path, required: bool = True):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise ReportError(f"{path.parent}: no {path.name}; is this a run directory?") from None
        return None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot be read ({exc})") from None


def read_json_lines(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReportError(f"{path.parent}: no {path.name}; is this a run directory?") from None
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a kill: the run's own readers skip it too
    return out


def row_json(row: dict) -> str:
    """An item row as the page carries it: compact JSON text (page.py makes it safe in <script>)."""
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def read_run(run_dir: Path, baseline: Path | None, cleanup: contextlib.ExitStack) -> dict:
    """The run's view, from the first protocol whose view knows the directory; what it holds open
    (spooled rows) is closed with `cleanup`."""
    from pytest_reasoning_evals.declarations import declared_protocols, load

    protocols = [info for info in declared_protocols() if info.report_view]
    for info in protocols:
        view = load(info.report_view)(run_dir, baseline, cleanup)
        if view is not None:
            return view
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such run directory")
    raise ReportError(
        f"{run_dir}: neither summary.json nor the files of another protocol's run "
        f"(installed protocols with a report: {', '.join(i.name for i in protocols) or 'none'})"
    )
