"""Replay throughput: eval items replayed from per-item cassettes vs bare pytest items.

    python benchmarks/replay_throughput.py [--sizes 2000 40000] [--workers 0 2] [--repeat 1] [--profile]

For each size N it writes, in a temporary folder, N synthetic questions, N one-interaction
cassettes for an OpenAI-compatible model, and a bare module of N parametrized no-op tests;
then it times, in the same run, `pytest` over the bare module and over the real ChaosBench
eval module replaying the cassettes, for each worker count, in three states: "cold" with no
pytest cache folder (the first replay after a clone: every cassette is parsed, and the cassette
index is built), "warm" with the one the previous run left (every later replay reads the
index, cassette_index.py), and "restored": the index there but every cassette file with a new
mtime (a CI job that restored .pytest_cache over a fresh checkout: each file is read for its
digest, none parsed). Bare pytest is measured cold and warm too, with a cache folder of its
own: with one, pytest itself reads back the last run's item ids (its new-first plugin is always
on), which costs memory at 40,000 items. It reports ms per item and the ratios eval / bare in
the same state (restored against bare warm), measured in the same run, and the peak RSS of the
pytest process (under xdist: the controller's). --repeat k runs k rounds, each round every state
once, back to back (bare and eval alternate, so a slow minute of the machine hits both); each
ratio is the median of the rounds' own ratios, with their range (min-max) beside it: a single
round's ratio moves by about 15% on a shared 2-core machine. Nothing is asserted: run it by hand
and read the table. --profile also writes a cProfile of the serial warm replay of the first size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVAL_MODULE = PROJECT_ROOT / "evals" / "test_chaosbench.py"

from pytest_reasoning_evals.chaosbench.prompts import MAX_TOKENS, PromptTemplate, cassette_folder_name  # noqa: E402
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS, Question  # noqa: E402
from pytest_reasoning_evals.shipped import shipped  # noqa: E402

BASE_URL = "http://127.0.0.1:8080/v1"
MODELS = f"models:\n  bench:\n    provider: openai_compatible\n    model_id: bench-model\n    api_key_env: null\n    base_url: {BASE_URL}\n"
BARE_CACHE = ".bare-pytest-cache"  # bare pytest's cache folder, apart from the eval's
BARE = "import pytest\n\n@pytest.mark.parametrize('i', range({n}))\ndef test_bare(i):\n    pass\n"


def question(i: int) -> Question:
    return Question(
        id=f"syn-{i:06d}",
        question=f"Is synthetic system {i} chaotic?",
        ground_truth="TRUE" if i % 2 else "FALSE",
        family=FAMILIES[i % 10],
        split=SPLITS[i % 5],
        system_id=f"sys{i % 97}",
        template="synthetic.v1",
    )


def cassette(prompt: PromptTemplate, q: Question) -> dict:
    body = {
        "model": "bench-model",
        "messages": [{"role": "user", "content": prompt.render(q.question)}],
        "temperature": 0.0,
        "max_tokens": MAX_TOKENS["zeroshot"],
        "seed": 0,
    }
    reply = {
        "id": "x",
        "object": "chat.completion",
        "model": "bench-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "TRUE"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41},
    }
    return {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": f"{BASE_URL}/chat/completions",
                    "body": json.dumps(body),
                    "headers": {"Content-Type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "body": {"string": json.dumps(reply)},
                    "headers": {"content-type": ["application/json"], "x-eval-latency-ms": ["1.0"]},
                },
            }
        ],
    }


def write_fixture(root: Path, n: int) -> None:
    prompt = PromptTemplate.load(shipped("chaosbench", "prompts"), "zeroshot")
    folder = root / "cassettes" / "bench" / cassette_folder_name("zeroshot", "bank")  # bank.jsonl's
    folder.mkdir(parents=True)
    with (root / "bank.jsonl").open("w") as bank:
        for i in range(n):
            q = question(i)
            record = {
                k: v
                for k, v in q.to_dict().items()
                if k in ("id", "question", "ground_truth", "family", "split", "system_id", "template")
            }
            bank.write(json.dumps(record) + "\n")
            (folder / f"{q.id}.yaml").write_text(yaml.safe_dump(cassette(prompt, q), sort_keys=False))
    (root / "models.yaml").write_text(MODELS)
    (root / "test_bare.py").write_text(BARE.format(n=n))
    (root / "test_chaosbench.py").write_text(EVAL_MODULE.read_text())


# pytest in a process of its own that reports its peak RSS (the controller's, under xdist) and
# the largest of its children's (the xdist workers'), in MiB, to the file named first.
MEASURED = """
import json, resource, sys
import pytest
code = pytest.main(sys.argv[2:])
peak = lambda who: resource.getrusage(who).ru_maxrss / 1024
json.dump({"code": int(code), "rss": peak(resource.RUSAGE_SELF), "workers_rss": peak(resource.RUSAGE_CHILDREN)},
          open(sys.argv[1], "w"))
