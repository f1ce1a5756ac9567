"""Live recording of dialectic cases: how much of a case's calls overlap (--eval-concurrency).

    python benchmarks/live_dialectic.py [--cases 16] [--latency 0.3] [--workers 0 2] [--concurrency 1 4] [--repeat 2]

It starts the test suite's fake OpenAI-compatible server (tests/fakeprovider.py, real HTTP on
127.0.0.1) answering every call after `--latency` seconds, writes `--cases` dialectic cases (one
variant, the model its own judge, as tests/integration/test_call_pipeline.py runs them: per case a
response, 3 judge calls and a resolution turn) and records them from scratch with
`pytest -n <workers> --eval-concurrency <c>`, each combination `--repeat` times, alternating. It
prints the median wall time of each, the calls made, and the most calls the server held at once.
A case's judges and resolution turn wait for its response and are asked in order; what
concurrency can save is the next cases' responses asked while this case's judges run. Nothing is
asserted: run it by hand and read the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS.parent / "tests")]

from fakeprovider import FakeProvider, Usage  # noqa: E402
from helpers import DIALECTIC_MODULE, FAKE_KEY_VAR, fake_models  # noqa: E402
from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file  # noqa: E402


def record(cases: list[str], latency: float, workers: str, concurrency: int) -> tuple[float, int, int]:
    """One recording from scratch -> (seconds, calls the server answered, most calls held at once)."""
    with FakeProvider() as server, tempfile.TemporaryDirectory(prefix="live-dialectic-") as tmp:
        root = Path(tmp)
        server.responder = Scripted({case: STRUCTURED for case in cases})
        server.usage, server.delay = Usage(prompt=1000, completion=0), latency
        (root / "models.yaml").write_text(fake_models(server.openai_base, price_in=1.0))
        (root / "test_dialectic_items.py").write_text(DIALECTIC_MODULE)
        cases_file(root / "cases.yaml", *((case, "dialectic") for case in cases))
        args = ["-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--model", "fake"]
        args += ["--eval-models-file", str(root / "models.yaml"), "--eval-cassette-dir", str(root / "cassettes")]
        args += ["--eval-dialectic-cases", str(root / "cases.yaml"), "--eval-variant", "dialectic"]
        args += ["--eval-out-dir", str(root / "results"), "--eval-record-mode", "once"]
        args += ["--eval-concurrency", str(concurrency), "-n", workers]
        env = {**os.environ, FAKE_KEY_VAR: "bench-key"}
        env.pop("PYTEST_ADDOPTS", None)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *args], cwd=root, env=env, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"pytest {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}")
        return elapsed, len(server.requests), server.max_in_flight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--workers", nargs="+", default=["0", "2"])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    cases = [f"c{n}" for n in range(options.cases)]
    runs = [(w, c) for w in options.workers for c in options.concurrency]
    measured: dict[tuple[str, int], list[tuple[float, int, int]]] = {run: [] for run in runs}
    for _ in range(options.repeat):
        for run in runs:
            measured[run].append(record(cases, options.latency, *run))
    print(f"{options.cases} cases, {options.latency} s a call, {options.repeat} rounds")
    print(f"{'-n':>3} {'concurrency':>11} {'seconds':>8} {'calls':>6} {'most at once':>12}")
    for (workers, concurrency), results in measured.items():
        seconds = statistics.median(r[0] for r in results)
        most = max(r[2] for r in results)
        print(f"{workers:>3} {concurrency:>11} {seconds:>8.1f} {results[0][1]:>6} {most:>12}")


if __name__ == "__main__":
    main()
