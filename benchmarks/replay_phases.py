"""Where a replay's time goes: the phases of one bare pytest run and one eval replay, side by side.

    python benchmarks/replay_phases.py [--size 20000] [--repeat 3] [--workers 0] [--components]

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
for the item loop. --components then runs the eval once more with a timer around each function of
COMPONENTS (the item's call path, the controller's record, the speed plugin's report handling) and
prints each one's total and time per call: the timers add about a microsecond a call, and a name
this version no longer has is reported, not timed. Nothing is asserted: run it by hand and read
the tables.
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
# "module:attribute path" of what --components times (a name called through its module or class)
COMPONENTS = (
    "pytest_reasoning_evals.chaosbench.items:ask",
    "pytest_reasoning_evals.budget:BudgetedModel.complete",
    "pytest_reasoning_evals.cassettes:CassetteClient.complete",
    "pytest_reasoning_evals.cassettes:CassetteClient._replay_first",
    "pytest_reasoning_evals.cassette_index:CassetteIndex.read",
    "pytest_reasoning_evals.chaosbench.scoring:score",
    "pytest_reasoning_evals.chaosbench.protocol:Protocol.add",
    "pytest_reasoning_evals.completions:CompletionsLog.append",
    "pytest_reasoning_evals.speed:SpeedPlugin.pytest_runtest_logreport",
)

# The plugin --components loads: each COMPONENTS function wrapped in a timer, the totals written at exit.
TIMERS = """
import atexit, functools, importlib, json, os, time
TOTALS = {}

def _timed(owner, name, label):
    real = getattr(owner, name)
    totals = TOTALS[label] = [0.0, 0]

    @functools.wraps(real)
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            totals[0] += time.perf_counter() - started
            totals[1] += 1
    setattr(owner, name, timed)

for target in json.loads(os.environ["REPLAY_PHASES_COMPONENTS"]):
    module, _, path = target.partition(":")
    owner = importlib.import_module(module)
    *parents, name = path.split(".")
    try:
        for parent in parents:
            owner = getattr(owner, parent)
        getattr(owner, name)
    except AttributeError:
        TOTALS[target] = None  # this version has no such function
        continue
    _timed(owner, name, target)

@atexit.register
def _written():
    with open(os.environ["REPLAY_PHASES_TIMERS"], "w") as out:
        json.dump(TOTALS, out)
"""

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


def phases_of(args: list[str], root: Path, timers: bool = False) -> dict[str, float]:
    """One pytest process over `args`: seconds per phase (`timers`: with the COMPONENTS timed too)."""
    out = root / "phases.json"
    env = {**os.environ, "PYTHONPATH": str(root), "REPLAY_PHASES_OUT": str(out)}
    plugins = ["-p", "replay_phases_marks"]
    if timers:
        env |= {"REPLAY_PHASES_COMPONENTS": json.dumps(COMPONENTS), "REPLAY_PHASES_TIMERS": str(root / "timers.json")}
        plugins += ["-p", "replay_phases_timers"]
    started = time.time()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args, *plugins],
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
    parser.add_argument("--components", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-phases-") as tmp:
        root = Path(tmp)
        write_fixture(root, options.size)
        (root / "replay_phases_marks.py").write_text(MARKS)
        (root / "replay_phases_timers.py").write_text(TIMERS)
        common = ["-q", "--tb=no", "-p", "no:randomly", "-n", options.workers]
        bare = ["test_bare.py", *common, "-o", f"cache_dir={BARE_CACHE}"]
        evals = [*eval_args(root), *common]
        phases_of(evals, root)  # the cassette index: every later replay is warm
        phases_of(bare, root)  # bare pytest's own cache folder, as in the warm state
        rounds = [(phases_of(bare, root), phases_of(evals, root)) for _ in range(options.repeat)]
        if options.components:
            phases_of(evals, root, timers=True)
            timed = json.loads((root / "timers.json").read_text())
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
    if options.components:
        print_components(timed)


def print_components(timed: dict) -> None:
    print(f"\n{'component (timed once, inclusive)':<66} {'s':>7} {'calls':>7} {'us/call':>8}")
    for target, totals in timed.items():
        if totals is None:
            print(f"{target:<66} (not in this version)")
        elif totals[1]:
            print(f"{target:<66} {totals[0]:>7.2f} {totals[1]:>7} {totals[0] / totals[1] * 1e6:>8.1f}")


if __name__ == "__main__":
    os.environ.pop("PYTEST_ADDOPTS", None)
    main()
