"""--eval-batch (issue 43): a recording run's questions go to the provider's batch API (the fake
provider's batch endpoints, tests/fakebatch.py, over real HTTP on 127.0.0.1), each reply is saved
as its item's ordinary cassette, the items replay them, and a run started again picks its batch up."""

from __future__ import annotations

import json
import marshal
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakeprovider import FakeProvider, cut, status
from helpers import (
    EVAL_MODULE,
    FAKE_KEY_VAR,
    answer_by_text,
    model_entry,
    models_yaml,
    question,
    run_args,
    small_bank,
    write_jsonl,
)

from integration.test_dialectic_run import EVAL_MODULE as DIALECTIC_MODULE
from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file
from pytest_reasoning_evals.batch import BatchHandle, BatchLedger
from pytest_reasoning_evals.cassette_index import FILE_NAME
from pytest_reasoning_evals.dialectic import judge, multiturn

QUESTIONS = 20
PRICE_IN, PRICE_OUT = 2.0, 8.0  # $ per 1M tokens: a batch pays half


@pytest.fixture
def project(pytester: pytest.Pytester, fake_key) -> pytest.Pytester:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makeini("[pytest]\neval_min_coverage = 0\n")
    records = [question(f"q-{i:02d}", "TRUE" if i % 2 else "FALSE") for i in range(QUESTIONS)]
    write_jsonl(pytester.path / "bank.jsonl", records)
    return pytester


def args(project: pytest.Pytester, server, provider: str, tag: str, *more: str) -> list[str]:
    base = server.openai_base if provider == "openai" else server.anthropic_base
    entry = model_entry(base, provider=provider, price_in=PRICE_IN, price_out=PRICE_OUT)
    return run_args(project.path, entry, tag, *more)


def summary(project: pytest.Pytester, tag: str, name: str = "summary.json") -> dict:
    (run,) = (project.path / f"results-{tag}").glob("fake_zeroshot*")
    return json.loads((run / name).read_text())


def stopped_once_batched(project: pytest.Pytester, server, run: list[str], ctrl_c: bool = False) -> str:
    """`pytest RUN` in a process of its own, stopped once the fake has created its batch: killed, or
    with `ctrl_c` interrupted as Ctrl-C does; -> what it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *run],
        cwd=project.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while server.batch.created == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # past the ledger's write
        if ctrl_c:
            process.send_signal(signal.SIGINT)
        else:
            process.kill()
        return process.communicate(timeout=60)[0]
    finally:
        process.kill()
        process.wait()


SCORES = ("overall_accuracy", "coverage", "total_questions", "task_accuracy", "split_accuracy", "num_correct")
COSTS = ("cost_usd", "judge_cost_usd", "cost_saved_usd")  # what a batch's price changes in a summary


def without_costs(data):
    """A summary without its cost fields (at any depth): what a batched run shares with a live one."""
    if isinstance(data, dict):
        return {k: without_costs(v) for k, v in data.items() if k not in COSTS}
    if isinstance(data, list):
        return [without_costs(v) for v in data]
    return data


def run_file(project: pytest.Pytester, tag: str, name: str = "summary.json", glob: str = "fake_zeroshot*") -> bytes:
    (run,) = (project.path / f"results-{tag}").glob(glob)
    return (run / name).read_bytes()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_twenty_questions_are_one_batch_at_half_the_price_and_replay_to_the_same_scores(
    project: pytest.Pytester, server, provider: str
) -> None:
    server.responder = answer_by_text
    live = project.runpytest(*args(project, server, provider, "live", "--eval-record-mode", "once"))
    assert live.ret == 0 and server.live_calls == QUESTIONS and server.batch.created == 0
    server.clear()
    server.live_calls = 0

    batched = project.runpytest(*args(project, server, provider, "batch", "--eval-record-mode", "once", "--eval-batch"))
    assert batched.ret == 0, batched.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # one batch of twenty, no chat call
    batched.stdout.fnmatch_lines(["batch: 20 of 20 requests answered ($* at the batch price)"])
    saved = f"{summary(project, 'batch')['cost_saved_usd']['batch']:.4f}"
    batched.stdout.fnmatch_lines([f"tokens in *, cost $* (saved ${saved}: batch ${saved}); calls *"])
    assert "saved $" not in live.stdout.str()  # a run that saved nothing says nothing of it
    paid = {tag: summary(project, tag, "run_meta.json")["spent_usd"] for tag in ("live", "batch")}
    assert paid["batch"] == pytest.approx(paid["live"] / 2) and paid["live"] > 0  # what the run paid
    # summary.json: the answers at the price they were billed (their cassettes say a batch gave them)
    listed = {tag: summary(project, tag) for tag in ("live", "batch")}
    assert listed["batch"]["cost_usd"] == pytest.approx(listed["live"]["cost_usd"] / 2)
    assert listed["batch"]["cost_usd"] == pytest.approx(paid["batch"])  # what the run paid, its summary says
    assert listed["batch"]["cost_saved_usd"] == {"batch": pytest.approx(listed["live"]["cost_usd"] / 2)}
    assert "cost_saved_usd" not in listed["live"]
    assert without_costs(listed["batch"]) == without_costs(listed["live"])
    recorded = run_file(project, "batch")
    cassettes = sorted((project.path / "cassettes-batch" / "fake").rglob("*.yaml"))
    assert len(cassettes) == QUESTIONS
    assert (
        not (next((project.path / "results-batch").glob("fake_zeroshot*")) / "batch.json").read_text().count("batch_id")
    )  # its replies are cassettes: the ledger forgot it

    replayed = project.runpytest(*args(project, server, provider, "batch", "--eval-record-mode", "none"))
    assert replayed.ret == 0 and server.live_calls == 0 and server.batch.created == 1
    assert {k: summary(project, "batch")[k] for k in SCORES} == {k: summary(project, "live")[k] for k in SCORES}
    # once its replies were cassettes, the files the batch left in the account were deleted
    assert len(server.batch.deleted) == (2 if provider == "openai" else 0)  # the requests and the replies
    assert run_file(project, "batch") == recorded  # the offline replay: the batched run's summary, cost and all


def test_a_file_delete_whose_answer_was_lost_is_not_said_to_be_left_in_the_account(project, server) -> None:
    """The first DELETE deleted the file but its answer was cut; the retry's 404 says it is gone."""
    server.responder = answer_by_text
    files = r"/v1/files/[^/]+"
    server.batch.fail("DELETE", files, cut())
    run = args(
        project, server, "openai", "lost", "--eval-record-mode", "once", "--eval-batch", "--eval-batch-poll", "0.05"
    )
    result = project.runpytest(*run)
    assert result.ret == 0, result.stdout.str()
    assert "left in the account" not in result.stdout.str()
    assert len(server.batch.deleted) == 2 and server.batch.unused_faults == 0  # the requests and the replies
    deletes = [r for r in server.requests if r["method"] == "DELETE" and re.fullmatch(files, r["path"])]
    assert len(deletes) == 3  # the first file's twice


