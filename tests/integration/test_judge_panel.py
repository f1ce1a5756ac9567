"""The judge panel through pytest against the fake OpenAI-compatible server: independent judges
(a seed and a temperature per repeat), disagreement flagged, agreement figures, self-judged runs
said so, panels named in the models file, and reasoning recorded by where it was."""

from __future__ import annotations

import json

import pytest
from helpers import the_run

from integration.test_dialectic_run import (
    STRUCTURED,
    Scripted,
    cases_file,
    dialectic_models,
    outputs,
    run,
)
from pytest_reasoning_evals.dialectic import judge, spotcheck

SCORE_BY_SEED = {1: 9, 2: 1, 3: 5}  # one judge model sampled three times, each sample its own opinion


class BySeed(Scripted):
    """Judge replies scored by the request's seed (all five dimensions), or by the judge model."""

    def __init__(self, answers: dict[str, str], by_model: dict[str, int] | None = None):
        super().__init__(answers)
        self.by_model = by_model or {}

    def __call__(self, body: dict) -> str:
        messages = body["messages"]
        if messages[0]["content"] == judge.SYSTEM and "## Resolution Assessment" not in messages[-1]["content"]:
            score = self.by_model.get(body["model"], SCORE_BY_SEED.get(body["seed"], 7))
            return json.dumps({**dict.fromkeys(judge.DIMENSIONS, score), "rationale": f"seed {body['seed']}"})
        return super().__call__(body)


def _meta(pytester) -> dict:
    return json.loads((the_run(pytester.path / "results", "fake", "dialectic") / "run_meta.json").read_text())


def _report(pytester) -> str:
    return (the_run(pytester.path / "results", "fake", "dialectic") / "report.html").read_text()


@pytest.mark.slow
def test_disagreeing_judges_flag_every_response_for_human_review(pytester, server) -> None:
    server.responder = BySeed({"a": STRUCTURED, "b": STRUCTURED, "c": "Canberra."})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"), ("c", "bypass"))
    result = run(pytester, server, cases, "--model", "fake", "-n", "2")
    out = outputs(pytester)
    assert len(out["per_response"]) == 6  # 3 cases x (baseline, dialectic)
    for r in out["per_response"]:
        assert r["judge"]["agreement"] is False and r["judge"]["needs_human_review"] is True, r["query_id"]
        assert [(j["seat"], j["h_quality"]) for j in r["judge"]["judgements"]] == [(1, 9), (2, 1), (3, 5)]
        assert r["judge"]["spread"] == dict.fromkeys(judge.DIMENSIONS, 8.0) and r["judge"]["self_judged"] is True
    assert all(v["needs_human_review"] == v["test_cases"] for v in out["variants"])
    agreement = json.loads(
        (the_run(pytester.path / "results", "fake", "dialectic") / "variant_summary.json").read_text()
    )["judge_agreement"]
    assert (agreement["responses_compared"], agreement["agreeing"], agreement["agreement_share"]) == (6, 0, 0.0)
    assert all(alpha < 0 for alpha in agreement["krippendorff_alpha"].values())  # worse than chance
    queued = {e["review_id"]: e["reasons"] for e in out["queue"]}
    assert all("judge_disagreement" in queued[spotcheck.review_id(r)] for r in out["per_response"])
    # the panel, as run_meta.json records it: one model, three seeds, temperature 0.7
    meta = _meta(pytester)
    assert meta["judge_panel"] == [
        {"judge": k, "alias": "fake", "model_id": "fake-model", "temperature": 0.7, "seed": k} for k in (1, 2, 3)
    ]
    assert meta["self_judged"] is True
    result.stdout.fnmatch_lines(
        [
            "judges: agree on 0/6 responses with 2+ judgements (0%); Krippendorff's alpha (interval): h_quality -*",
            "SELF-JUDGED: a judge is the model that wrote the answers it scores*",
        ]
    )
    page = _report(pytester)
    assert 'id="self-judged"' in page and 'id="judge-agreement"' in page and "<strong>0</strong> of 6 responses" in page


