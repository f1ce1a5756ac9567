"""The floor under a replay: what pytest alone costs for an item of the eval's shape.

    python benchmarks/replay_floor.py [--size 40000] [--repeat 3]

It writes the fixture of replay_throughput.py (N questions, N cassettes, N bare no-op items) and
beside it a "shape" folder: N plain pytest items with no plugin code in them, each of the shape
of a ChaosBench item -- one parametrized argument and the five session-scoped fixtures
`test_question` takes (prompt, model, reprompt, answer words, outcome), and every second item
failed the way the plugin fails a wrong answer (its report's outcome set to failed with a one-line
reason and reported as "wrong", no exception). Then it runs, `--repeat` rounds each back to back,
bare pytest, the shape, and the warm eval replay (`-n 0`, each with its cache folder warm), and
prints each one's median seconds and its ratio to bare (median of the rounds' ratios, with their
range). What the shape costs over bare is pytest's own work for the item's fixtures and its
outcome: no change inside the plugin can take a replay below it. Nothing is asserted: run it by
hand and read the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay_throughput import BARE_CACHE, eval_args, spread, timed, write_fixture  # noqa: E402

SHAPE_CONFTEST = """
import pytest

WRONG = pytest.StashKey[str]()
RUNNING = []  # the item running now (the plugin keeps it the same way, not through `request`)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    RUNNING[:] = [item]


@pytest.fixture(scope="session")
def prompt():
    return "prompt"


@pytest.fixture(scope="session")
def model():
    return "model"


@pytest.fixture(scope="session")
def reprompt():
    return 0


@pytest.fixture(scope="session")
def answer_words():
    return {}


@pytest.fixture(scope="session")
def outcome():
    def send(i):
        if i % 2:
            RUNNING[0].stash[WRONG] = "wrong: said TRUE, gold FALSE"
    return send


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    reason = item.stash.get(WRONG, None)
    if reason is not None and report.when == "call":
        report.outcome, report.longrepr = "failed", reason
    return report


def pytest_sessionfinish(session):
    session.exitstatus = 0  # a wrong answer does not fail the session (the plugin's gates decide)


def pytest_report_teststatus(report):
    if report.when == "call" and report.failed and isinstance(report.longrepr, str):
        return "wrong", "F", "WRONG"
"""
SHAPE_MODULE = """
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_shape(i, prompt, model, reprompt, answer_words, outcome):
    outcome(i)
"""
KINDS = ("bare", "shape", "eval warm")


def write_shape(root: Path, n: int) -> None:
    folder = root / "shape"
    folder.mkdir()
    (folder / "conftest.py").write_text(SHAPE_CONFTEST)
    (folder / "test_shape.py").write_text(SHAPE_MODULE.format(n=n))


def one_round(root: Path) -> dict[str, float]:
    common = ["-q", "--tb=no", "-p", "no:randomly", "-n", "0"]
    return {
        "bare": timed(["test_bare.py", *common, "-o", f"cache_dir={BARE_CACHE}"], root)[0],
        "shape": timed(["shape", *common, "-o", f"cache_dir={BARE_CACHE}-shape"], root)[0],
        "eval warm": timed([*eval_args(root), *common], root)[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=40000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-floor-") as tmp:
        root = Path(tmp)
        write_fixture(root, options.size)
        write_shape(root, options.size)
        one_round(root)  # every cache folder and the cassette index made: each later round is warm
        rounds = [one_round(root) for _ in range(options.repeat)]
    print(f"{options.size} items, -n 0, {options.repeat} rounds")
    print(f"{'run':<10} {'seconds':>8} {'x bare':>17} {'us/item over bare':>18}")
    for kind in KINDS:
        seconds = statistics.median(r[kind] for r in rounds)
        extra = statistics.median((r[kind] - r["bare"]) / options.size * 1e6 for r in rounds)
        print(f"{kind:<10} {seconds:>8.2f} {spread([r[kind] / r['bare'] for r in rounds]):>17} {extra:>18.0f}")


if __name__ == "__main__":
    os.environ.pop("PYTEST_ADDOPTS", None)
    main()
