"""A team's first week with the plugin, journey by journey, with the installed wheel: the tests that
catch one feature breaking another's workflow (a run-directory rule refusing the edit-a-prompt loop,
one protocol's ini gate failing the other's run, an exit trick skipping the user's finalisers,
judges paid to grade answers that never came)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakeprovider import FakeProvider
from helpers import CYCLE_CONFTEST
from installed import Installed

from scenarios.team import KEY, KEY_VAR, TeamModel, read_json, remove, run_dirs, team_project, write_prompt


@pytest.fixture
def team_key(monkeypatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)


def models_asked(server) -> list[str]:
    return [r["body"]["model"] for r in server.requests]


def ctrl_c_once(
    installed: Installed, project: Path, args: list[str], ready: Callable[[], bool], settle: float = 0.0
) -> tuple[int, str]:
    """`pytest ARGS` with the installed wheel, as the team presses Ctrl-C once `ready()` holds
    (`settle` seconds after): -> (its exit status, what it printed)."""
    run = subprocess.Popen(
        [str(installed.python), "-m", "pytest", *args, "-p", "no:randomly"],
        cwd=project,
        env=installed.env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while not ready() and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
    time.sleep(settle)
    run.send_signal(signal.SIGINT)
    output = run.communicate(timeout=120)[0]
    return run.returncode, output


# --- a. own questions and prompt: record, replay, baseline, edit, re-record, gate, go back ---


def printed_record_command(output: str) -> list[str]:
    """The arguments of the command a run with cassette misses prints (after its KEY=... prefix)."""
    line = next(line for line in output.splitlines() if "record them with: " in line)
    words = shlex.split(line.split("record them with: ", 1)[1])
    return words[words.index("pytest") + 1 :]


def test_a_the_edit_a_prompt_loop_in_place(installed: Installed, tmp_path: Path, team_key) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        project = team_project(tmp_path / "team", server.openai_base)
        recorded = installed.pytest(project, "--eval-record-mode", "once")
        assert recorded.returncode == 0, recorded.stdout
        assert len(server.requests) == 20
        server.clear()
        replayed = installed.pytest(project, "-n", "2")
        assert replayed.returncode == 0 and server.requests == [], replayed.stdout
        (first_run,) = run_dirs(project, "team-model_zeroshot*")
        made = installed.command(project, "reasoning-evals", "baseline", str(first_run), "baseline.json")
        assert made.returncode == 0, made.stdout
        gate = ["--eval-baseline", "baseline.json", "--eval-fail-on-regression"]
        assert installed.pytest(project, *gate).returncode == 0

        write_prompt(project / "prompts" / "plain", sloppy=True)  # the edit: a worse prompt
        edited = installed.pytest(project, *gate)
        assert edited.returncode != pytest.ExitCode.USAGE_ERROR, edited.stdout  # never refused
        assert "holds the run of another configuration" not in edited.stdout
        again = installed.pytest(project, *printed_record_command(edited.stdout))
        assert len(server.requests) == 20, again.stdout  # the edited prompt's twenty questions, once
        assert again.returncode == 1 and "gate no-regression: FAILED" in again.stdout, again.stdout

        server.clear()
        write_prompt(project / "prompts" / "plain")  # back to the first prompt
        back = installed.pytest(project, *gate)
        assert back.returncode == 0 and server.requests == [], back.stdout  # replayed, nothing asked
    assert len(run_dirs(project, "team-model_zeroshot*")) == 2  # one directory per configuration
    listed = installed.command(project, "reasoning-evals", "runs", "results")
    assert listed.returncode == 0, listed.stdout


# --- b. two prompts side by side, and the runs page ---


def test_b_two_prompts_side_by_side_name_their_runs_apart(installed: Installed, tmp_path: Path, team_key) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        project = team_project(tmp_path / "team", server.openai_base)
        write_prompt(project / "prompts" / "sloppy", sloppy=True)
        prompts = ["--eval-prompts", "prompts/plain,prompts/sloppy"]
        first = installed.pytest(project, *prompts, "--eval-record-mode", "once")
        assert first.returncode == 0, first.stdout
        assert len(server.requests) == 40
        server.clear()
        gated = installed.pytest(project, *prompts, "--eval-baseline-prompt", "plain", "--eval-fail-on-regression")
        assert server.requests == [], "both prompts replay"
    assert gated.returncode == 1 and "gate no-regression: FAILED" in gated.stdout, gated.stdout
    table = (project / "results" / "runs.md").read_text(encoding="utf-8")
    assert "plain" in table and "sloppy" in table, table
    page = (project / "results" / "runs.html").read_text(encoding="utf-8")
    assert "ChaosBench-Logic runs" not in page and "questions.jsonl" in page


# --- c. two protocols and their ini gates, one test file at a time ---


def test_c_each_test_file_is_judged_by_its_own_protocols_ini_gates(
    installed: Installed, tmp_path: Path, team_key
) -> None:
    ini = 'eval_min_coverage = "0.9"\neval_max_hard_fails = "0"\neval_min_accuracy = "0.9"\n'
    with FakeProvider() as server:
        server.responder = TeamModel()
        project = team_project(tmp_path / "team", server.openai_base, dialectic=True, ini=ini)
        recorded = installed.pytest(project, "--eval-record-mode", "once", "-n", "2")
        assert recorded.returncode == 0, recorded.stdout
        server.clear()
        quiz = installed.pytest(project, "evals/test_quiz.py")
        dialectic = installed.pytest(project, "evals/test_dialectic.py", "-n", "2")
        one = installed.pytest(project, "-k", "q03")
        assert server.requests == [], "all replayed"
    for run, other in ((quiz, "dialectic"), (dialectic, "chaosbench"), (one, "dialectic")):
        assert run.returncode == 0, run.stdout
        assert f"{other}: none of its items selected: its ini gates are not judged" in run.stdout, run.stdout
    nothing = installed.pytest(project, "-k", "no-such-item")
    assert nothing.returncode != 0, nothing.stdout  # a selection with no eval item, gates set: not a pass
    given = installed.pytest(project, "evals/test_dialectic.py", "--eval-min-accuracy", "0.5")
    assert given.returncode == 1, given.stdout  # a gate given for a protocol that did not run measured nothing


# --- d. a judge panel added to a project whose model under test is recorded ---


def test_d_a_new_judge_grades_only_what_the_model_answered(installed: Installed, tmp_path: Path, team_key) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        project = team_project(tmp_path / "team", server.openai_base, chaosbench=False, dialectic=True)
        first = installed.pytest(project, "--eval-judge-model", "judge-a", "--eval-record-mode", "once")
        assert first.returncode == 0, first.stdout
        assert set(models_asked(server)) == {"team-model", "judge-a"}
        responses = sorted((project / "cassettes" / "team-model" / "dialectic").glob("*.yaml"))
        assert len(responses) == 4  # two cases under the two shipped variants
        # a stale recording: one response's cassette is gone; judge-b joins the panel, never recorded
        remove(responses[0])
        server.clear()
        second = installed.pytest(project, "--eval-judge-model", "panel", "-n", "2")
        asked = [r["body"] for r in server.requests]
        server.clear()
        third = installed.pytest(project, "--eval-judge-model", "panel")  # what the second recorded replays
        assert server.requests == [], "nothing asked twice"
    assert asked and {b["model"] for b in asked} == {"judge-b"}, "only the new judge is asked live"
    judged = [b["messages"][-1]["content"] for b in asked]
    assert all("### Response: \n" not in text for text in judged), "no empty response is graded"
    missed = responses[0].stem.replace("__", "@")  # <case>__<variant> -> the items' [<case>@<variant>]
    for run in (second, third):
        assert f"test_judge[{missed}] - not judged: the response was not answered (cassette miss" in run.stdout
        assert run.returncode == 1, run.stdout  # a run that missed a recording is not a pass


# --- g. a noisy model: each question asked three times, gated against a one-epoch baseline ---


def test_g_epochs_run_beside_the_first_run_and_gate_against_its_baseline(
    installed: Installed, tmp_path: Path, team_key
) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        project = team_project(tmp_path / "team", server.openai_base)
        assert installed.pytest(project, "--eval-record-mode", "once").returncode == 0
        (first,) = run_dirs(project, "team-model_zeroshot*")
        made = installed.command(project, "reasoning-evals", "baseline", str(first), "baseline.json")
        assert made.returncode == 0, made.stdout
        server.clear()
        epochs = ["--eval-epochs", "3", "--eval-temperature", "0.7"]
        recorded = installed.pytest(project, *epochs, "--eval-record-mode", "once", "-n", "2")
        assert recorded.returncode == 0, recorded.stdout
        sent = {(str(r["body"]["messages"]), r["body"]["seed"]) for r in server.requests}
        assert len(server.requests) == len(sent) == 60  # twenty questions, three distinct requests each
        server.clear()
        gate = ["--eval-baseline", "baseline.json", "--eval-fail-on-regression"]
        gated = installed.pytest(project, *epochs, *gate)
        assert gated.returncode == 0 and server.requests == [], gated.stdout  # replayed, not worse
        assert "sign-flip (questions, epochs 1 vs 3)" in gated.stdout
    runs = run_dirs(project, "team-model_zeroshot*")
    assert len(runs) == 2 and first in runs  # beside the first run, which stays as it was
    epochs_run = next(run for run in runs if run != first)
    assert read_json(epochs_run / "summary.json")["epochs"]["flip_rate"] == 0.0  # this model never wavers
    listed = installed.command(project, "reasoning-evals", "runs", "results")
    assert listed.returncode == 0, listed.stdout
    assert "epochs 3" in (project / "results" / "runs.md").read_text(encoding="utf-8")


# --- h. the nightly run at half the price: a batch, Ctrl-C while it runs, picked up, replayed ---


def test_h_a_batched_recording_stopped_while_its_batch_runs_is_picked_up_then_replays_and_gates(
    installed: Installed, tmp_path: Path, team_key
) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        server.batch.polls = 10_000  # in progress until the team comes back
        project = team_project(tmp_path / "team", server.openai_base, provider="openai")
        batched = ["--eval-record-mode", "once", "--eval-batch", "--eval-batch-poll", "0.05"]
        status, output = ctrl_c_once(installed, project, batched, lambda: server.batch.created > 0, settle=0.3)
        assert status == pytest.ExitCode.INTERRUPTED, output
        assert "the batch keeps running on openai" in output and "reasoning-evals batch cancel" in output, output
        server.batch.end_soon()
        picked_up = installed.pytest(project, *batched)
        assert picked_up.returncode == 0, picked_up.stdout
        assert server.batch.created == 1 and server.live_calls == 0, "the same batch, no question asked live"
        (run_dir,) = run_dirs(project, "team-model_zeroshot*")
        paid, priced = read_json(run_dir / "run_meta.json")["spent_usd"], read_json(run_dir / "summary.json")
        assert paid == pytest.approx(priced["cost_usd"]) and paid > 0, "summary.json: what the batch billed"
        saved = priced["cost_saved_usd"]["batch"]
        assert saved == pytest.approx(paid), "the batch price: half the answers' list price"
        server.clear()
        replayed = installed.pytest(project, "-n", "2")
        assert replayed.returncode == 0 and server.requests == [], replayed.stdout
        made = installed.command(project, "reasoning-evals", "baseline", str(run_dir), "baseline.json")
        assert made.returncode == 0, made.stdout
        gated = installed.pytest(project, "--eval-baseline", "baseline.json", "--eval-fail-on-regression")
        assert gated.returncode == 0 and server.requests == [], gated.stdout
    summary = read_json(run_dir / "summary.json")
    assert summary["total_questions"] == 20 and summary["overall_accuracy"] == 1.0
    listed = installed.command(project, "reasoning-evals", "runs", "results")
    assert listed.returncode == 0, listed.stdout


# --- e. an interrupted live run, resumed ---


def test_e_an_interrupted_recording_resumes_without_paying_twice(
    installed: Installed, tmp_path: Path, team_key
) -> None:
    with FakeProvider() as server:
        server.responder = TeamModel()
        server.delay = 0.3  # a slow provider: the team presses Ctrl-C after eight answers
        project = team_project(tmp_path / "team", server.openai_base)
        status, output = ctrl_c_once(
            installed, project, ["--eval-record-mode", "once"], lambda: len(server.requests) >= 8
        )
        assert status == pytest.ExitCode.INTERRUPTED, output
        assert 8 <= len(server.requests) < 20, output
        resumed = installed.pytest(project, "--eval-record-mode", "once", "--eval-resume")
        assert resumed.returncode == 0, resumed.stdout
        bodies = [repr(sorted(r["body"].items())) for r in server.requests]
    assert len(bodies) == len(set(bodies)) == 20, "every question asked once, none paid twice"
    (run_dir,) = run_dirs(project, "team-model_zeroshot*")
    summary = read_json(run_dir / "summary.json")
    assert summary["total_questions"] == 20 and summary["overall_accuracy"] == 1.0


# --- f. installed beside a project that has no evals ---


def test_f_a_project_without_evals_runs_as_if_the_plugin_were_not_there(installed: Installed, tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / "tests").mkdir(parents=True)
    (project / "conftest.py").write_text(CYCLE_CONFTEST)
    (project / "tests" / "test_app.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('n', range(5))\ndef test_n(n):\n    assert n < 4\n"
    )
    seen = {}
    for plugin in ("on", "off"):
        for args in (["-q"], ["-q", "-n", "2"], ["--collect-only", "-q"]):
            off = ["-p", "no:pytest_reasoning_evals"] if plugin == "off" else []
            result = installed.pytest(project, *args, *off, "-p", "no:randomly")
            files = sorted(p.name for p in project.iterdir())
            seen[plugin, tuple(args)] = (result.returncode, result.stdout.splitlines()[-1], files)
            assert (project / "out.txt").read_text() == "data\nfinalised\n", (plugin, args)
            (project / "out.txt").unlink()
    for args in (["-q"], ["-q", "-n", "2"], ["--collect-only", "-q"]):
        on, off = seen["on", tuple(args)], seen["off", tuple(args)]
        assert (on[0], on[2]) == (off[0], off[2]), args
        assert on[1].split(" in ")[0] == off[1].split(" in ")[0], args  # the same closing counts
    assert seen["on", ("-q",)][0] == pytest.ExitCode.TESTS_FAILED
    assert not {"results", "cassettes"} & set(os.listdir(project))
