"""--eval-batch with a Gemini model: 20
questions in one Gemini batch over real HTTP on the fake provider, no live call, ordinary cassettes
that replay offline to the scores of a live run, and no key in the run's files or output."""

from __future__ import annotations

import json

import pytest
from helpers import EVAL_MODULE, FAKE_KEY_VAR, model_entry, question, run_args, write_jsonl

QUESTIONS = 20
KEY = "AIzaPLANTEDgeminiRunKey0123456789abcdefg"
SCORES = ("overall_accuracy", "coverage", "total_questions", "task_accuracy", "num_correct")


def answer_by_text(body: dict) -> str:
    """A deterministic Gemini: the answer depends on the request's texts only."""
    texts = [p["text"] for c in body["contents"] for p in c["parts"]]
    return "TRUE" if sum(map(ord, "".join(texts))) % 3 else "FALSE"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    monkeypatch.setenv(FAKE_KEY_VAR, KEY)
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makeini("[pytest]\neval_min_coverage = 0\n")
    write_jsonl(
        pytester.path / "bank.jsonl", [question(f"q-{i:02d}", "TRUE" if i % 2 else "FALSE") for i in range(QUESTIONS)]
    )
    return pytester


def args(project: pytest.Pytester, server, tag: str, *more: str) -> list[str]:
    prices = {"price_in": 2.0, "price_out": 8.0}  # a batch pays half: the registry's default for Gemini too
    entry = model_entry(server.gemini_base, provider="gemini", model_id="gemini-2.5-flash", **prices)
    return run_args(project.path, entry, tag, *more)


def run_file(project: pytest.Pytester, tag: str, name: str) -> dict:
    (run,) = (project.path / f"results-{tag}").glob("fake_zeroshot*")
    return json.loads((run / name).read_text())


def test_twenty_gemini_questions_are_one_batch_and_replay_to_the_scores_of_a_live_run(project, server):
    server.responder = answer_by_text
    live = project.runpytest(*args(project, server, "live", "--eval-record-mode", "once"))
    assert live.ret == 0 and server.live_calls == QUESTIONS and server.batch.created == 0
    server.clear()
    server.live_calls = 0

    batched = project.runpytest(*args(project, server, "batch", "--eval-record-mode", "once", "--eval-batch"))
    assert batched.ret == 0, batched.stdout.str()
    assert server.batch.created == 1 and server.live_calls == 0  # one Gemini batch of twenty, no live call
    [create] = [r for r in server.requests if r["path"].endswith(":batchGenerateContent")]
    assert len(create["body"]["batch"]["input_config"]["requests"]["requests"]) == QUESTIONS
    batched.stdout.fnmatch_lines(["batch: 20 of 20 requests answered ($* at the batch price)"])
    paid = {tag: run_file(project, tag, "run_meta.json")["spent_usd"] for tag in ("live", "batch")}
    assert paid["batch"] == pytest.approx(paid["live"] / 2) and paid["live"] > 0
    cassettes = sorted((project.path / "cassettes-batch" / "fake").rglob("*.yaml"))
    assert len(cassettes) == QUESTIONS

    replayed = project.runpytest(*args(project, server, "batch", "--eval-record-mode", "none"))
    assert replayed.ret == 0 and server.live_calls == 0 and server.batch.created == 1
    assert {k: run_file(project, "batch", "summary.json")[k] for k in SCORES} == {
        k: run_file(project, "live", "summary.json")[k] for k in SCORES
    }
    listed, priced = (run_file(project, tag, "summary.json") for tag in ("live", "batch"))
    assert priced["cost_usd"] == pytest.approx(listed["cost_usd"] / 2)  # the answers as the batch billed them
    assert paid["batch"] == pytest.approx(priced["cost_usd"])
    assert priced["cost_saved_usd"] == {"batch": pytest.approx(listed["cost_usd"] / 2)}
    written = [p.read_text(errors="replace") for p in project.path.rglob("*") if p.is_file() and p.suffix != ".py"]
    shown = batched.stdout.str() + batched.stderr.str()
    assert "PLANTED" not in shown and not [text for text in written if "PLANTED" in text]