def test_a_run_killed_while_its_batch_runs_picks_it_up_and_sends_no_second_batch(project, server) -> None:
    server.responder = answer_by_text
    server.batch.polls = 10_000  # in progress until the test lets it end
    stopped_once_batched(
        project, server, args(project, server, "openai", "kill", "--eval-batch", "--eval-batch-poll", "0.05")
    )
    assert server.batch.created == 1
    ledger = next(Path(project.path / "results-kill").glob("fake_zeroshot*")) / "batch.json"
    assert "batch_id" in ledger.read_text()  # kept the moment the provider accepted it
    server.batch.end_soon()  # the batch ends at its next look
    again = project.runpytest(*args(project, server, "openai", "kill", "--eval-batch", "--eval-batch-poll", "0.05"))
    assert again.ret == 0, again.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # the same batch, polled again
    assert summary(project, "kill")["total_questions"] == QUESTIONS


def test_a_run_whose_first_two_polls_answer_503_waits_on_and_saves_every_answer(project, server) -> None:
    """One blip of the provider's while a batch runs (up to 24 hours) does not end the run: the
    poll is sent again, with the backoff of the model's live calls."""
    server.responder = answer_by_text
    live = project.runpytest(*args(project, server, "openai", "live", "--eval-record-mode", "once"))
    assert live.ret == 0 and server.live_calls == QUESTIONS
    server.clear()
    server.live_calls, server.batch.polls = 0, 1
    poll = r"/v1/batches/[^/]+"
    server.batch.fail("GET", poll, status(503), status(503))
    run = args(
        project, server, "openai", "blip", "--eval-record-mode", "once", "--eval-batch", "--eval-batch-poll", "0.05"
    )
    batched = project.runpytest(*run)
    assert batched.ret == 0, batched.stdout.str()
    assert server.batch.unused_faults == 0 and server.batch.created == 1 and server.live_calls == 0
    polls = [r for r in server.requests if r["method"] == "GET" and re.fullmatch(poll, r["path"])]
    assert len(polls) >= 4  # the two 503s, the poll that answered in progress, the one that found it ended
    batched.stdout.fnmatch_lines(["batch: 20 of 20 requests answered ($* at the batch price)"])
    assert {k: summary(project, "blip")[k] for k in SCORES} == {k: summary(project, "live")[k] for k in SCORES}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_poll_that_keeps_failing_stops_the_run_with_one_line_and_the_rerun_picks_the_batch_up(
    project, server, workers
) -> None:
    """An outage longer than the retries ends the run as a stop, not an INTERNALERROR: one line says
    what failed and that the batch is kept; the same command then waits for it, sending no second batch."""
    server.responder = answer_by_text
    poll = r"/v1/batches/[^/]+"
    server.batch.fail("GET", poll, status(503), status(503))  # the first poll and its one retry under a 1 s cap
    run = args(project, server, "openai", "outage", "--eval-record-mode", "once", "--eval-batch")
    run += ["--eval-batch-poll", "0.05", "--eval-max-retry-wait", "1", "-n", workers]
    stopped = project.runpytest(*run)
    out = stopped.stdout.str()
    assert stopped.ret == pytest.ExitCode.INTERRUPTED, out
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    stopped.stdout.fnmatch_lines(
        ["batch: GET */v1/batches/* HTTP 503*(after 2 attempts*the run stopped*run the same command again*"]
    )
    assert server.batch.unused_faults == 0 and server.batch.created == 1 and server.live_calls == 0
    again = project.runpytest(*run)
    assert again.ret == 0, again.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # picked up, not sent again
    assert summary(project, "outage")["total_questions"] == QUESTIONS


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_budget_cuts_the_batch_to_the_requests_it_can_pay_for_and_skips_the_rest(project, server, workers) -> None:
    """A request's worst case at the batch price here is $1 (64 output tokens at $15,625 per 1M, half
    the list price; no input price): a $10.50 budget sends 10 of the 20 in the batch, asks none live,
    and the run is incomplete as a budget stop is. Under xdist the controller cuts it and tells the
    workers what it left out, and what it paid."""
    server.responder = answer_by_text
    run = args(project, server, "openai", "cut", "--eval-record-mode", "once", "--eval-batch", "-n", workers)
    entry = model_entry(server.openai_base, price_in=0.0, price_out=31_250.0)
    (project.path / "models-cut.yaml").write_text(models_yaml(entry))  # in place of args' prices
    result = project.runpytest_subprocess(*run, "--eval-max-cost", "10.5", "-rs")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # as any budget stop
    assert server.batch.created == 1 and server.live_calls == 0  # one batch, no plain chat call
    (sent,) = [r for r in server.requests if r["path"] == "/v1/files"]
    assert sent["body"].count('"custom_id"') == 10
    result.stdout.fnmatch_lines(
        [
            "batch: 10 of 20 requests fit the --eval-max-cost budget of $10.5 at the batch price (estimated); "
            "the other 10 are not asked",
            "batch: 10 of 10 requests answered (* at the batch price)",
        ]
    )
    result.stdout.fnmatch_lines(["SKIPPED * not asked: the --eval-max-cost budget of $10.5 is spent"])
    result.stdout.fnmatch_lines(["gate complete: FAILED (the run is incomplete: 10 items not asked*"])
    done = summary(project, "cut")
    assert done["not_asked"]["count"] == 10 and done["total_questions"] == 10
    assert [f"q-{i:02d}" for i in range(10, 20)] == sorted(done["not_asked"]["ids"])  # the run's order: the last 10


def cancel(project: pytest.Pytester, run_dir: Path, tag: str, *more: str) -> subprocess.CompletedProcess:
    """`reasoning-evals batch cancel` as a person runs it, the fake's key in the environment."""
    command = [sys.executable, "-m", "pytest_reasoning_evals", "batch", "cancel", str(run_dir)]
    command += ["--models-file", f"models-{tag}.yaml", *more]
    return subprocess.run(command, cwd=project.path, capture_output=True, text=True, timeout=120)


def test_batch_cancel_stops_the_batch_a_stopped_run_left_running_and_then_says_it_ended(project, server) -> None:
    server.responder = answer_by_text
    server.batch.polls = 10_000  # never ends on its own
    run = args(project, server, "openai", "stop", "--eval-batch", "--eval-batch-poll", "0.05")
    said = stopped_once_batched(project, server, run, ctrl_c=True)
    run_dir = next(Path(project.path / "results-stop").glob("fake_zeroshot*"))
    assert server.batch.created == 1 and server.batch.cancels == 0
    models = project.path / "models-stop.yaml"
    assert f"or stop it: reasoning-evals batch cancel {run_dir} --models-file {models}\n" in said, said

    first = cancel(project, run_dir, "stop")
    assert first.returncode == 0, first.stdout + first.stderr
    assert server.batch.cancels == 1  # the fake saw the cancel
    assert re.fullmatch(r"batch batch_\w+ \(openai, 20 requests\): cancelled \(cancelling: [^\n]*\)\n", first.stdout), (
        first.stdout
    )
    again = cancel(project, run_dir, "stop")
    assert again.returncode == 0 and server.batch.cancels == 1, again.stdout + again.stderr
    assert re.fullmatch(r"batch batch_\w+ \(openai, 20 requests\): already ended \(cancelled\)\n", again.stdout)
    for out in (said, first.stdout, first.stderr, again.stdout, again.stderr):
        assert os.environ[FAKE_KEY_VAR] not in out