"""


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """-> (seconds, peak RSS of the pytest process in MiB)."""
    out = cwd / "measured.json"
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", MEASURED, str(out), *args], cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    measured = json.loads(out.read_text()) if out.exists() else {"code": result.returncode}
    if result.returncode != 0 or measured["code"] != 0:
        sys.exit(f"pytest {' '.join(args)} failed ({measured['code']}):\n{result.stdout[-3000:]}")
    return elapsed, measured["rss"]


def touch_cassettes(root: Path) -> None:
    """Every cassette file with a new mtime, its bytes unchanged (what a fresh checkout looks like)."""
    stamp = time.time_ns()
    for path in (root / "cassettes").rglob("*.yaml"):
        os.utime(path, ns=(stamp, stamp))


def eval_args(root: Path) -> list[str]:
    return [
        "test_chaosbench.py",
        "--model",
        "bench",
        f"--eval-models-file={root / 'models.yaml'}",
        f"--eval-cases={root / 'bank.jsonl'}",
        f"--eval-cassette-dir={root / 'cassettes'}",
        "--eval-record-mode",
        "none",
        f"--eval-out-dir={root / 'results'}",
    ]


STATES = ("bare cold", "bare warm", "cold", "warm", "restored")


def one_round(root: Path, workers: str) -> dict[str, tuple[float, float]]:
    """Each state once, back to back: state -> (seconds, peak RSS MiB)."""
    common = ["-q", "--tb=no", "-p", "no:randomly", "-n", workers]
    bare, evals = ["test_bare.py", *common, "-o", f"cache_dir={BARE_CACHE}"], [*eval_args(root), *common]
    shutil.rmtree(root / BARE_CACHE, ignore_errors=True)
    out = {"bare cold": timed(bare, root), "bare warm": timed(bare, root)}
    shutil.rmtree(root / ".pytest_cache", ignore_errors=True)
    out |= {"cold": timed(evals, root), "warm": timed(evals, root)}
    touch_cassettes(root)
    out["restored"] = timed(evals, root)
    return out


def ratios(measured: dict[str, tuple[float, float]]) -> tuple[float, float, float]:
    """eval / bare in the same state, from one round (restored against bare warm)."""
    seconds = {state: measured[state][0] for state in STATES}
    return (
        seconds["cold"] / seconds["bare cold"],
        seconds["warm"] / seconds["bare warm"],
        seconds["restored"] / seconds["bare warm"],
    )


def spread(values: list[float]) -> str:
    """The median of the rounds, and their range when there is more than one."""
    middle = statistics.median(values)
    return f"{middle:.2f}" + (f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")


def report(n: int, workers: str, rounds: list[dict]) -> str:
    seconds = {state: statistics.median(r[state][0] for r in rounds) for state in STATES}
    rss = {state: max(r[state][1] for r in rounds) for state in STATES}
    cold_x, warm_x, restored_x = (spread(list(column)) for column in zip(*map(ratios, rounds)))
    return (
        f"{n:>7} {workers:>3} {seconds['bare cold']:>11.2f} {seconds['bare warm']:>11.2f} {seconds['cold']:>7.2f}"
        f" {seconds['warm']:>7.2f} {seconds['restored']:>10.2f} {seconds['warm'] / n * 1000:>10.3f}"
        f" {cold_x:>17} {warm_x:>17} {restored_x:>17}  " + " / ".join(f"{rss[state]:.0f}" for state in STATES)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 40000])
    parser.add_argument("--workers", nargs="+", default=["0", "2"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    print(
        f"{'items':>7} {'-n':>3} {'bare cold s':>11} {'bare warm s':>11} {'cold s':>7} {'warm s':>7} {'restored s':>10}"
        f" {'warm ms/it':>10} {'cold x':>17} {'warm x':>17} {'restored x':>17}"
        "  peak RSS MiB: bare cold / warm, eval cold / warm / restored"
    )
    for index, n in enumerate(options.sizes):
        with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
            root = Path(tmp)
            write_fixture(root, n)
            for workers in options.workers:
                rounds = [one_round(root, workers) for _ in range(options.repeat)]
                print(report(n, workers, rounds), flush=True)
            if options.profile and index == 0:
                out = PROJECT_ROOT / "benchmarks" / f"replay_{n}.prof"
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "cProfile",
                        "-o",
                        str(out),
                        "-m",
                        "pytest",
                        *eval_args(root),
                        "-q",
                        "--tb=no",
                        "-p",
                        "no:randomly",
                        "-n",
                        "0",
                    ],
                    cwd=root,
                    capture_output=True,
                )
                print(f"profile of the serial warm replay: {out} (python -m pstats {out})")


if __name__ == "__main__":
    os.environ.pop("PYTEST_ADDOPTS", None)
    main()