def test_distinct_judge_models_are_not_self_judged_and_keep_the_default_request(pytester, server) -> None:
    server.responder = BySeed({"a": STRUCTURED}, by_model={"fake-judge": 8, "other-model": 7})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    args = ["--model", "fake", "--eval-variant", "dialectic", "--eval-judge-model", "fake-judge,other"]
    result = run(pytester, server, cases, *args, "--eval-n-judges", "2")
    assert result.ret == 0, result.stdout.str()
    judged = [r["body"] for r in server.requests if r["body"]["messages"][0]["content"] == judge.SYSTEM]
    judged = [b for b in judged if "## Resolution Assessment" not in b["messages"][-1]["content"]]
    assert sorted((b["model"], b["temperature"], b["seed"]) for b in judged) == [
        ("fake-judge", 0.0, 0),
        ("other-model", 0.0, 0),
    ]
    a = outputs(pytester)["per_response"][0]
    assert a["judge"]["self_judged"] is False and a["judge"]["agreement"] is True
    assert _meta(pytester)["self_judged"] is False
    assert "SELF-JUDGED" not in result.stdout.str() and 'id="self-judged"' not in _report(pytester)


def test_a_judge_panel_named_in_the_models_file_seats_its_models(pytester, server) -> None:
    server.responder = BySeed({"a": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    panels = pytester.path / "panels.yaml"
    panels.write_text(dialectic_models(server.openai_base) + "judge_panels:\n  duo: [fake-judge, other]\n")
    # run() passes its own models file first; this one, later on the command line, wins
    args = "--model fake --eval-variant dialectic --eval-judge-model duo".split()
    result = run(pytester, server, cases, *args, "--eval-models-file", str(panels))
    assert result.ret == 0, result.stdout.str()
    seats = [(s["alias"], s["temperature"], s["seed"]) for s in _meta(pytester)["judge_panel"]]
    assert seats == [("fake-judge", 0.7, 1), ("other", 0.0, None), ("fake-judge", 0.7, 3)]


@pytest.mark.parametrize("value", ["0", "-0.5", "2.5"])
def test_a_judge_temperature_outside_0_to_2_is_a_usage_error(pytester, server, value) -> None:
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", f"--eval-judge-temperature={value}")
    assert result.ret == 4
    assert f"--eval-judge-temperature must be above 0 and at most 2, got {float(value)}" in result.stderr.str()
    assert server.requests == []


def test_thinking_in_the_answer_and_reasoning_from_the_provider_are_recorded_apart(pytester, server) -> None:
    server.responder = Scripted({"a": "<thinking>\nH1 or H2?\n</thinking>\n" + STRUCTURED})
    server.reasoning = "provider-side: weigh demand first"
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "1")
    assert result.ret == 0, result.stdout.str()
    a = outputs(pytester)["per_response"][0]
    assert a["thinking"] == {"in_answer": "H1 or H2?", "from_provider": "provider-side: weigh demand first"}
    assert "provider-side" not in a["text"]  # the provider's reasoning is not the answer


class OneDeepJudge(BySeed):
    """Seat 2 answers with JSON nested 50,000 deep; the other seats score as BySeed does."""

    def __call__(self, body: dict) -> str:
        if body.get("seed") == 2 and "## Evaluate Dialectical" in body["messages"][-1]["content"]:
            return '{"h_quality": ' * 50_000 + "1" + "}" * 50_000
        return super().__call__(body)


def test_a_judge_reply_nested_50000_deep_is_unreadable_and_the_other_judges_scores_stand(pytester, server) -> None:
    server.responder = OneDeepJudge({"a": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "-k", "judge")
    assert "RecursionError" not in result.stdout.str() + result.stderr.str()
    a = outputs(pytester)["per_response"][0]
    assert [(j["seat"], j["h_quality"]) for j in a["judge"]["judgements"]] == [(1, 9), (3, 5)]
    (error,) = a["judge"]["errors"]
    assert error.startswith("judge 2 (fake): no JSON object in the judge reply") and "\n" not in error
    assert a["score"] == 70.0  # the medians of 9 and 5


# --- a response that was not answered is judged by no one ---


def _judge_requests(server) -> list[dict]:
    """What the judge model was asked: rubric judgements and resolution turns."""
    return [r["body"] for r in server.requests if r["body"]["model"] == "fake-judge"]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_responses_that_missed_their_cassettes_are_sent_to_no_judge(pytester, server, workers) -> None:
    server.responder = BySeed({"a": STRUCTURED, "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "bypass"))
    # the model under test has cassettes (so it replays: record mode none), its judge has none (once)
    placeholder = pytester.path / "cassettes" / "fake" / "dialectic" / "another-case.yaml"
    placeholder.parent.mkdir(parents=True)
    placeholder.write_text("interactions: []\nversion: 1\n")
    args = ["--model", "fake", "--eval-judge-model", "fake-judge", "--eval-variant", "dialectic", "-n", workers]
    result = run(pytester, server, cases, *args, record_mode=None)
    assert server.requests == [], "no response was answered: nothing is judged, resolved or followed up"
    assert not (pytester.path / "cassettes" / "fake-judge").exists()
    result.stdout.fnmatch_lines_random(
        [
            "*test_judge[[]a@dialectic] - not judged: the response was not answered (cassette miss for item 'a__dialectic'*",
            "*test_resolution[[]b@dialectic] - not judged: the response was not answered (cassette miss*",
        ]
    )
    out = outputs(pytester)
    for r in out["per_response"]:
        assert r["score"] is None and r["judge"]["n_judges"] == 0 and "cassette miss" in r["judge"]["not_judged"]
    assert [v["mean_score"] for v in out["variants"]] == [None]
    assert (out["multiturn"]["resolved"], out["multiturn"]["not_judged"]) == (0, 2)
    assert all(c["verdicts"] == [] for c in out["multiturn"]["conversations_detail"])
    assert "0/0 resolved" in result.stdout.str() and "2/2 resolved" not in result.stdout.str()


class EmptyFollowUp(BySeed):
    """Case `a` answers with nothing; case `b` answers, is not resolved, and its follow-up is empty."""

    def __call__(self, body: dict) -> str:
        if body["messages"][-1]["content"].startswith("Can you synthesize"):
            return ""
        if "## Resolution Assessment" in body["messages"][-1]["content"]:
            return json.dumps({"resolved": False, "confidence": 0.5, "reasoning": "not yet"})
        return super().__call__(body)


def test_an_empty_reply_is_sent_to_no_judge_and_ends_its_conversation(pytester, server) -> None:
    server.responder = EmptyFollowUp({"a": "   ", "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = ["--model", "fake", "--eval-judge-model", "fake-judge", "--eval-variant", "dialectic"]
    result = run(pytester, server, cases, *args, "--eval-n-judges", "1")
    judged = [m[-1]["content"] for m in (b["messages"] for b in _judge_requests(server))]
    assert not any("about a?" in text for text in judged), "the empty response of a is judged by no one"
    resolution = [t for t in judged if t.startswith("## Resolution Assessment")]
    assert len(resolution) == 1, "b's empty follow-up is not sent to the resolution judge"
    result.stdout.fnmatch_lines_random(
        [
            "*test_judge[[]a@dialectic] - not judged: the response was not answered (an empty reply)",
            "*test_resolution[[]a@dialectic] - not judged: the response was not answered (an empty reply)",
            "*test_resolution[[]b@dialectic] - not resolved after 2 turns (1 call failed; first: follow-up 2: "
            "the reply was not answered (an empty reply))",
        ]
    )
    a = next(r for r in outputs(pytester)["per_response"] if r["query_id"] == "a")
    assert a["score"] is None and a["judge"]["not_judged"] == "the response was not answered (an empty reply)"
    # nothing to judge is no pass either
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "gate dialectic-judge-failed-calls: FAILED (3 of 4 judge and resolution items (75.0%) got no usable "
            "judgement or had a failed call (2 responses not answered, 1 with failed calls), allowed 5%)"
        ]
    )