def test_batch_cancel_names_each_batch_it_could_not_cancel_and_a_folder_without_a_ledger(project, server) -> None:
    (project.path / "models-gone.yaml").write_text(models_yaml(model_entry(server.openai_base)))
    run_dir = project.path / "run"
    BatchLedger(run_dir).record(BatchHandle("openai", "batch_gone", ("a",), "2026-01-01T00:00:00+00:00", model="fake"))
    BatchLedger(run_dir).record(BatchHandle("openai", "batch_old", ("b",), "2026-01-01T00:00:00+00:00"))
    failed = cancel(project, run_dir, "gone")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.splitlines()[0].startswith(
        "batch batch_gone (openai, 1 requests): error (HTTP 404): GET http://127.0.0.1:"
    ), failed.stdout
    assert "batch batch_old (openai, 1 requests): error: batch.json names no model for it" in failed.stdout
    assert os.environ[FAKE_KEY_VAR] not in failed.stdout + failed.stderr

    empty = cancel(project, project.path / "nowhere", "gone")
    assert empty.returncode == 2 and empty.stdout == ""
    assert empty.stderr == (
        f"batch cancel: no batch.json in {project.path / 'nowhere'}: not the run directory of a run with --eval-batch\n"
    )


def test_batch_cancel_at_a_base_url_nothing_listens_at_says_so_at_once(project, server) -> None:
    """A wrong --base-url is not a passing trouble: one attempt, no backoff, one line naming where."""
    (project.path / "models-dead.yaml").write_text(models_yaml(model_entry(server.openai_base)))
    run_dir = project.path / "run"
    BatchLedger(run_dir).record(BatchHandle("openai", "batch_1", ("a",), "2026-01-01T00:00:00+00:00", model="fake"))
    with FakeProvider() as gone:
        origin = gone.url
    failed = cancel(project, run_dir, "dead", "--base-url", origin + "/v1")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    # the whole line: a retried call would end "(after 5 attempts)"
    assert failed.stdout == (
        f"batch batch_1 (openai, 1 requests): error: GET {origin}/v1/batches/batch_1: nothing is listening at {origin}\n"
    )
    assert server.requests == []  # the models file's URL was not asked either


def test_a_fixed_answer_model_has_no_batch_api(project) -> None:
    result = project.runpytest("--model", "oracle", "--eval-cases", "bank.jsonl", "--eval-batch")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*--eval-batch: model 'oracle' is of provider 'baseline'*"])


def test_under_xdist_the_controller_sends_the_batch_before_any_item_runs(project, server) -> None:
    server.responder = answer_by_text
    live = project.runpytest(*args(project, server, "openai", "live", "--eval-record-mode", "once"))
    assert live.ret == 0 and server.live_calls == QUESTIONS
    server.clear()
    server.live_calls = 0
    run = args(
        project, server, "openai", "xdist", "--eval-record-mode", "once", "--eval-batch", "-n", "2", "-k", "not q-19"
    )
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == 0, batched.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # one batch of the selected items; none live
    batched.stdout.fnmatch_lines(["batch: 19 of 19 requests answered ($* at the batch price)"])
    assert summary(project, "xdist")["total_questions"] == QUESTIONS - 1  # -k left q-19 out of the batch too
    paid = summary(project, "xdist", "run_meta.json")["spent_usd"]
    assert paid == pytest.approx(summary(project, "live", "run_meta.json")["spent_usd"] * 19 / 20 / 2)
    replayed = project.runpytest_subprocess(
        *args(project, server, "openai", "xdist", "--eval-record-mode", "none", "-n", "2", "-k", "not q-19")
    )
    assert replayed.ret == 0 and server.live_calls == 0 and server.batch.created == 1
    assert summary(project, "xdist")["total_questions"] == QUESTIONS - 1


# --- the dialectic protocol: responses in a batch, then their judges ---

DIALECTIC_CASES = ("a", "b", "c")
JUDGE_FOLDER, RESOLUTION_FOLDER = "dialectic-judge", "dialectic-resolution"
NOTHING_LIVE = {"response": 0, "judge": 0, "resolution": 0, "followup": 0}


@pytest.fixture
def dialectic(pytester: pytest.Pytester, fake_key) -> pytest.Pytester:
    """A project whose eval module is the dialectic items' alone."""
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    return pytester


def dialectic_args(project: pytest.Pytester, server, tag: str, *more: str, judges=("fake-judge",)) -> list[str]:
    """3 cases x the `dialectic` variant, judged by a panel of 2 (`judges` in turn: fake-judge sitting
    twice), fake, fake-judge and other (to compare) of provider openai at the fake, claude-judge of
    provider anthropic, local-judge an OpenAI-compatible server's (no batch API); results and
    cassettes of their own per `tag`."""
    cases_file(project.path / "cases.yaml", *((case, "dialectic") for case in DIALECTIC_CASES))
    entries = [model_entry(server.openai_base, price_in=PRICE_IN, price_out=PRICE_OUT)]
    entries.append(model_entry(server.openai_base, "fake-judge", model_id="fake-judge", price_in=1.0, price_out=4.0))
    entries.append(model_entry(server.openai_base, "local-judge", provider="openai_compatible", model_id="local"))
    entries.append(model_entry(server.openai_base, "other", model_id="other-model", price_in=4.0, price_out=16.0))
    entries.append(model_entry(server.anthropic_base, "claude-judge", provider="anthropic", model_id="claude-judge"))
    (project.path / "models-dialectic.yaml").write_text(models_yaml(*entries))
    return [
        "--eval-models-file", "models-dialectic.yaml", "--model", "fake", "--eval-dialectic-cases", "cases.yaml",
        "--eval-variant", "dialectic", "--eval-judge-model", ",".join(judges), "--eval-n-judges", "2",
        "--eval-cassette-dir", f"cassettes-{tag}", "--eval-out-dir", f"results-{tag}",
        "-p", "no:cacheprovider", "-p", "no:randomly", *more,
    ]  # fmt: skip


def dialectic_dir(project: pytest.Pytester, tag: str) -> Path:
    (run,) = (project.path / f"results-{tag}").glob("fake_dialectic*")
    return run


def dialectic_out(project: pytest.Pytester, tag: str, name: str) -> dict:
    return json.loads((dialectic_dir(project, tag) / name).read_text())


