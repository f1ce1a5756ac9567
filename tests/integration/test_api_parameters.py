"""Real API parameters (issue 28 item 5) through a real pytest run against the fake server on
127.0.0.1: --eval-max-tokens and --eval-temperature (and their ini keys) reach every answer's
request and the run's manifest; each protocol's own max tokens (issue 39 item 5) wins over the
generic one for its answers; a reasoning model's request takes its own parameters."""

from __future__ import annotations

import json

import pytest
from helpers import (
    DIALECTIC_MODULE,
    EVAL_MODULE,
    fake_run_args,
    four_questions,
    model_entry,
    models_yaml,
    run_dir,
    the_run,
)

from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file
from pytest_reasoning_evals.dialectic import judge


def chaosbench_run(pytester, server, *args: str):
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    return pytester.runpytest(*fake_run_args(pytester, server.openai_base, four_questions(pytester)), *args)


def model_config(pytester) -> dict:
    return json.loads((run_dir(pytester, "fake") / "run_manifest.json").read_text())["model_config"]


def test_max_tokens_and_temperature_reach_every_request_and_the_manifest(pytester, server):
    result = chaosbench_run(pytester, server, "--eval-max-tokens", "7", "--eval-temperature", "0.3")
    assert result.ret == 0, result.stdout.str()
    assert len(server.requests) == 4
    assert {(r["body"]["max_tokens"], r["body"]["temperature"]) for r in server.requests} == {(7, 0.3)}
    config = model_config(pytester)
    assert (config["max_tokens"], config["temperature"], config["reasoning"]) == (7, 0.3, False)


def test_the_defaults_send_and_record_what_was_always_sent(pytester, server):
    assert chaosbench_run(pytester, server).ret == 0
    assert {(r["body"]["max_tokens"], r["body"]["temperature"]) for r in server.requests} == {(64, 0.0)}
    assert (model_config(pytester)["max_tokens"], model_config(pytester)["temperature"]) == (64, 0.0)


def test_the_ini_keys_set_them_too(pytester, server):
    pytester.makeini("[pytest]\neval_max_tokens = 9\neval_temperature = 1.5\n")
    assert chaosbench_run(pytester, server).ret == 0
    assert {(r["body"]["max_tokens"], r["body"]["temperature"]) for r in server.requests} == {(9, 1.5)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eval-max-tokens", "0"], "--eval-max-tokens (ini eval_max_tokens) must be a number of tokens >= 1, got 0"),
        (
            ["--eval-max-tokens", "1000001"],
            "--eval-max-tokens (ini eval_max_tokens) must be at most 1,000,000 tokens, got 1000001",
        ),
        (["--eval-temperature", "2.5"], "--eval-temperature (ini eval_temperature) must be from 0 to 2, got 2.5"),
        (
            ["--eval-dialectic-max-tokens", "1000001"],
            "--eval-dialectic-max-tokens (ini eval_dialectic_max_tokens) must be at most 1,000,000 tokens, got 1000001",
        ),
        (
            ["--eval-chaosbench-max-tokens", "0"],
            "--eval-chaosbench-max-tokens (ini eval_chaosbench_max_tokens) must be a number of tokens >= 1, got 0",
        ),
    ],
)
def test_a_bad_value_is_a_usage_error(pytester, args, message):
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature(pytester, server):
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    args = fake_run_args(pytester, server.openai_base, four_questions(pytester))
    reasoner = model_entry(server.openai_base, model_id="fake-reasoner", reasoning=True, thinking_budget=1000)
    (pytester.path / "models.yaml").write_text(models_yaml(reasoner))
    result = pytester.runpytest(*args, "--eval-temperature", "0.3")
    assert result.ret == 0, result.stdout.str()
    for request in server.requests:
        body = request["body"]
        assert body["max_completion_tokens"] == 64 + 1000
        assert "temperature" not in body and "max_tokens" not in body
    config = model_config(pytester)
    # no temperature was sent; its thinking budget is the registry entry's
    assert (config["max_tokens"], config["temperature"]) == (64, None)
    assert (config["reasoning"], config["thinking_budget"]) == (True, 1000)


def test_dialectic_responses_and_follow_ups_take_them_and_judges_keep_their_own(pytester, server):
    server.responder = Scripted({"c1": STRUCTURED}, resolved=[False])
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    cases = cases_file(pytester.path / "cases.yaml", ("c1", "dialectic"))
    args = fake_run_args(pytester, server.openai_base, four_questions(pytester))
    result = pytester.runpytest_subprocess(
        *args,
        "--eval-dialectic-cases",
        str(cases),
        "--eval-variant",
        "dialectic",
        "--eval-n-judges",
        "2",
        "--eval-max-tokens",
        "300",
        "--eval-temperature",
        "0.2",
    )
    assert result.ret in (0, 1), result.stdout.str()
    judged = [r["body"] for r in server.requests if r["body"]["messages"][0]["content"] == judge.SYSTEM]
    answers = [r["body"] for r in server.requests if r["body"]["messages"][0]["content"] != judge.SYSTEM]
    assert len(answers) == 4  # the response and three follow-ups (never resolved)
    assert {(b["max_tokens"], b["temperature"]) for b in answers} == {(300, 0.2)}
    assert {b["max_tokens"] for b in judged} == {judge.MAX_TOKENS}
    assert {b["temperature"] for b in judged} == {0.7, 0.0}  # the panel's seats and the resolution judge
    meta = json.loads((the_run(pytester.path / "results", "fake", "dialectic") / "run_meta.json").read_text())
    assert (meta["max_tokens"], meta["temperature"]) == (300, 0.2)


def test_each_protocol_answers_with_its_own_max_tokens_in_one_run(pytester, server):
    """A 64-token ChaosBench recording and a 256-token dialectic one replayed by one command: each
    protocol's own option (here its ini key) wins over the generic --eval-max-tokens, which stays
    the default of a protocol without one."""
    dialectic_replies = Scripted({"c1": STRUCTURED}, resolved=[True])
    server.responder = lambda body: (
        "TRUE" if "deterministic" in body["messages"][-1]["content"] else dialectic_replies(body)
    )
    pytester.makepyfile(test_chaosbench=EVAL_MODULE, test_dialectic=DIALECTIC_MODULE)
    pytester.makeini("[pytest]\neval_chaosbench_max_tokens = 64\neval_min_coverage = 0\n")
    cases = cases_file(pytester.path / "cases.yaml", ("c1", "dialectic"))
    args = fake_run_args(pytester, server.openai_base, four_questions(pytester))
    dialectic = ["--eval-dialectic-cases", str(cases), "--eval-variant", "dialectic", "--eval-n-judges", "1"]
    result = pytester.runpytest_subprocess(*args, *dialectic, "--eval-max-tokens", "100")
    assert result.ret in (0, 1), result.stdout.str()
    answers = [r["body"] for r in server.requests if r["body"]["messages"][0]["content"] != judge.SYSTEM]
    questions = [b for b in answers if "deterministic" in b["messages"][-1]["content"]]
    responses = [b for b in answers if b not in questions]
    assert len(questions) == 4 and {b["max_tokens"] for b in questions} == {64}
    assert responses and {b["max_tokens"] for b in responses} == {100}, "the generic option: the default"
    assert model_config(pytester)["max_tokens"] == 64

    server.clear()
    replay = pytester.runpytest_subprocess(
        *args, *dialectic, "--eval-dialectic-max-tokens", "100", "--eval-max-tokens", "7", "--eval-record-mode", "none"
    )
    assert replay.ret in (0, 1) and server.requests == [], replay.stdout.str()
    assert "cassette miss" not in replay.stdout.str()
