"""What the installed plugin costs a pytest session that collects no eval item.

Runs `python -m pytest -q` on an unrelated project of TESTS plain tests REPEAT times with the
plugin and with `-p no:pytest_reasoning_evals`, alternating (so both see the same machine load),
and prints for each the median CPU time (user + system of the pytest process) and wall time, then
the difference and the ratio, against the budget of 50 ms CPU. Run by hand, from the checkout:

    python benchmarks/plugin_overhead.py [--repeat 21] [--tests 50]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_MS = 50.0  # CPU the plugin may add to a session that does not use it


def run(args: list[str], cwd: Path) -> tuple[float, float]:
    """One pytest run -> (CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"pytest {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def project(root: Path, tests: int) -> None:
    """An unrelated project: `tests` plain tests in five modules, no eval item."""
    for module in range(5):
        body = "".join(f"def test_{module}_{i}():\n    assert {i} + 1 > {i}\n\n" for i in range(tests // 5))
        (root / f"test_app_{module}.py").write_text(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--tests", type=int, default=50)
    options = parser.parse_args()
    common = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    arms = {"with": common, "without": [*common, "-p", "no:pytest_reasoning_evals"]}
    runs: dict[str, list[tuple[float, float]]] = {arm: [] for arm in arms}
    with tempfile.TemporaryDirectory(prefix="overhead-bench-") as tmp:
        root = Path(tmp)
        project(root, options.tests)
        run(common, root)  # warm the file cache and the byte-code
        for _ in range(options.repeat):
            for arm, args in arms.items():
                runs[arm].append(run(args, root))
    cpu, wall = ({arm: statistics.median(r[k] for r in runs[arm]) * 1000 for arm in arms} for k in (0, 1))
    extra = cpu["with"] - cpu["without"]
    print(f"pytest -q, {options.tests} tests, median of {options.repeat} alternating runs each:")
    for name, figures in (("CPU", cpu), ("wall", wall)):
        print(
            f"  {name:4}: with the plugin {figures['with']:.1f} ms, without {figures['without']:.1f} ms, "
            f"difference {figures['with'] - figures['without']:+.1f} ms "
            f"(ratio {figures['with'] / figures['without']:.2f})"
        )
    verdict = "within" if extra <= BUDGET_MS else "OVER"
    print(f"  added CPU {extra:+.1f} ms: {verdict} the {BUDGET_MS:g} ms budget")


if __name__ == "__main__":
    main()