def batched_ids(server) -> list[list[str]]:
    """The custom_ids of each batch file uploaded, in order."""
    files = [r["body"] for r in server.requests if r["path"] == "/v1/files"]
    return [re.findall(r'"custom_id":\s*"([^"]+)"', body) for body in files]


def live_kinds(server) -> dict[str, int]:
    """Plain chat calls by what they ask: a response, a judge's score, a resolution turn, a follow-up."""
    kinds = {"response": 0, "judge": 0, "resolution": 0, "followup": 0}
    for r in server.requests:
        if r["path"] != "/v1/chat/completions":
            continue
        messages = r["body"]["messages"]
        if messages[0]["content"] == judge.SYSTEM:
            kinds["resolution" if "## Resolution Assessment" in messages[-1]["content"] else "judge"] += 1
        else:
            kinds["followup" if messages[-1]["content"].startswith("Can you") else "response"] += 1
    return kinds


def dialectic_responder():
    return Scripted(dict.fromkeys(DIALECTIC_CASES, STRUCTURED))


@pytest.mark.parametrize("workers", ["0", "2"])
def test_dialectic_responses_then_their_judges_are_two_batches_and_replay_to_the_live_summary(
    dialectic: pytest.Pytester, server, workers: str
) -> None:
    """Every conversation is resolved at its first turn: its one resolution turn goes in the judges' batch."""
    project = dialectic
    server.responder = dialectic_responder()
    live = project.runpytest_subprocess(*dialectic_args(project, server, "live", "--eval-record-mode", "once"))
    assert live.ret == 0, live.stdout.str()
    assert live_kinds(server) == {"response": 3, "judge": 6, "resolution": 3, "followup": 0}
    server.clear()

    run = dialectic_args(project, server, "batch", "--eval-record-mode", "once", "--eval-batch", "-n", workers)
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == 0, batched.stdout.str()
    assert server.batch.created == 2
    responses, judges = batched_ids(server)
    assert len(responses) == 3 and all(cid.startswith("dialectic--") for cid in responses)
    assert len(judges) == 9 and sum(cid.startswith(f"{JUDGE_FOLDER}--") for cid in judges) == 6
    assert sum(cid.startswith(f"{RESOLUTION_FOLDER}--") for cid in judges) == 3  # the first resolution turns
    assert live_kinds(server) == NOTHING_LIVE
    batched.stdout.fnmatch_lines(
        [
            "batch: 3 of 3 requests answered ($* at the batch price)",
            "batch: 9 of 9 requests answered ($* at the batch price)",
        ]
    )
    judged = sorted(p.name for p in (project.path / "cassettes-batch" / "fake-judge" / JUDGE_FOLDER).glob("*.yaml"))
    assert judged == [f"{case}__dialectic__fake__judge{k}.yaml" for case in DIALECTIC_CASES for k in (1, 2)]
    summary_of = {tag: dialectic_out(project, tag, "variant_summary.json") for tag in ("live", "batch")}
    assert without_costs(summary_of["batch"]) == without_costs(summary_of["live"])
    (live_variant,), (batch_variant,) = summary_of["live"]["variants"], summary_of["batch"]["variants"]
    halves = {k: live_variant[k] / 2 for k in ("cost_usd", "judge_cost_usd")}  # responses and judges: batched
    assert {k: batch_variant[k] for k in halves} == pytest.approx(halves) and all(halves.values())
    assert batch_variant["cost_saved_usd"] == {"batch": pytest.approx(sum(halves.values()))}
    assert "cost_saved_usd" not in live_variant
    recorded = run_file(project, "batch", "variant_summary.json", "fake_dialectic*")

    # what the run paid: every call at half its live price
    paid = {tag: dialectic_out(project, tag, "run_meta.json")["spent_usd"] for tag in ("live", "batch")}
    assert paid["live"] > 0 and paid["batch"] == pytest.approx(paid["live"] / 2)

    server.clear()
    replayed = project.runpytest_subprocess(*dialectic_args(project, server, "batch", "--eval-record-mode", "none"))
    assert replayed.ret == 0, replayed.stdout.str()
    assert server.requests == [] and server.batch.created == 2  # nothing sent
    assert run_file(project, "batch", "variant_summary.json", "fake_dialectic*") == recorded


def test_a_dialectic_run_killed_after_its_response_batch_was_created_sends_no_second_one(dialectic, server) -> None:
    project = dialectic
    server.responder = dialectic_responder()
    server.batch.polls = 10_000  # in progress until the test lets it end
    run = dialectic_args(
        project, server, "kill", "--eval-record-mode", "once", "--eval-batch", "--eval-batch-poll", "0.05"
    )
    stopped_once_batched(project, server, run)
    assert server.batch.created == 1
    assert "batch_id" in (dialectic_dir(project, "kill") / "batch.json").read_text()
    server.batch.end_soon()
    again = project.runpytest_subprocess(*run)
    assert again.ret == 0, again.stdout.str()
    responses, judges = batched_ids(server)  # the one response batch, polled again; then the judges'
    assert server.batch.created == 2 and len(responses) == 3 and len(judges) == 9
    assert all(cid.startswith((f"{JUDGE_FOLDER}--", f"{RESOLUTION_FOLDER}--")) for cid in judges)
    assert live_kinds(server) == NOTHING_LIVE


def test_a_panel_judge_without_a_batch_api_is_asked_live_and_the_other_judge_in_its_batch(dialectic, server) -> None:
    project = dialectic
    server.responder = dialectic_responder()
    run = dialectic_args(project, server, "mixed", "--eval-batch", judges=("fake-judge", "local-judge"))
    result = project.runpytest_subprocess(*run, "--eval-record-mode", "once")
    assert result.ret == 0, result.stdout.str()
    responses, judges = batched_ids(server)  # a batch per judge model with a batch API
    assert len(responses) == 3 and len(judges) == 6  # seat 1's judge calls and resolution turns
    judge1 = rf"{JUDGE_FOLDER}--[abc]__dialectic__fake__judge1_[0-9a-f]{{12}}"
    turn1 = rf"{RESOLUTION_FOLDER}--[abc]__dialectic__fake__turn1_[0-9a-f]{{12}}"
    assert all(re.fullmatch(judge1, cid) or re.fullmatch(turn1, cid) for cid in judges)
    result.stdout.fnmatch_lines(
        ["batch: judge 'local-judge' is of provider 'openai_compatible', whose batch API is not wired in: "
         "its 3 calls are asked live"]
    )  # fmt: skip
    live = [r["body"]["model"] for r in server.requests if r["path"] == "/v1/chat/completions"]
    assert live == ["local"] * 3  # seat 2's judge calls
    assert live_kinds(server) == {**NOTHING_LIVE, "judge": 3}


