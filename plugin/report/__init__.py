"""report.html: one self-contained page per run directory, built only from the run's output files
(so a merged or copied run directory rebuilds the same page: `reasoning-evals report RUN_DIR`).

runs.py reads a run directory into what the page shows, charts.py draws it (matplotlib, SVG
inline), page.html.j2 lays it out (Jinja2) with its CSS and script inline: nothing is fetched
when the page opens. Jinja2 and matplotlib are the `report` extra; without them a run says so in
one line and writes everything else as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPORT_FILE = "report.html"
EXTRA_MODULES = {"jinja2", "markupsafe", "matplotlib"}  # the `report` extra
MISSING_EXTRA = ("report.html not written: it needs Jinja2 and matplotlib "
                 "(pip install 'pytest-reasoning-evals[report]')")


class ReportError(Exception):
    """A run directory the report cannot be built from (named, with what is missing)."""


@dataclass(frozen=True)
class Written:
    path: Path | None  # the page, or None when it was not written
    note: str  # the summary block's line about it


def write_report(run_dir: Path, baseline: Path | None = None, out: Path | None = None,
                 records: list[dict] | None = None) -> Written:
    """Write the page (default RUN_DIR/report.html). A missing extra or an unusable run directory
    is the returned note, never an exception: the run's results are already written.
    `records`: a ChaosBench run's records as its controller holds them (each id once, at least the
    fields runs.ESSENTIAL names), which spare the page its first read of completions.jsonl; the
    page is the same as the one built from the files alone."""
    from pytest_reasoning_evals.results import replacing

    target = out or run_dir / REPORT_FILE
    try:
        from pytest_reasoning_evals.report import page, runs  # noqa: F401 - without the extra: the note below

        view = runs.read_run(run_dir, baseline, records)  # before the temp file: a bad directory leaves nothing behind
        with replacing(target) as handle:
            page.write(view, handle)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in EXTRA_MODULES:
            raise
        return Written(None, MISSING_EXTRA)
    except (ReportError, OSError) as exc:
        return Written(None, f"report.html not written: {exc}")
    return Written(target, f"report: {target}")
