"""One run at a time per run directory: a second run is refused naming the first; a lock left by a
killed run does not refuse the next."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest
from fakeprovider import FakeProvider
from helpers import add_eval_module, answer_by_text, fake_run_args, the_run
from helpers import small_bank as bank  # 12 questions and 2 dialogues of 3 turns

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]


def error_lines(result) -> list[str]:
    """The `ERROR: ...` lines of a usage error (under xdist pytest also shows the collection error
    of the worker that found it in its errors section)."""
    return [line for line in result.stderr.lines if line.startswith("ERROR")]


# --- 5. two runs on one out dir ---


def fake_args(pytester, url: str, tag: str, out) -> list[str]:
    """A recording run of `fake` at `url`, its models file and cassettes apart by `tag`, its results in `out`."""
    cases = bank(pytester.path / "bank.jsonl")
    return ["test_chaosbench.py", *fake_run_args(pytester, url, cases, tag), "--eval-out-dir", str(out)]


class HoldOne:
    """A fake model that parks the n-th request it gets until released, answering the rest."""

    def __init__(self, at: int):
        self.at = at
        self.seen = 0
        self.lock = threading.Lock()
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.seen += 1
            mine = self.seen
        if mine == self.at:
            self.reached.set()
            self.release.wait(120)
        return answer_by_text(body)


@pytest.mark.parametrize(("first", "second"), [("0", "2"), ("2", "0")], ids=["serial-then-xdist", "xdist-then-serial"])
def test_a_second_run_on_the_same_run_directory_is_refused_naming_the_first(pytester, fake_key, first, second) -> None:
    add_eval_module(pytester)
    out = pytester.path / "results-shared"
    holder = HoldOne(at=3)
    with FakeProvider() as server, FakeProvider() as other:
        server.responder = holder
        args = fake_args(pytester, server.openai_base, "first", out)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args, "-n", first],
            cwd=pytester.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert holder.reached.wait(120), "the first run never reached the held request"
            second_run = pytester.runpytest_subprocess(
                *fake_args(pytester, other.openai_base, "second", out)[1:], "-n", second
            )
            lock_file = (
                (the_run(out, "fake") / ".lock").read_text() if (the_run(out, "fake") / ".lock").exists() else None
            )
        finally:
            holder.release.set()
            output = process.communicate(timeout=180)[0]
        assert other.requests == [], "the second run is refused before any paid call"
        assert lock_file is not None and json.loads(lock_file)["pid"] == process.pid
        paid = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
        # released at the end: the directory takes the next run (nothing left to ask)
        again = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
        assert again.ret == 0, again.stdout.str() + again.stderr.str()
        assert len(server.requests) == len(paid)

    assert second_run.ret == pytest.ExitCode.USAGE_ERROR, second_run.stdout.str()
    refusal = error_lines(second_run)
    assert len(refusal) == 1, second_run.stdout.str() + second_run.stderr.str()
    assert f"{the_run(out, 'fake')} is in use by another run (pid {process.pid} on " in refusal[0]
    assert "started " in refusal[0] and "--eval-out-dir" in refusal[0]
    assert "Traceback" not in second_run.stdout.str() + second_run.stderr.str()

    assert process.returncode == 0, output  # the first run is untouched and completes normally
    summary = json.loads((the_run(out, "fake") / "summary.json").read_text())
    assert (
        summary["complete"] and summary["total_questions"] == 12 and summary["dialogue_details"]["total_dialogues"] == 2
    )
    assert len(paid) == len(set(paid)) == 12 + 2 * 3, "every call paid once"


def test_a_lock_left_by_a_killed_run_does_not_refuse_the_next(pytester, fake_key) -> None:
    add_eval_module(pytester)
    out = pytester.path / "results-killed"
    holder = HoldOne(at=2)
    with FakeProvider() as server:
        server.responder = holder
        args = fake_args(pytester, server.openai_base, "k", out)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert holder.reached.wait(120)
        process.kill()
        process.wait()
        holder.release.set()
        assert json.loads((the_run(out, "fake") / ".lock").read_text())["pid"] == process.pid  # left behind
        result = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