def test_a_panels_batches_to_two_providers_are_both_sent_before_either_is_waited_for(dialectic, server) -> None:
    """A round's batches to OpenAI and Anthropic run at once: the run waits as long as the slower
    one, not for one and then the other (each may take up to 24 hours)."""
    project = dialectic
    server.responder = dialectic_responder()
    server.batch.polls = 3  # each batch looks in progress three times
    run = dialectic_args(
        project, server, "two", "--eval-batch", "--eval-batch-poll", "0.01", judges=("fake-judge", "claude-judge")
    )
    result = project.runpytest_subprocess(*run, "--eval-record-mode", "once", "-k", "judge")
    assert result.ret == 0, result.stdout.str()
    paths = [(r["method"], r["path"]) for r in server.requests]
    creates = [i for i, (m, p) in enumerate(paths) if m == "POST" and p in ("/v1/batches", "/v1/messages/batches")]
    assert [paths[i][1] for i in creates] == ["/v1/batches", "/v1/batches", "/v1/messages/batches"]
    polls_after = [
        i for i, (m, p) in enumerate(paths) if m == "GET" and p.startswith("/v1/batches/") and i > creates[1]
    ]
    assert polls_after and creates[2] < polls_after[0]  # the Anthropic batch was sent before the OpenAI one was polled
    result.stdout.fnmatch_lines(["batch batch_*, msgbatch_*: * done, * waited"])  # one waiting line for both
    assert live_kinds(server) == NOTHING_LIVE


def test_a_log_gets_a_waiting_line_when_the_count_moves_not_one_per_poll(project, server) -> None:
    server.responder = answer_by_text
    server.batch.polls = 6  # six looks in progress (nothing done yet), then it ends
    run = project.runpytest(*args(project, server, "openai", "wait", "--eval-batch", "--eval-batch-poll", "0.01"))
    assert run.ret == 0, run.stdout.str()
    waiting = [line for line in run.outlines if re.match(r"batch \S+: \d+ of 20 done, 0m0\ds waited$", line)]
    assert len(waiting) == 1, run.stdout.str()  # the count never moved: one line, not six
    assert "batch: 20 of 20 requests answered" in run.stdout.str()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_dialogue_turns_go_in_a_batch_a_round_each_and_replay_to_the_live_summary(project, server, workers) -> None:
    server.responder = answer_by_text
    small_bank(project.path / "talk.jsonl", dialogues=2, turns=3, questions=4)
    talk = ("--eval-cases", "talk.jsonl")
    live = project.runpytest_subprocess(*args(project, server, "openai", "live", "--eval-record-mode", "once", *talk))
    assert live.ret == 0 and server.live_calls == 4 + 2 * 3, live.stdout.str()
    server.clear()
    server.live_calls = 0

    run = args(project, server, "openai", "talk", "--eval-record-mode", "once", "--eval-batch", "-n", workers, *talk)
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == 0, batched.stdout.str()
    assert server.live_calls == 0, "every turn came from a batch"
    # round 1: the questions and each dialogue's first turn; then a round per later turn
    assert server.batch.created == 3
    batched.stdout.fnmatch_lines(
        [
            "batch: 6 of 6 requests answered ($* at the batch price)",
            "batch: 2 of 2 requests answered ($* at the batch price)",
            "batch: 2 of 2 requests answered ($* at the batch price)",
        ]
    )
    talked, live_summary = summary(project, "talk"), summary(project, "live")
    assert without_costs(talked) == without_costs(live_summary)  # scores, dialogue details, tokens: all alike
    for costs in ("dialogue_details", None):  # every turn and question from a batch: half the list price
        part, live_part = (talked[costs], live_summary[costs]) if costs else (talked, live_summary)
        assert part["cost_usd"] == pytest.approx(live_part["cost_usd"] / 2) and live_part["cost_usd"] > 0
    assert talked["cost_saved_usd"] == {"batch": pytest.approx(live_summary["cost_usd"] / 2)}
    recorded = run_file(project, "talk")
    server.clear()
    replayed = project.runpytest_subprocess(
        *args(project, server, "openai", "talk", "--eval-record-mode", "none", *talk)
    )
    assert replayed.ret == 0 and server.requests == [], replayed.stdout.str()
    assert run_file(project, "talk") == recorded


# --- dialectic conversations a round each, and cross-provider items ---

RESOLVED_AFTER = {"a": 0, "b": 1, "c": multiturn.MAX_TURNS}  # follow-ups before the judge says resolved


def conversing():
    """dialectic_responder's responses and judges; resolution verdicts and follow-up replies by the
    conversation alone (not by the order calls come in, which batching changes): case a is resolved
    at turn 1, b at turn 2, c never (4 turns)."""
    scripted = dialectic_responder()

    def respond(body: dict) -> str:
        messages = body["messages"]
        last = messages[-1]["content"]
        if messages[0]["content"] == judge.SYSTEM and "## Resolution Assessment" in last:
            resolved = last.count(multiturn.FOLLOW_UP) >= RESOLVED_AFTER[re.search(r"about (\S+)\?", last).group(1)]
            return json.dumps({"resolved": resolved, "confidence": 0.8, "reasoning": "r"})
        if last == multiturn.FOLLOW_UP:
            return f"Follow-up {sum(m['content'] == multiturn.FOLLOW_UP for m in messages)}: do it."
        return scripted(body)

    return respond


def rounds(server) -> list[list[str]]:
    """Each batch's requests by cassette folder and item id (the custom_ids without their hash)."""
    return [sorted(cid.rpartition("_")[0] for cid in ids) for ids in batched_ids(server)]


