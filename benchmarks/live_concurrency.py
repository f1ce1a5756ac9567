"""Live recording throughput: calls in flight (--eval-concurrency) against a model that takes
L seconds a call.

    python benchmarks/live_concurrency.py [--items 2000] [--latency 0.2] [--workers 2] [--concurrency 1 4 16 32]

It starts the test suite's fake OpenAI-compatible server (tests/fakeprovider.py, real HTTP on
127.0.0.1) answering every call after `--latency` seconds, writes `--items` synthetic questions,
and for each concurrency records them all from scratch (fresh cassettes, record mode once) with
`pytest -n <workers> --eval-concurrency <c>`. It prints the wall time of each run against its
ideal, items x latency / (workers x concurrency), and the speed-up over concurrency 1 when that
is measured (the baseline of the same run), the most and the mean requests the server held at
once (sampled every 10 ms while it held any), the CPU time of the pytest processes (in all and
per item) and their peak RSS (the controller's, and the largest worker's). Nothing is asserted:
run it by hand and read the table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS), str(BENCHMARKS.parent / "tests")]

from fakeprovider import FakeProvider  # noqa: E402
from replay_throughput import EVAL_MODULE, MEASURED, question  # noqa: E402

MODELS = "models:\n  bench:\n    provider: openai_compatible\n    model_id: bench-model\n    api_key_env: null\n    base_url: {url}\n"


def write_bank(root: Path, n: int) -> None:
    with (root / "bank.jsonl").open("w") as bank:
        for i in range(n):
            record = {
                k: v
                for k, v in question(i).to_dict().items()
                if k in ("id", "question", "ground_truth", "family", "split", "system_id", "template")
            }
            bank.write(json.dumps(record) + "\n")
    (root / "test_chaosbench.py").write_text(EVAL_MODULE.read_text())


def record(root: Path, server: FakeProvider, workers: str, concurrency: int) -> tuple[float, float, float, dict]:
    """(wall seconds, CPU seconds of the pytest processes, mean requests the server held while
    it held any, peak RSS MiB {"rss": controller, "workers_rss": largest worker}) of one recording
    run of every item, from empty cassettes."""
    # fresh cassettes, also for a repeated concurrency
    run = Path(tempfile.mkdtemp(prefix=f"c{concurrency}-", dir=root))
    (root / "models.yaml").write_text(MODELS.format(url=server.openai_base))
    args = [
        "test_chaosbench.py",
        "--model",
        "bench",
        f"--eval-models-file={root / 'models.yaml'}",
        f"--eval-cases={root / 'bank.jsonl'}",
        f"--eval-cassette-dir={run / 'cassettes'}",
        f"--eval-out-dir={run / 'results'}",
        "--eval-record-mode",
        "once",
        "--eval-concurrency",
        str(concurrency),
        "-n",
        workers,
        "-q",
        "--tb=no",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
    ]
    held: list[int] = []
    running = threading.Event()
    running.set()

    def sample() -> None:  # every 10 ms: how many requests the server is answering
        while running.is_set():
            if server.in_flight:
                held.append(server.in_flight)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started, cpu_before = time.perf_counter(), _children_cpu()
    measured = run / "measured.json"
    result = subprocess.run(
        [sys.executable, "-c", MEASURED, str(measured), *args], cwd=root, capture_output=True, text=True
    )
    elapsed, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
    running.clear()
    sampler.join()
    peak = json.loads(measured.read_text()) if measured.exists() else {"code": result.returncode}
    if result.returncode != 0 or peak["code"] != 0:
        sys.exit(f"pytest {' '.join(args)} failed ({peak['code']}):\n{result.stdout[-3000:]}")
    return elapsed, cpu, sum(held) / len(held) if held else 0.0, peak


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # pytest and its xdist workers, once they ended
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per call")
    parser.add_argument("--workers", default="2")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 32])
    options = parser.parse_args()
    processes = max(1, int(options.workers))
    print(f"{options.items} items, {options.latency * 1000:g} ms a call, -n {options.workers}")
    print(
        f"{'concurrency':>11} {'s':>8} {'ideal s':>8} {'x ideal':>8} {'speed-up':>9} {'max in flight':>14} "
        f"{'mean in flight':>15} {'pytest CPU s':>13} {'CPU ms/item':>12} {'RSS MiB ctl / worker':>21}"
    )
    with tempfile.TemporaryDirectory(prefix="live-bench-") as tmp:
        root = Path(tmp)
        write_bank(root, options.items)
        first = None
        for concurrency in options.concurrency:
            with FakeProvider(keep_alive=True) as server:  # connections reused, as a real provider's are
                server.delay = options.latency
                elapsed, cpu, mean_held, peak = record(root, server, options.workers, concurrency)
                in_flight = server.max_in_flight
            first = first or (concurrency, elapsed)
            ideal = options.items * options.latency / (processes * concurrency)
            speedup = f"{first[1] / elapsed:.2f}" if first[0] == 1 else "-"
            rss = f"{peak['rss']:.0f} / {peak['workers_rss']:.0f}"
            print(
                f"{concurrency:>11} {elapsed:>8.2f} {ideal:>8.2f} {elapsed / ideal:>8.2f} {speedup:>9} {in_flight:>14} {mean_held:>15.1f} {cpu:>13.1f}"
                f" {cpu / options.items * 1000:>12.2f} {rss:>21}",
                flush=True,
            )


if __name__ == "__main__":
    os.environ.pop("PYTEST_ADDOPTS", None)
    main()
