"""The page writer a large run starts ahead (report.PageWriter): it imports what a page needs,
then writes the page of the run directory read from stdin as `reasoning-evals report RUN_DIR`
does (same output, same exit status); stdin closed with nothing sent: it ends.

    python -m pytest_reasoning_evals.report
"""

from __future__ import annotations

import contextlib
import sys

from pytest_reasoning_evals.__main__ import main
from pytest_reasoning_evals.declarations import declared_protocols, load

# imported before the run directory comes: what the run's end no longer waits for
with contextlib.suppress(ModuleNotFoundError):
    from pytest_reasoning_evals.report import charts, page  # noqa: F401 - without the extra: report's own note

    for info in declared_protocols():
        if info.report_view:
            load(info.report_view)

if __name__ == "__main__":
    run_dir = sys.stdin.readline().rstrip("\n")
    sys.exit(main(["report", run_dir]) if run_dir else 0)