LIVE_CONVERSATIONS = {"response": 3, "judge": 6, "resolution": 1 + 2 + 4, "followup": 1 + 3}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resolution_conversations_go_in_batches_a_round_each_and_replay_to_the_live_summary(
    dialectic: pytest.Pytester, server, workers: str
) -> None:
    project = dialectic
    server.responder = conversing()
    live = project.runpytest_subprocess(*dialectic_args(project, server, "live", "--eval-record-mode", "once"))
    assert live_kinds(server) == LIVE_CONVERSATIONS, live.stdout.str()
    server.clear()

    run = dialectic_args(project, server, "batch", "--eval-record-mode", "once", "--eval-batch", "-n", workers)
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == live.ret, batched.stdout.str()
    assert live_kinds(server) == NOTHING_LIVE, "every call came from a batch"
    turn, follow_up = "dialectic-resolution--{}__dialectic__fake__turn{}", "dialectic--{}__dialectic__followup{}"
    assert rounds(server) == [
        [f"dialectic--{case}__dialectic" for case in "abc"],  # the responses
        sorted(  # the judge panel with each conversation's first resolution turn: fake-judge's batch
            [f"{JUDGE_FOLDER}--{case}__dialectic__fake__judge{k}" for case in "abc" for k in (1, 2)]
            + [turn.format(case, 1) for case in "abc"]
        ),
        [follow_up.format("b", 2), follow_up.format("c", 2)],
        [turn.format("b", 2), turn.format("c", 2)],
        [follow_up.format("c", 3)],
        [turn.format("c", 3)],
        [follow_up.format("c", 4)],
        [turn.format("c", 4)],
    ]
    assert server.batch.created == 8
    sent = [cid for ids in batched_ids(server) for cid in ids]
    assert len(sent) == len(set(sent)), "no request sent twice"
    batched.stdout.fnmatch_lines(
        [f"batch: {n} of {n} requests answered ($* at the batch price)" for n in (3, 9, 2, 2, 1, 1, 1, 1)]
    )
    for name in ("multiturn_summary.json", "variant_summary.json"):
        assert unpriced(dialectic_out(project, "batch", name)) == unpriced(dialectic_out(project, "live", name)), name
    conversations = dialectic_out(project, "live", "multiturn_summary.json")["conversations_detail"]
    assert [c["turns_to_resolution"] for c in conversations] == [1, 2, None]
    paid = {tag: dialectic_out(project, tag, "multiturn_summary.json")["total_cost_usd"] for tag in ("live", "batch")}
    assert paid["batch"] == pytest.approx(paid["live"] / 2) and paid["live"] > 0  # every call at the batch price
    talks = {tag: dialectic_out(project, tag, "multiturn_summary.json") for tag in ("live", "batch")}
    assert "cost_saved_usd" not in talks["live"]  # a run without batching says nothing of savings
    assert talks["batch"]["cost_saved_usd"] == {"batch": pytest.approx(paid["live"] / 2)}
    for talk in talks["batch"]["conversations_detail"]:  # each conversation, and each of its judge's verdicts
        assert talk["cost_saved_usd"]["batch"] == pytest.approx(talk["cost_usd"])
        assert all(verdict["batch"] for verdict in talk["verdicts"])
    recorded = dialectic_out(project, "batch", "multiturn_summary.json")

    server.clear()
    replayed = project.runpytest_subprocess(*dialectic_args(project, server, "batch", "--eval-record-mode", "none"))
    assert replayed.ret == live.ret and server.requests == [], replayed.stdout.str()  # offline: nothing sent
    assert dialectic_out(project, "batch", "multiturn_summary.json") == recorded  # prices included


def test_a_conversation_call_no_batch_answered_is_asked_live_with_the_calls_after_it_never_sent_twice(
    dialectic: pytest.Pytester, server
) -> None:
    project = dialectic
    server.responder = conversing()
    server.batch.outcome = lambda cid, body: (
        "expired" if cid.startswith("dialectic--c__dialectic__followup2_") else None
    )
    run = dialectic_args(project, server, "expired", "--eval-record-mode", "once", "--eval-batch")
    result = project.runpytest_subprocess(*run)
    assert [len(ids) for ids in rounds(server)] == [3, 9, 2, 1]  # then b is resolved and c's follow-up is not resent
    assert "dialectic--c__dialectic__followup2" not in rounds(server)[3]
    result.stdout.fnmatch_lines(
        ["batch: 1 of 2 requests answered ($* at the batch price); 1 left to their items, asked live"]
    )
    assert live_kinds(server) == {**NOTHING_LIVE, "followup": 3, "resolution": 3}  # c's turns from follow-up 2 on
    conversations = dialectic_out(project, "expired", "multiturn_summary.json")["conversations_detail"]
    assert [(c["turns"], c["turns_to_resolution"]) for c in conversations] == [(1, 1), (2, 2), (4, None)]


def test_a_rewrite_asks_the_conversations_live_and_the_rest_in_batches(dialectic: pytest.Pytester, server) -> None:
    """A rewrite replaces each cassette: a replay would read the earlier run's follow-ups as the history."""
    project = dialectic
    server.responder = conversing()
    project.runpytest_subprocess(*dialectic_args(project, server, "rewrite", "--eval-record-mode", "once"))
    recorded = dialectic_out(project, "rewrite", "multiturn_summary.json")
    server.clear()
    run = dialectic_args(project, server, "rewrite", "--eval-record-mode", "rewrite", "--eval-batch")
    result = project.runpytest_subprocess(*run)
    assert [len(ids) for ids in rounds(server)] == [3, 6], result.stdout.str()  # the responses, the panel
    # the responses and the panel the batches rewrote are read from their new cassettes, not paid again
    assert live_kinds(server) == {**LIVE_CONVERSATIONS, "response": 0, "judge": 0}
    rewritten = dialectic_out(project, "rewrite", "multiturn_summary.json")
    assert unpriced(rewritten) == unpriced(recorded)
    # each conversation's first reply (the response) from a batch at half price, its other calls live
    assert recorded["total_cost_usd"] / 2 < rewritten["total_cost_usd"] < recorded["total_cost_usd"]


def batched_models(server) -> list[set[str]]:
    """The models each batch file names."""
    files = [r["body"] for r in server.requests if r["path"] == "/v1/files"]
    return [set(re.findall(r'"model":\s*"([^"]+)"', body)) for body in files]


def without_latency(value, also: tuple[str, ...] = ()):
    """A summary without what depends on how long a call took (a batch's replies record none)."""
    dropped = ("latency", "per_second", *also)
    if isinstance(value, dict):
        return {k: without_latency(v, also) for k, v in value.items() if not any(word in k for word in dropped)}
    return [without_latency(v, also) for v in value] if isinstance(value, list) else value


def unpriced(value):
    """A summary without what depends on the price paid (a batch's calls at half, marked `batch`) or on latency."""
    return without_latency(value, ("cost", "efficiency", "saved", "batch"))


CROSS = ("-k", "cross_provider")


def test_cross_provider_responses_then_their_panels_go_in_batches_and_replay_to_the_live_summary(
    dialectic: pytest.Pytester, server
) -> None:
    project = dialectic
    server.responder = dialectic_responder()
    compare = ("--eval-compare-models", "fake,other", *CROSS)
    live = project.runpytest_subprocess(
        *dialectic_args(project, server, "live", "--eval-record-mode", "once", *compare)
    )
    assert live.ret == 0, live.stdout.str()
    assert live_kinds(server) == {**NOTHING_LIVE, "response": 6, "judge": 12}
    server.clear()

    run = dialectic_args(project, server, "batch", "--eval-record-mode", "once", "--eval-batch", *compare)
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == 0, batched.stdout.str()
    assert live_kinds(server) == NOTHING_LIVE
    assert server.batch.created == 3
    assert batched_models(server) == [{"fake-model"}, {"other-model"}, {"fake-judge"}]  # a batch per model
    assert [len(ids) for ids in rounds(server)] == [3, 3, 12]  # the two models' responses, then both panels
    batched.stdout.fnmatch_lines([f"batch: {n} of {n} requests answered ($* at the batch price)" for n in (3, 3, 12)])
    name = "cross_provider_summary.json"
    live_summary, recorded = (dialectic_out(project, tag, name) for tag in ("live", "batch"))
    assert live_summary["providers_compared"] == ["fake", "other"]
    assert unpriced(recorded) == unpriced(live_summary)
    for alias in ("fake", "other"):  # each model's responses at the batch price
        paid = [s["provider_summaries"][alias]["total_cost_usd"] for s in (live_summary, recorded)]
        assert paid[1] == pytest.approx(paid[0] / 2) and paid[0] > 0

    server.clear()
    replayed = project.runpytest_subprocess(
        *dialectic_args(project, server, "batch", "--eval-record-mode", "none", *compare)
    )
    assert replayed.ret == 0 and server.requests == [], replayed.stdout.str()
    assert without_latency(dialectic_out(project, "batch", name)) == without_latency(recorded)


