"""What the installed plugin costs a pytest session that collects no eval item.

Runs `python -m pytest -q` on a one-test project REPEAT times with the plugin and with
`-p no:pytest_reasoning_evals`, alternating, and prints the median wall time of each and the
difference (the issue's budget: < 50 ms). Run by hand: python benchmarks/plugin_overhead.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from replay_throughput import timed  # this script's folder is on sys.path: run it as a script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="overhead-bench-") as tmp:
        root = Path(tmp)
        (root / "test_app.py").write_text("def test_app():\n    assert 1 + 1 == 2\n")
        common = ["-q", "-p", "no:cacheprovider"]
        runs = {"with": [], "without": []}
        timed(common, root)  # warm the file cache
        for _ in range(options.repeat):
            runs["with"].append(timed(common, root)[0])  # (seconds, peak RSS)
            runs["without"].append(timed([*common, "-p", "no:pytest_reasoning_evals"], root)[0])
    with_ms, without_ms = (statistics.median(runs[k]) * 1000 for k in ("with", "without"))
    print(
        f"pytest -q, one test, median of {options.repeat}: with the plugin {with_ms:.1f} ms, "
        f"without {without_ms:.1f} ms, difference {with_ms - without_ms:+.1f} ms"
    )


if __name__ == "__main__":
    main()
