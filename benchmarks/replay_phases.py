"""Where a replay's time goes: the phases of one bare pytest run and one eval replay, side by side.

    python benchmarks/replay_phases.py [--size 20000] [--repeat 3] [--workers 0]

It writes the fixture of replay_throughput.py (N questions, N cassettes, N bare no-op items),
replays it once to build the cassette index, then runs bare pytest and the warm eval replay
alternately, `--repeat` times each, with a small plugin that notes the time at each phase:

- start: from the process's start to the plugins' import (Python, pytest and the plugins);
- collection: to the first item (the bank read, parametrizing, the items made);
- items: the run loop (per item: its fixtures, the call, its reports and every hook);
- session end: every plugin's pytest_sessionfinish (the eval's outputs: summary, CSV, report.html);
- summary: the terminal summary and pytest_unconfigure;
- exit: from the last atexit handler to the process's end (Python freeing the items and modules).

Each figure is the median of the rounds; "extra" is eval minus bare, and per item in microseconds
for the item loop. Nothing is asserted: run it by hand and read the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay_throughput import BARE_CACHE, eval_args, write_fixture  # noqa: E402

PHASES = ("start", "collection", "items", "session end", "summary", "exit")

# The plugin the runs load (-p replay_phases_marks): the time at each boundary, written at exit.
MARKS = """
import atexit, json, os, time
import pytest
MARKS = {"imported": time.time()}

@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    MARKS["loop"] = time.time()

class _Ends:
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self):
        MARKS["finish"] = time.time()

    @pytest.hookimpl(tryfirst=True)
    def pytest_terminal_summary(self):
        MARKS["summary"] = time.time()

def pytest_configure(config):
    config.pluginmanager.register(_Ends(), "replay-phases-ends")

@atexit.register  # registered first, so it runs last of the atexit handlers
def _written():
    MARKS["atexit"] = time.time()
    with open(os.environ["REPLAY_PHASES_OUT"], "w") as out:
        json.dump(MARKS, out)
"""


def phases_of(args: list[str], root: Path) -> dict[str, float]:
    """One pytest process over `args`: seconds per phase."""
    out = root / "phases.json"
    env = {**os.environ, "PYTHONPATH": str(root), "REPLAY_PHASES_OUT": str(out)}
    started = time.time()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "-p", "replay_phases_marks"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    ended = time.time()
    if result.returncode != 0:
        sys.exit(f"pytest {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}")
    m = json.loads(out.read_text())
    return {
        "start": m["imported"] - started,
        "collection": m["loop"] - m["imported"],
        "items": m["finish"] - m["loop"],
        "session end": m["summary"] - m["finish"],
        "summary": m["atexit"] - m["summary"],
        "exit": ended - m["atexit"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="0")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-phases-") as tmp:
        root = Path(tmp)
        write_fixture(root, options.size)
        (root / "replay_phases_marks.py").write_text(MARKS)
        common = ["-q", "--tb=no", "-p", "no:randomly", "-n", options.workers]
        bare = ["test_bare.py", *common, "-o", f"cache_dir={BARE_CACHE}"]
        evals = [*eval_args(root), *common]
        phases_of(evals, root)  # the cassette index: every later replay is warm
        phases_of(bare, root)  # bare pytest's own cache folder, as in the warm state
        rounds = [(phases_of(bare, root), phases_of(evals, root)) for _ in range(options.repeat)]
    bare_s = {p: statistics.median(r[0][p] for r in rounds) for p in PHASES}
    eval_s = {p: statistics.median(r[1][p] for r in rounds) for p in PHASES}
    print(f"{options.size} items, -n {options.workers}, warm, median of {options.repeat} rounds")
    print(f"{'phase':<12} {'bare s':>8} {'eval s':>8} {'extra s':>8}")
    for phase in PHASES:
        print(f"{phase:<12} {bare_s[phase]:>8.2f} {eval_s[phase]:>8.2f} {eval_s[phase] - bare_s[phase]:>+8.2f}")
    total_bare, total_eval = sum(bare_s.values()), sum(eval_s.values())
    print(f"{'total':<12} {total_bare:>8.2f} {total_eval:>8.2f} {total_eval - total_bare:>+8.2f}")
    per_item = (eval_s["items"] - bare_s["items"]) / options.size * 1e6
    print(f"eval / bare {total_eval / total_bare:.2f}; the item loop's extra: {per_item:.0f} us an item")


if __name__ == "__main__":
    os.environ.pop("PYTEST_ADDOPTS", None)
    main()