def test_a_compare_model_without_a_batch_api_is_asked_live_and_so_is_its_panel(
    dialectic: pytest.Pytester, server
) -> None:
    project = dialectic
    server.responder = dialectic_responder()
    compare = ("--eval-compare-models", "fake,local-judge", *CROSS)
    result = project.runpytest_subprocess(
        *dialectic_args(project, server, "mixed", "--eval-record-mode", "once", "--eval-batch", *compare)
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["batch: model 'local-judge' is of provider 'openai_compatible', whose batch API is not wired in: "
         "its 3 calls are asked live"]
    )  # fmt: skip
    assert batched_models(server) == [{"fake-model"}, {"fake-judge"}]  # fake's responses, then their panel
    assert [len(ids) for ids in rounds(server)] == [3, 6]
    assert live_kinds(server) == {**NOTHING_LIVE, "response": 3, "judge": 6}  # local's responses and their panel


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_rewrite_with_eval_batch_pays_each_question_once(project, server, workers) -> None:
    """--eval-record-mode=rewrite: the batch rewrites each question's cassette, and its item reads
    that new cassette instead of rewriting it again live (it had paid twice)."""
    server.responder = lambda body: "FALSE"
    assert project.runpytest(*args(project, server, "openai", "batch", "--eval-record-mode", "once")).ret == 0
    server.clear()
    server.live_calls, server.responder = (
        0,
        lambda body: "TRUE" if int(json.dumps(body).split("q-")[1][:2]) % 2 else "FALSE",
    )
    rewrite = ["--eval-record-mode", "rewrite", "--eval-batch", "-n", workers]
    rewritten = project.runpytest(*args(project, server, "openai", "batch", *rewrite))
    assert rewritten.ret == 0, rewritten.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # every question once, in the batch
    replayed = project.runpytest(*args(project, server, "openai", "batch", "--eval-record-mode", "none"))
    assert replayed.ret == 0 and server.live_calls == 0
    assert summary(project, "batch")["overall_accuracy"] == 1.0  # the batch's (gold) answers, not the first run's


SLOW_SECOND_WORKER = """
import os
import time

# read before any pytest_configure: on a loaded machine this worker starts after the controller's
# batch saved its cassettes
if os.environ.get("PYTEST_XDIST_WORKER") == "gw1":
    time.sleep(3)
"""


def test_a_rewrite_with_eval_batch_pays_nothing_twice_on_a_worker_that_started_late(project, server) -> None:
    # a worker took its own start as the run's: the cassettes the batch had rewritten before it
    # started looked old to it, and it rewrote them again live (2 in 20 in a loaded CI run)
    server.responder = lambda body: "FALSE"
    assert project.runpytest(*args(project, server, "openai", "batch", "--eval-record-mode", "once")).ret == 0
    server.clear()
    server.live_calls = 0
    project.makeconftest(SLOW_SECOND_WORKER)
    rewrite = ["--eval-record-mode", "rewrite", "--eval-batch", "-n", "2"]
    rewritten = project.runpytest(*args(project, server, "openai", "batch", *rewrite))
    assert rewritten.ret == 0, rewritten.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0, rewritten.stdout.str()


# --- what a batch's answers cost: its cassettes say a batch gave them ---

PRICE_CACHED = 0.5  # $ per 1M input tokens read from the prompt cache


def completions(project: pytest.Pytester, tag: str) -> list[dict]:
    return [json.loads(line) for line in run_file(project, tag, "completions.jsonl").splitlines()]


def priced(records: list[dict]) -> list[tuple]:
    """Each record's price and what it says of the batch and the cache."""
    fields = ("cost_usd", "batch", "batch_saved_usd", "cached_tokens", "cache_saved_usd")
    return [(r["id"], *(r.get(k) for k in fields)) for r in records]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_with_cached_tokens_pays_what_its_summary_and_every_replay_say(project, server, provider) -> None:
    """One price of a batch's reply: what the run paid (run_meta.json), its summary.json, the first
    replay (from the files) and the second (from the cassette index, whose rows carry the marker)
    agree, cached tokens too."""
    server.responder = answer_by_text
    server.usage.prompt, server.usage.completion, server.usage.cached = 1000, 3, 600
    base = server.openai_base if provider == "openai" else server.anthropic_base
    entry = model_entry(base, provider=provider, price_in=PRICE_IN, price_out=PRICE_OUT, price_cached_in=PRICE_CACHED)
    run = [a for a in run_args(project.path, entry, "cached") if a not in ("-p", "no:cacheprovider")]  # the index on
    batched = project.runpytest(*run, "--eval-record-mode", "once", "--eval-batch")
    assert batched.ret == 0 and server.batch.created == 1 and server.live_calls == 0, batched.stdout.str()
    # OpenAI's cached tokens are part of prompt_tokens; Anthropic's cache reads come beside input_tokens
    fresh = 400 if provider == "openai" else 1000
    listed = (fresh * PRICE_IN + 600 * PRICE_CACHED + 3 * PRICE_OUT) / 1e6
    paid = (fresh * PRICE_IN / 2 + 600 * PRICE_CACHED / 2 + 3 * PRICE_OUT / 2) / 1e6  # the cache price, halved
    summary_of = json.loads(run_file(project, "cached"))
    spent = json.loads(run_file(project, "cached", "run_meta.json"))["spent_usd"]
    assert spent == pytest.approx(summary_of["cost_usd"]) and spent == pytest.approx(QUESTIONS * paid)
    assert summary_of["cost_saved_usd"] == {
        "cache": pytest.approx(QUESTIONS * 600 * (PRICE_IN - PRICE_CACHED) / 1e6),
        "batch": pytest.approx(QUESTIONS * (listed - paid)),
    }
    records = completions(project, "cached")
    assert {(r["batch"], r["cached_tokens"]) for r in records} == {(True, 600)}
    assert [r["batch_saved_usd"] for r in records] == pytest.approx([listed - paid] * QUESTIONS)
    cassette = next((project.path / "cassettes-cached" / "fake").rglob("*.yaml")).read_text()
    assert f"x-eval-batch:\n      - {provider}\n" in cassette and "batch_" not in cassette  # no batch id in it
    assert os.environ[FAKE_KEY_VAR] not in cassette

    summary_bytes, prices = run_file(project, "cached"), priced(records)
    cache = project.path / ".pytest_cache" / "d" / "reasoning-evals"
    shutil.rmtree(cache)  # the recording's items filled the index: the first replay reads the files
    for replay in ("files", "index"):  # the first replay parses the files into the index, the second reads it
        replayed = project.runpytest(*run, "--eval-record-mode", "none")
        assert replayed.ret == 0 and server.live_calls == 0, replayed.stdout.str()
        assert run_file(project, "cached") == summary_bytes, replay
        assert priced(completions(project, "cached")) == prices, replay
    # the index's rows carry the marker (in each file's first_replay), and a replay prices by them:
    # rows planted without it (the files unchanged) replay at the list price
    db = sqlite3.connect(cache / FILE_NAME)
    rows = db.execute("SELECT path, parsed FROM cassettes").fetchall()
    assert len(rows) == QUESTIONS and {marshal.loads(parsed)[2][4] for _, parsed in rows} == {provider}
    for path, parsed in rows:
        requests_, responses, replay = marshal.loads(parsed)
        unmarked = (requests_, responses, (*replay[:4], None))
        db.execute("UPDATE cassettes SET parsed = ? WHERE path = ?", (marshal.dumps(unmarked), path))
    db.commit()
    db.close()
    replayed = project.runpytest(*run, "--eval-record-mode", "none")
    assert replayed.ret == 0 and server.live_calls == 0, replayed.stdout.str()
    assert json.loads(run_file(project, "cached"))["cost_usd"] == pytest.approx(QUESTIONS * listed)


