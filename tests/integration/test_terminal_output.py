"""What a person sees in the terminal: wrong answers and UNKNOWNs one line each (all with -v), the
summary block last, a default replay of this repository in under 150 lines, and during a live run
a progress line (rewritten in place on a terminal, periodic in a log)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest
from fakeprovider import FakeProvider
from helpers import PROJECT_ROOT, add_eval_module, answer_by_text, fake_model_args, model_entry, models_yaml
from helpers import small_bank as bank  # 12 questions and 2 dialogues of 3 turns

PROGRESS = re.compile(
    r"eval progress: (\d+)/(\d+) items \((\d+)%\), [\d.]+/s, (?:ETA|done in) \S+, "
    r"calls (\d+) live / (\d+) cassette, (\d+) failed, \$([\d.]+)( of \$[\d.]+)? spent"
)


def live_args(pytester, url: str) -> list[str]:
    models = models_yaml(model_entry(url, provider="openai_compatible", key_var=None, price_in=1.0, price_out=2.0))
    args = fake_model_args(pytester, models, bank(pytester.path / "bank.jsonl"))
    return ["test_chaosbench.py", *args, "-p", "no:randomly", "--eval-record-mode", "once"]


def run_in_terminal(args: list[str], cwd, timeout: float = 300) -> str:
    """Run pytest with a pseudo-terminal as its stdout (pytest then sees a TTY); -> what it wrote."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd,
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_default_replay_of_this_repository_is_short_and_ends_with_the_summary(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "evals", "-p", "no:randomly", "--eval-out-dir", str(tmp_path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) < 150, f"{len(lines)} lines"
    closing = lines[-1]
    # pytest orders the outcomes as they first occur
    assert re.fullmatch(r"=+ \d+ passed(, \d+ (wrong|unknown)){2} in [\d.]+s.*=+", closing), closing
    # the two summary blocks come last, each ending with where its report is
    chaosbench = next(i for i, line in enumerate(lines) if "eval summary: smollm2-135m (zeroshot)" in line)
    dialectic = next(i for i, line in enumerate(lines) if "dialectic summary: smollm2-135m" in line)
    assert chaosbench < dialectic and lines[chaosbench + 1].startswith("overall accuracy")
    assert lines[dialectic - 1] == f"report: {tmp_path / 'smollm2-135m_zeroshot' / 'report.html'}"
    assert lines[-2] == f"report: {tmp_path / 'smollm2-135m_dialectic' / 'report.html'}"
    assert (tmp_path / "smollm2-135m_zeroshot" / "report.html").exists()
    assert (tmp_path / "smollm2-135m_dialectic" / "report.html").exists()
    listing = next(line for line in lines if "wrong answers, UNKNOWNs and unmet checks" in line)
    assert "the first 30; -v lists all" in listing
    assert "eval progress" not in done.stdout  # a replay has no progress line


def test_the_summary_of_a_teams_quiz_is_titled_by_its_file(pytester) -> None:
    """A team's own questions (own families) are named by their file, the bank's by model and mode."""
    add_eval_module(pytester)
    quiz = pytester.path / "quiz.jsonl"
    quiz.write_text('{"id": "q-1", "question": "Is 1 < 2?", "ground_truth": "TRUE", "family": "python"}\n')
    result = pytester.runpytest("--model", "oracle", f"--eval-cases={quiz}")
    result.stdout.re_match_lines([r"=+ eval summary: oracle \(zeroshot\) on quiz\.jsonl =+$"])
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "2")
    result.stdout.re_match_lines([r"=+ eval summary: oracle \(zeroshot\) =+$"])


def test_unknowns_are_listed_one_line_each_and_v_lists_every_one(pytester) -> None:
    add_eval_module(pytester)
    args = ["--model", "random", "-p", "no:randomly", "--eval-max-items", "80"]
    result = pytester.runpytest(*args)
    out = result.stdout.str()
    listing = re.search(
        r"wrong answers, UNKNOWNs and unmet checks: (\d+) \(one line each, the first 30; -v lists all\)", out
    )
    assert listing and int(listing[1]) > 30, out
    shown = re.findall(r"^test_chaosbench.py::test_\w+\[[\w-]+\] - (?:expected|UNKNOWN|turn)", out, re.M)
    assert len(shown) == 30 and f"... and {int(listing[1]) - 30} more" in out
    verbose = pytester.runpytest(*args, "-v").stdout.str()
    assert re.search(rf"wrong answers, UNKNOWNs and unmet checks: {listing[1]} \(one line each\)", verbose)
    assert len(re.findall(r"^test_chaosbench.py::test_\w+\[[\w-]+\] - ", verbose, re.M)) == int(listing[1])


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_live_run_in_a_log_prints_progress_lines(pytester, workers: str) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = answer_by_text
        result = pytester.runpytest_subprocess(
            *live_args(pytester, server.openai_base)[1:], "--eval-max-cost", "5", "-n", workers
        )
    assert result.ret == 0, result.stdout.str()
    found = [m.groups() for m in PROGRESS.finditer(result.stdout.str())]
    assert found, result.stdout.str()
    done, total, pct, live, cassette, failed, spent, budget = found[-1]
    assert (done, total, pct, live, cassette, failed) == ("14", "14", "100", str(12 + 2 * 3), "0", "0")
    assert float(spent) > 0 and budget == " of $5"
    # replayed: nothing extra, with or without -q
    with FakeProvider() as server:
        for extra in ((), ("-q",)):
            replay = pytester.runpytest_subprocess(*live_args(pytester, server.openai_base)[1:], *extra, "-n", workers)
            assert replay.ret == 0 and "eval progress" not in replay.stdout.str()
        assert server.requests == []


@pytest.mark.slow
def test_a_live_run_on_a_terminal_rewrites_one_progress_line(pytester) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = answer_by_text
        out = run_in_terminal(live_args(pytester, server.openai_base)[0:], pytester.path)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "\reval progress: " in plain, plain  # redrawn in place: a carriage return, not a new line
    found = [m.groups() for m in PROGRESS.finditer(plain)]
    assert found and found[-1][:3] == ("14", "14", "100")
    assert "test_chaosbench.py ." not in plain  # the items' own progress characters gave way to the line
    assert "eval summary: fake (zeroshot)" in plain