def test_a_cassette_recorded_before_batches_were_marked_replays_at_the_list_price(project, server) -> None:
    server.responder = answer_by_text
    live = project.runpytest(*args(project, server, "openai", "live", "--eval-record-mode", "once"))
    assert live.ret == 0
    batched = project.runpytest(*args(project, server, "openai", "old", "--eval-record-mode", "once", "--eval-batch"))
    assert batched.ret == 0 and server.batch.created == 1, batched.stdout.str()
    assert json.loads(run_file(project, "old"))["cost_usd"] == pytest.approx(summary(project, "live")["cost_usd"] / 2)
    for cassette in (project.path / "cassettes-old" / "fake").rglob("*.yaml"):  # as a batch was saved before its marker
        text, marker = cassette.read_text(), "      x-eval-batch:\n      - openai\n"
        assert marker in text
        cassette.write_text(text.replace(marker, ""))
    replayed = project.runpytest(*args(project, server, "openai", "old", "--eval-record-mode", "none"))
    assert replayed.ret == 0 and server.live_calls == QUESTIONS, replayed.stdout.str()  # none live since the first run
    assert run_file(project, "old") == run_file(project, "live")  # the live run's summary, at the list price
    assert all("batch" not in r and "batch_saved_usd" not in r for r in completions(project, "old"))


def runs_rows(folder: Path, capsys) -> dict[str, list[dict]]:
    """`reasoning-evals runs FOLDER`: each table's rows by its id; its markdown says `cost saved`."""
    from pytest_reasoning_evals.__main__ import main

    assert main(["runs", str(folder)]) == 0
    assert "cost saved" in capsys.readouterr().out
    return {t["id"]: t["rows"] for t in json.loads((folder / "runs.json").read_text())["tables"]}


def test_a_batched_dialectic_run_says_what_its_batches_and_the_prompt_cache_saved(dialectic, server, capsys) -> None:
    project = dialectic
    server.responder = dialectic_responder()
    server.usage.prompt, server.usage.completion, server.usage.cached = 1000, 3, 600
    run = dialectic_args(project, server, "saved", "--eval-record-mode", "once", "--eval-batch")
    prices = {"fake": (PRICE_IN, PRICE_OUT, 0.5), "fake-judge": (1.0, 4.0, 0.25)}  # in, out, cached in
    entries = [
        model_entry(server.openai_base, alias, model_id=alias, price_in=p_in, price_out=p_out, price_cached_in=cached)
        for alias, (p_in, p_out, cached) in prices.items()
    ]
    (project.path / "models-dialectic.yaml").write_text(models_yaml(*entries))  # in place of dialectic_args' prices
    batched = project.runpytest_subprocess(*run)
    assert batched.ret == 0 and server.batch.created == 2, batched.stdout.str()

    def saved(alias: str) -> tuple[float, float]:  # (cache, batch) of one call: 400 fresh, 600 cached, 3 out
        p_in, p_out, cached = prices[alias]
        listed = (400 * p_in + 600 * cached + 3 * p_out) / 1e6
        return 600 * (p_in - cached) / 1e6, listed / 2

    rows = [json.loads(line) for line in (dialectic_dir(project, "saved") / "per_response.jsonl").open()]
    assert len(rows) == len(DIALECTIC_CASES)
    for r in rows:  # the response's own fields, and its panel's (two seats)
        judge_calls = r["judge"]
        assert (r["batch"], r["cached_tokens"]) == (True, 600)
        assert (judge_calls["batch"], judge_calls["cached_tokens"]) == (True, 1200)
        assert (r["cache_saved_usd"], r["batch_saved_usd"]) == pytest.approx(saved("fake"))
        judged = (judge_calls["cache_saved_usd"], judge_calls["batch_saved_usd"])
        assert judged == pytest.approx(tuple(2 * part for part in saved("fake-judge")))
        assert "cache_write_tokens" not in r and "cache_write_tokens" not in judge_calls  # zero: not written
    (variant,) = dialectic_out(project, "saved", "variant_summary.json")["variants"]
    cache, batch = (len(rows) * (saved("fake")[k] + 2 * saved("fake-judge")[k]) for k in (0, 1))
    assert variant["cost_saved_usd"] == {"cache": pytest.approx(cache), "batch": pytest.approx(batch)}
    (row,) = runs_rows(project.path / "results-saved", capsys)["dialectic"]
    assert row["cost_saved_usd"] == pytest.approx(cache + batch)


def test_the_runs_table_shows_what_a_batch_saved_and_nothing_for_a_live_run(project, server, capsys) -> None:
    server.responder = answer_by_text
    for tag, more in (("live", ()), ("batch", ("--eval-batch",))):
        ran = project.runpytest(*args(project, server, "openai", tag, "--eval-record-mode", "once", *more))
        assert ran.ret == 0, ran.stdout.str()
    (project.path / "results-batch").rename(project.path / "results-live" / "batched")
    rows = runs_rows(project.path / "results-live", capsys)["chaosbench"]
    (batched,), (live,) = ([row for row in rows if ("/batched/" in row["path"]) is b] for b in (True, False))
    assert live["cost_saved_usd"] == 0.0 and live["cost_usd"] > 0
    assert batched["cost_saved_usd"] == pytest.approx(live["cost_usd"] / 2)
    assert batched["cost_usd"] == pytest.approx(live["cost_usd"] / 2)
