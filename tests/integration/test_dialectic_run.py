"""The dialectic protocol through pytest against a real HTTP server on 127.0.0.1 (the stdlib
fake speaking the OpenAI wire format): items, PCC hard fails, judges, multi-turn resolution,
cross-provider comparison, the spot-check import of a real run, outputs and gates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT, cassette_path, model_entry, models_yaml

from pytest_reasoning_evals.dialectic import judge, spotcheck
from pytest_reasoning_evals.dialectic.cases import cases_sha256

EVAL_MODULE = (PROJECT_ROOT / "evals" / "test_dialectic.py").read_text(encoding="utf-8")
PLANTED = "You should do it.\n\n**Confidence**: 0.9"  # a confident answer with no visible process
STRUCTURED = """## Hypotheses
**H1: Do it** - the case for.
**H2: Wait** - the case against.

## Oscillation
| Hypothesis | Initial | Post-Oscillation |
|---|---|---|
| H1 | Strong | Strong |
| H2 | Moderate | Weakened |

Stability: STABLE

## Cruxes
1. Will demand hold? (empirical)
2. Is speed worth the risk? (value)

## Recommendation
Do it in two steps.

**Confidence**: 0.80
"""
JUDGE_OK = {
    "h_quality": 8,
    "oscillation_depth": 7,
    "crux_precision": 8,
    "epistemic_calibration": 7,
    "actionability": 9,
    "rationale": "clear",
}


def cases_file(path: Path, *cases: tuple[str, str]) -> Path:
    lines = ["cases:"]
    for case_id, mode in cases:
        lines += [
            f"  - id: {case_id}",
            "    category: test",
            f"    expected_mode: {mode}",
            f"    query: What should I do about {case_id}?",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


class Scripted:
    """Answers generation, judge and resolution requests of the fake server."""

    def __init__(
        self,
        answers: dict[str, str],
        judges: list[dict | str] | None = None,
        resolved: list[bool] | None = None,
        baseline: dict[str, str] | None = None,
    ):
        self.answers = answers  # case id -> generated text
        self.baseline = baseline or {}  # case id -> text when no system prompt is sent
        self.judges = judges or [JUDGE_OK]  # replies to judge calls, cycled in order
        self.resolved = resolved or [True]  # resolution verdicts, cycled in order
        self.calls = {"generation": 0, "judge": 0, "resolution": 0, "followup": 0}

    def __call__(self, body: dict) -> str:
        messages = body["messages"]
        last = messages[-1]["content"]
        if messages[0]["content"] == judge.SYSTEM and "## Resolution Assessment" in last:
            verdict = self.resolved[self.calls["resolution"] % len(self.resolved)]
            self.calls["resolution"] += 1
            return json.dumps({"resolved": verdict, "confidence": 0.8, "reasoning": "r"})
        if messages[0]["content"] == judge.SYSTEM:
            reply = self.judges[self.calls["judge"] % len(self.judges)]
            self.calls["judge"] += 1
            return reply if isinstance(reply, str) else json.dumps(reply)
        if last.startswith("Can you synthesize"):
            self.calls["followup"] += 1
            return f"Follow-up {self.calls['followup']}: do it."
        self.calls["generation"] += 1
        case_id = re.search(r"about (\S+)\?", last).group(1)
        if messages[0]["role"] != "system" and case_id in self.baseline:
            return self.baseline[case_id]
        return self.answers[case_id]


def dialectic_models(url: str) -> str:
    """fake and other (priced) and fake-judge, OpenAI-compatible models at `url`."""
    return models_yaml(
        model_entry(url, provider="openai_compatible", price_in=1000.0, price_out=2000.0),
        model_entry(url, "fake-judge", provider="openai_compatible", model_id="fake-judge"),
        model_entry(
            url, "other", provider="openai_compatible", model_id="other-model", price_in=4000.0, price_out=8000.0
        ),
    )


def run(pytester, server, cases: Path, *args: str, module: str = EVAL_MODULE, record_mode: str | None = "once"):
    """A dialectic run against `server`; `record_mode` None: each model's default (replay when it has cassettes)."""
    pytester.makepyfile(test_dialectic=module)
    models = pytester.path / "models.yaml"
    models.write_text(dialectic_models(server.openai_base))
    return pytester.runpytest_subprocess(
        "--eval-models-file",
        str(models),
        "--eval-dialectic-cases",
        str(cases),
        "--eval-cassette-dir",
        str(pytester.path / "cassettes"),
        *(["--eval-record-mode", record_mode] if record_mode else []),
        "-p",
        "no:randomly",
        *args,
    )


def outputs(pytester) -> dict:
    # the last run's: results/fake_dialectic, or results/fake_dialectic-subset after a -k run
    directory = max((pytester.path / "results").glob("fake_dialectic*"), key=lambda p: p.stat().st_mtime_ns)
    return {
        "per_response": [json.loads(line) for line in (directory / "per_response.jsonl").read_text().splitlines()],
        "variants": json.loads((directory / "variant_summary.json").read_text())["variants"],
        "multiturn": json.loads((directory / "multiturn_summary.json").read_text()),
        "cross": json.loads((directory / "cross_provider_summary.json").read_text()),
        "queue": [json.loads(line) for line in (directory / "spotcheck_queue.jsonl").read_text().splitlines()],
        "key": json.loads((directory / "spotcheck_key.json").read_text()),
    }


def response_of(out: dict, case_id: str, variant: str = "dialectic", model: str = "fake") -> dict:
    return next(
        r for r in out["per_response"] if (r["query_id"], r["variant"], r["model"]) == (case_id, variant, model)
    )


# --- PCC: the acceptance case ---


@pytest.mark.slow
def test_confident_answer_without_process_is_a_hard_fail_only_where_dialectic_is_expected(pytester, server) -> None:
    server.responder = Scripted({"decide": PLANTED, "fact": PLANTED})
    cases = cases_file(pytester.path / "cases.yaml", ("decide", "dialectic"), ("fact", "bypass"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "1")
    assert result.ret == 0, result.stdout.str()  # hard fails fail items; the gate is opt-in
    result.stdout.fnmatch_lines(
        [
            "test_dialectic.py::test_pcc[decide@dialectic] - "
            "PCC violation: confidence 0.90 > ceiling 0.45 (no oscillation table)"
        ]
    )
    out = outputs(pytester)
    decide, fact = response_of(out, "decide"), response_of(out, "fact")
    assert decide["hard_fail"] is True and decide["metrics"]["pcc_valid"] is False and decide["score"] == 0.0
    assert fact["hard_fail"] is False and fact["metrics"]["pcc_valid"] is None  # not applicable
    variant = next(v for v in out["variants"] if v["variant"] == "dialectic")
    assert (variant["hard_fails"], variant["pcc_compliance"], variant["pcc_applicable"]) == (1, 0.0, 1)
    assert "pcc_violation" in next(e for e in out["queue"] if e["review_id"] == spotcheck.review_id(decide))["reasons"]

    gated = run(
        pytester,
        server,
        cases,
        "--model",
        "fake",
        "--eval-variant",
        "dialectic",
        "--eval-n-judges",
        "1",
        "--eval-max-hard-fails",
        "0",
    )
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["gate max-hard-fails: FAILED (1 PCC hard fails, allowed 0)"])


# --- one response per case x variant, every check reading it ---


@pytest.mark.slow
def test_every_check_reads_one_generated_response_per_case_and_variant(pytester, server) -> None:
    scripted = Scripted({"a": STRUCTURED, "b": STRUCTURED, "c": "Canberra."})
    server.responder = scripted
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"), ("c", "bypass"))
    result = run(pytester, server, cases, "--model", "fake", "-n", "2", "-v")
    assert result.ret == 0, result.stdout.str()
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        found = re.match(r"\[(gw\d)\].*::test_\w+\[([abc])@", line)
        if found:
            workers.setdefault(found.group(2), set()).add(found.group(1))
    assert sorted(workers) == ["a", "b", "c"] and all(len(w) == 1 for w in workers.values()), workers
    generation = [r for r in server.requests if r["body"]["messages"][-1]["content"].startswith("What should")]
    assert len(generation) == 3 * 2, "one generation per case x variant (baseline, dialectic), under -n 2"
    assert len({json.dumps(r["body"], sort_keys=True) for r in generation}) == 6
    result.stdout.fnmatch_lines(["*3 cases*hard fails 0*"])
    out = outputs(pytester)
    a = response_of(out, "a")
    assert a["checks"] == {"structure": True, "pcc": True, "mode": True, "judge": True}
    assert a["metrics"] == {
        "h_count": 2,
        "oscillation": True,
        "cruxes": 2,
        "confidence": 0.8,
        "pcc_valid": True,
        "mode_correct": True,
    }
    assert a["judge_scores"] == {d: float(JUDGE_OK[d]) for d in judge.DIMENSIONS}
    assert a["score"] == pytest.approx(10 * sum(JUDGE_OK[d] for d in judge.DIMENSIONS) / 5)
    baseline_c = response_of(out, "c", variant="baseline")
    assert baseline_c["metrics"]["mode_correct"] is True and baseline_c["metrics"]["pcc_valid"] is None
    variant = next(v for v in out["variants"] if v["variant"] == "dialectic")
    assert variant["test_cases"] == 3 and variant["mode_accuracy"] == 1.0 and variant["pass"] is True


def test_judge_requests_follow_the_methodology_and_ask_for_the_schema(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    run(
        pytester,
        server,
        cases,
        "--model",
        "fake",
        "--eval-judge-model",
        "fake-judge",
        "--eval-variant",
        "dialectic",
        "-k",
        "judge",
    )
    judged = [r["body"] for r in server.requests if r["body"]["model"] == "fake-judge"]
    assert len(judged) == 3, "n_judges defaults to 3"
    body = judged[0]
    assert body["messages"][0] == {"role": "system", "content": judge.SYSTEM}
    assert body["messages"][1]["content"].startswith(
        "## Evaluate Dialectical Response Quality\n\n### Response: ## Hypotheses"
    )
    assert body["max_tokens"] == 500
    assert body["response_format"] == {"type": "json_object", "schema": judge.SCHEMA}
    # one judge model sitting three times: three independent samples, never one request three times
    assert sorted((b["temperature"], b["seed"]) for b in judged) == [(0.7, 1), (0.7, 2), (0.7, 3)]
    assert len({json.dumps(b, sort_keys=True) for b in judged}) == 3
    judge_cassettes = sorted(
        p.name for p in (pytester.path / "cassettes" / "fake-judge" / "dialectic-judge").glob("*.yaml")
    )
    assert judge_cassettes == [f"a__dialectic__fake__judge{k}.yaml" for k in (1, 2, 3)]


@pytest.mark.parametrize("given", ["comma-separated", "repeated"])
def test_judges_and_compared_models_are_named_comma_separated_or_repeated(pytester, server, given) -> None:
    """`--eval-judge-model a --eval-judge-model b` is the panel of a and b, as `a,b` is (and as
    --eval-variant repeats): a second flag never drops the first judge without a word."""
    server.responder = Scripted({"a": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    named = {
        "comma-separated": ["--eval-judge-model", "fake-judge,other", "--eval-compare-models", "fake,other"],
        "repeated": ["--eval-judge-model", "fake-judge", "--eval-judge-model", "other"]
        + ["--eval-compare-models", "fake", "--eval-compare-models", "other"],
    }[given]
    result = run(
        pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "2", *named
    )
    assert result.ret in (0, 1), result.stdout.str()
    judged = sorted(r["body"]["model"] for r in server.requests if "Evaluate Dialectical" in str(r["body"]["messages"]))
    assert sorted(set(judged)) == ["fake-judge", "other-model"], judged  # both judges sat
    assert outputs(pytester)["cross"]["providers_compared"] == ["fake", "other"]


def test_judges_disagreeing_or_unparseable_are_flagged_and_medians_used(pytester, server) -> None:
    low = {**JUDGE_OK, "h_quality": 2}
    server.responder = Scripted({"a": STRUCTURED}, judges=[JUDGE_OK, low, "I think it is fine."])
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic")
    assert result.ret == 0, result.stdout.str()
    a = response_of(outputs(pytester), "a")
    assert a["judge"]["n_valid"] == 2 and len(a["judge"]["errors"]) == 1 and "no JSON object" in a["judge"]["errors"][0]
    assert a["judge"]["agreement"] is False and a["judge"]["needs_human_review"] is True
    assert a["judge_scores"]["h_quality"] == 5.0  # median of 8 and 2
    queued = next(e for e in outputs(pytester)["queue"] if e["review_id"] == spotcheck.review_id(a))
    assert {"judge_disagreement", "judge_error"} <= set(queued["reasons"])


@pytest.mark.slow
def test_changing_the_judge_does_not_generate_again(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "-k", "judge")
    server.clear()
    result = run(
        pytester,
        server,
        cases,
        "--model",
        "fake",
        "--eval-judge-model",
        "fake-judge",
        "--eval-variant",
        "dialectic",
        "-k",
        "judge",
    )
    assert result.ret == 0, result.stdout.str()
    assert {r["body"]["model"] for r in server.requests} == {"fake-judge"}, "the answer came from its cassette"


# --- multi-turn resolution ---


def test_resolution_follows_up_with_the_real_history_until_resolved(pytester, server) -> None:
    server.responder = Scripted(
        {"a": STRUCTURED, "b": STRUCTURED}, resolved=[False, False, True, False, False, False, False]
    )
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "-k", "resolution")
    out = outputs(pytester)["multiturn"]
    a, b = out["conversations_detail"]
    assert (a["turns_to_resolution"], b["turns_to_resolution"]) == (3, None)
    assert b["turns"] == 4, "at most 4 turns"
    followups = [
        r["body"]["messages"] for r in server.requests if r["body"]["messages"][-1]["content"].startswith("Can you")
    ]
    first = followups[0]
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert first[2]["content"] == STRUCTURED
    assert followups[1][4]["content"] == "Follow-up 1: do it."  # the model's own earlier reply, as history
    assert (out["resolution_rate"], out["first_turn_resolution_rate"], out["mean_turns_to_resolution"]) == (
        0.5,
        0.0,
        3.0,
    )
    assert out["cost_per_resolution"] == pytest.approx(out["total_cost_usd"] / 1)
    result.stdout.fnmatch_lines(["test_dialectic.py::test_resolution[[]b@dialectic] - not resolved after 4 turns"])


# --- cross-provider ---


@pytest.mark.slow
def test_cross_provider_comparison_schema_and_rankings(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED})
    server.usage.prompt, server.usage.completion = 100, 50
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(
        pytester,
        server,
        cases,
        "--model",
        "fake",
        "--eval-variant",
        "dialectic",
        "--eval-compare-models",
        "fake,other",
        "--eval-judge-model",
        "fake-judge",
        "-k",
        "cross_provider",
    )
    assert result.ret == 0, result.stdout.str()
    cross = outputs(pytester)["cross"]
    assert cross["providers_compared"] == ["fake", "other"]
    (comparison,) = cross["comparisons"]
    fake, other = comparison["providers"]["fake"], comparison["providers"]["other"]
    assert fake["cost_usd"] == pytest.approx((100 * 1000 + 50 * 2000) / 1e6)
    assert fake["total_tokens"] == 150 and fake["cost_per_mtok"] == pytest.approx(fake["cost_usd"] / 150 * 1e6)
    assert fake["efficiency"] == pytest.approx(fake["composite_score"] / (fake["cost_usd"] * 100))
    assert fake["tokens_per_second"] == pytest.approx(50 / (fake["latency_ms"] / 1000))
    assert other["cost_usd"] == pytest.approx((100 * 4000 + 50 * 8000) / 1e6)
    assert comparison["comparison"]["quality_adjusted_efficiency"] == {
        "fake": fake["efficiency"],
        "other": other["efficiency"],
    }
    # same answers, same judge: equal quality, so the tie goes to the first alias; fake is cheaper
    assert comparison["comparison"]["best_cost"] == "fake" and comparison["comparison"]["best_quality"] == "fake"
    assert cross["rankings"]["by_efficiency"] == ["fake", "other"]


@pytest.mark.slow
def test_spotcheck_import_reports_agreement_for_a_real_dialectic_run(pytester, server) -> None:
    """End to end: a dialectic run writes the queue and key, a reviewer fills the queue, the
    import compares the human scores with the judges' medians recorded by the run."""
    low = {**JUDGE_OK, "h_quality": 2}  # judges 8, 2, 8: they disagree, so every response is queued
    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED, "c": "Canberra."}, judges=[JUDGE_OK, low, JUDGE_OK])
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"), ("c", "bypass"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-variant", "dialectic", "-k", "judge")
    assert result.ret == 0, result.stdout.str()
    (directory,) = (pytester.path / "results").glob("fake_dialectic_cases-*-subset")
    out = outputs(pytester)
    assert len(out["queue"]) == 3
    medians = {d: float(JUDGE_OK[d]) for d in judge.DIMENSIONS}  # h_quality: median of 8, 2, 8
    assert all(entry["judge_medians"] == medians for entry in out["key"].values())

    human = {**JUDGE_OK, "h_quality": 3}  # 5 points from the judges on h_quality, equal elsewhere
    filled = pytester.path / "filled.jsonl"
    filled.write_text(
        "".join(json.dumps({**entry, **{d: human[d] for d in judge.DIMENSIONS}}) + "\n" for entry in out["queue"])
    )
    imported = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "spotcheck-import", str(filled), "--results", str(directory)],
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    assert "3 reviewed, human-judge agreement 80%" in imported.stdout
    agreement = json.loads((directory / "spotcheck_agreement.json").read_text())
    assert agreement["reviewed"] == 3 and agreement["agreement"] == pytest.approx(0.8)
    assert agreement["per_dimension"]["h_quality"] == {"agreement": 0.0, "mean_abs_gap": 5.0}
    assert agreement["per_dimension"]["actionability"] == {"agreement": 1.0, "mean_abs_gap": 0.0}


# --- gates ---


@pytest.mark.slow
def test_variant_pass_gate(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED, "c": "Canberra."}, baseline={"a": "Just do it."})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("c", "bypass"))
    passing = run(
        pytester, server, cases, "--model", "fake", "--eval-require-variant-pass", "dialectic", "--eval-n-judges", "1"
    )
    assert passing.ret == 0, passing.stdout.str()
    passing.stdout.fnmatch_lines(["gate variant-pass?dialectic?: passed*"])
    failing = run(
        pytester, server, cases, "--model", "fake", "--eval-require-variant-pass", "baseline", "--eval-n-judges", "1"
    )
    assert failing.ret == 1  # the baseline shows no structure: mode accuracy 0.5
    failing.stdout.fnmatch_lines(
        ["gate variant-pass?baseline?: FAILED (fake: hard fails 0, *mode accuracy 0.50 (>= 0.9))"]
    )


def test_a_run_whose_judges_gave_no_usable_judgement_fails_its_judge_gate(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED}, judges=["I think it is fine."])
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = ["--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "1"]
    result = run(pytester, server, cases, *args)
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate dialectic-judge-failed-calls: FAILED (2 of 4 judge and resolution items (50.0%) "
            "got no usable judgement or had a failed call (2 unreadable judge replies), allowed 5%)"
        ]
    )
    directory = next((pytester.path / "results").glob("fake_dialectic*"))
    assert json.loads((directory / "gates.json").read_text())["passed"] is False
    badges = (directory / "report.html").read_text().split("<dl", 1)[0]
    assert "1 of 1 gates failed" in badges and "gates passed" not in badges
    # the share is the project's to set (a small judge model's own demo, say)
    lenient = run(pytester, server, cases, *args, "--eval-max-failed-judge-share", "0.5")
    assert lenient.ret == 0, lenient.stdout.str()
    lenient.stdout.fnmatch_lines(["gate dialectic-judge-failed-calls: passed (2 of 4 *, allowed 50%)"])


@pytest.mark.parametrize(
    ("value", "told"),
    [
        ("-0.1", "--eval-max-failed-judge-share must be between 0 and 1, got -0.1"),
        ("1.5", "--eval-max-failed-judge-share must be between 0 and 1, got 1.5"),
        ("nan", "argument --eval-max-failed-judge-share: expected a finite number, got 'nan'"),
    ],
)
def test_a_failed_judge_share_outside_0_to_1_is_a_usage_error(pytester, server, value, told) -> None:
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", f"--eval-max-failed-judge-share={value}")
    assert result.ret == 4
    assert told in result.stderr.str()
    assert server.requests == []


# --- what a run spent is in its files ---

# dialectic_models' prices
PRICES = {"fake-model": (1000.0, 2000.0), "fake-judge": (0.0, 0.0), "other-model": (4000.0, 8000.0)}


def paid(requests: list[dict]) -> float:
    """What the provider was paid for `requests` (each answered with the fake's usage: 12 in, 3 out)."""
    return sum((12 * PRICES[r["body"]["model"]][0] + 3 * PRICES[r["body"]["model"]][1]) / 1e6 for r in requests)


@pytest.mark.parametrize(
    ("stop", "workers"),
    [("complete", "0"), ("complete", "2"), ("budget", "0"), ("maxfail", "0"), ("refused key", "0")],
)
def test_every_cost_a_dialectic_run_paid_is_in_its_files(pytester, server, stop, workers) -> None:
    from fakeprovider import slow, status

    server.responder = Scripted({"a": PLANTED if stop == "maxfail" else STRUCTURED, "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = ["--model", "fake", "--eval-judge-model", "other", "--eval-n-judges", "1", "-n", workers]
    args += {
        "complete": [],
        "budget": ["--eval-max-cost", "0.2"],
        "maxfail": ["-x", "--eval-concurrency", "4"],  # calls made ahead for items -x never ran
        "refused key": ["--eval-concurrency", "1"],
    }[stop]
    if stop == "refused key":
        server.script(*[slow(0)] * 5, status(401))  # five paid replies, then the key is refused
    result = run(pytester, server, cases, *args)
    answered = server.requests[:5] if stop == "refused key" else server.requests
    directory = max((pytester.path / "results").glob("fake_dialectic*"), key=lambda p: p.stat().st_mtime_ns)
    meta = json.loads((directory / "run_meta.json").read_text())
    assert meta["spent_usd"] == pytest.approx(paid(answered)), result.stdout.str()
    assert meta["complete"] is (stop == "complete")
    if stop == "complete":  # every call's price is in a record: responses, judges, resolution turns
        out = outputs(pytester)
        judged = [r["judge"]["cost_usd"] for r in out["per_response"]]
        assert judged == [pytest.approx((12 * 4000 + 3 * 8000) / 1e6)] * 4  # one "other" judge call each
        turns = [v["cost_usd"] for c in out["multiturn"]["conversations_detail"] for v in c["verdicts"]]
        assert sum(r["cost"] for r in out["per_response"]) + sum(judged) + sum(turns) == pytest.approx(
            meta["spent_usd"]
        )
        assert sum(v["judge_cost_usd"] for v in out["variants"]) == pytest.approx(sum(judged))
        # ... and in its terminal summary, by part, beside what this run's live calls paid
        responses, judges = sum(r["cost"] for r in out["per_response"]), sum(judged)
        shown = f"cost ${meta['spent_usd']:.4f} (responses ${responses:.4f}, judges ${judges:.4f}, "
        shown += f"resolution conversations ${sum(turns):.4f}); paid by live calls now ${meta['spent_usd']:.4f}"
        assert shown in result.stdout.str(), result.stdout.str()
        page = (directory / "report.html").read_text()  # the page's run cost: each call once, as paid
        assert f"<dt>cost</dt><dd>${meta['spent_usd']:.4f}</dd>" in page
        replayed = run(pytester, server, cases, *args)  # the same answers at their price, nothing paid now
        replay_cost = shown.split("; paid", 1)[0] + "; paid by live calls now $0.0000"
        assert replay_cost in replayed.stdout.str(), replayed.stdout.str()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_that_compares_models_counts_what_their_responses_and_judges_cost(pytester, server, workers) -> None:
    # the cost line said $x while its live calls paid 2x: the compared models' calls were nowhere
    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = ["--model", "fake", "--eval-judge-model", "other", "--eval-n-judges", "1", "-n", workers]
    result = run(pytester, server, cases, *args, "--eval-compare-models", "fake,other")
    directory = max((pytester.path / "results").glob("fake_dialectic*"), key=lambda p: p.stat().st_mtime_ns)
    spent = json.loads((directory / "run_meta.json").read_text())["spent_usd"]
    assert spent == pytest.approx(paid(server.requests)), result.stdout.str()
    line = next(line for line in result.stdout.str().splitlines() if line.startswith("cost $"))
    assert line.startswith(f"cost ${spent:.4f} (") and "compared models $" in line, line
    assert line.endswith(f"paid by live calls now ${spent:.4f}"), line
    assert f"<dt>cost</dt><dd>${spent:.4f}</dd>" in (directory / "report.html").read_text()
    replayed = run(pytester, server, cases, *args, "--eval-compare-models", "fake,other")
    assert line.split("; paid", 1)[0] + "; paid by live calls now $0.0000" in replayed.stdout.str()


# --- keys ---


def test_a_judge_without_its_key_stops_the_session_before_any_item(pytester, server, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-judge-model", "gpt4")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*OPENAI_API_KEY is not set and model 'gpt4' has no cassettes*"])
    assert server.requests == []


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_refused_key_stops_the_session_once(pytester, server, concurrency: int) -> None:
    from fakeprovider import status

    server.script(*[status(401)] * 20)
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    result = run(pytester, server, cases, "--model", "fake", "--eval-concurrency", str(concurrency))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # no request after the refusal: only those already out (responses run ahead, prefetch.py)
    assert 1 <= len(server.requests) <= concurrency, "no request after the refusal"
    result.stdout.fnmatch_lines(["*model key refused: *refused the key in FAKE_PROVIDER_KEY*HTTP 401*"])


def test_baselines_have_no_dialectic_answers_and_skip_with_a_reason(pytester) -> None:
    pytester.makepyfile(test_dialectic=EVAL_MODULE)
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = pytester.runpytest_subprocess("--model", "oracle", "--eval-dialectic-cases", str(cases), "-rs")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*dialectic items need a language model; 'oracle' is a TRUE/FALSE baseline*", "*10 skipped*"]
    )
    assert not list((pytester.path / "results").glob("oracle_dialectic*"))


@pytest.mark.slow
def test_max_items_and_shards_select_dialectic_cases(pytester, server) -> None:
    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED, "d": "Canberra."})
    # d: shard 1 of 2
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"), ("d", "bypass"))
    result = run(
        pytester,
        server,
        cases,
        "--model",
        "fake",
        "--eval-variant",
        "dialectic",
        "--eval-n-judges",
        "1",
        "--eval-max-items",
        "2",
    )
    assert result.ret == 0, result.stdout.str()
    # a sample stratified by expected mode: one of each
    asked = {r["query_id"] for r in outputs(pytester)["per_response"]}
    assert len(asked) == 2 and "d" in asked
    results = pytester.path / "results"
    assert [p.name for p in results.iterdir()] == [f"fake_dialectic_cases-{cases_sha256(cases)[:8]}-subset"]
    shards = []
    for index in range(2):
        result = run(
            pytester,
            server,
            cases,
            "--model",
            "fake",
            "--eval-variant",
            "dialectic",
            "--eval-n-judges",
            "1",
            "--eval-num-shards",
            "2",
            "--eval-shard-index",
            str(index),
        )
        assert result.ret == 0, result.stdout.str()
        lines = (
            (results / f"fake_dialectic_cases-{cases_sha256(cases)[:8]}_shard{index}of2" / "per_response.jsonl")
            .read_text()
            .splitlines()
        )
        shards.append({json.loads(line)["query_id"] for line in lines})
    assert shards == [{"a", "b"}, {"d"}]


class SeededScripted(Scripted):
    """Scripted, but the model under test answers case `b` with a planted hard fail when a request
    carries seed 1 (its epoch 2): the epochs of `b` disagree, those of `a` agree."""

    def __call__(self, body: dict) -> str:
        last = body["messages"][-1]["content"]
        if body["model"] == "fake-model" and body.get("seed") == 1 and last.endswith("about b?"):
            self.calls["generation"] += 1
            return PLANTED
        return super().__call__(body)


def test_two_epochs_ask_and_judge_each_response_twice_and_the_replay_sends_nothing(pytester, server) -> None:
    server.responder = SeededScripted({"a": STRUCTURED, "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = ["--model", "fake", "--eval-judge-model", "fake-judge", "--eval-n-judges", "1"]
    args += ["--eval-variant", "dialectic", "--eval-epochs", "2", "-n", "2", "-v"]
    result = run(pytester, server, cases, *args)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*::test_judge[[]a-e01@dialectic[]]*", "*::test_judge[[]b-e02@dialectic[]]*"])
    asked = [r["body"] for r in server.requests if r["body"]["model"] == "fake-model"]
    assert sorted((b["messages"][-1]["content"], b["seed"]) for b in asked) == [
        ("What should I do about a?", 0),
        ("What should I do about a?", 1),
        ("What should I do about b?", 0),
        ("What should I do about b?", 1),
    ], "each epoch its own request, told apart by its seed"
    judged = [
        r["body"]["messages"][1]["content"]
        for r in server.requests
        if r["body"]["model"] == "fake-judge" and "## Resolution Assessment" not in r["body"]["messages"][-1]["content"]
    ]
    assert len(judged) == 4 and sum(PLANTED in prompt for prompt in judged) == 1, "each epoch's response judged"
    root = pytester.path / "cassettes"
    for alias, folder, item in [
        ("fake", "dialectic", "a__dialectic"),  # epoch 1: the cassette of a run without epochs
        ("fake", "dialectic", "a-e02__dialectic"),
        ("fake-judge", "dialectic-judge", "a__dialectic__fake__judge1"),
        ("fake-judge", "dialectic-judge", "a-e02__dialectic__fake__judge1"),
    ]:
        assert cassette_path(root, alias, folder, item).is_file(), item
    directory = next((pytester.path / "results").glob("fake_dialectic_*_e2"))  # never a run without epochs
    out = outputs(pytester)
    assert sorted((r["query_id"], r["case_id"], r["epoch"]) for r in out["per_response"]) == [
        ("a-e01", "a", 1),
        ("a-e02", "a", 2),
        ("b-e01", "b", 1),
        ("b-e02", "b", 2),
    ]
    block = out["variants"][0]["epochs"]
    assert {k: block[k] for k in ("k", "cases", "pass_share", "agreement")} == {
        "k": 2,
        "cases": 2,
        "pass_share": 0.75,  # a: 2 of 2 epochs pass, b: 1 of 2
        "agreement": 0.5,
    }
    assert block["pass_share_ci95"] == pytest.approx([0.75 - 1.959964 * 0.25, 1.0])
    result.stdout.fnmatch_lines(
        ["*variant dialectic (fake): epochs 2 per case, 2 cases: judge pass share 75.0% [[]26.0%, 100.0%[]]*"]
    )
    recorded = (directory / "variant_summary.json").read_text()

    server.clear()
    replay = run(pytester, server, cases, *args, record_mode="none")
    assert replay.ret == 0, replay.stdout.str()
    assert server.requests == []
    assert (directory / "variant_summary.json").read_text() == recorded


def test_a_run_with_epochs_is_compared_by_case_with_a_run_asked_once_and_shown_in_its_page_and_the_runs_table(
    pytester, server, capsys
) -> None:
    from pytest_reasoning_evals.__main__ import main

    server.responder = SeededScripted({"a": STRUCTURED, "b": STRUCTURED})
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    args = [
        "--model",
        "fake",
        "--eval-judge-model",
        "fake-judge",
        "--eval-n-judges",
        "1",
        "--eval-variant",
        "dialectic",
    ]
    assert run(pytester, server, cases, *args).ret == 0
    baseline = next(p for p in (pytester.path / "results").glob("fake_dialectic_*") if not p.name.endswith("_e2"))
    gate = ["--eval-dialectic-baseline", str(baseline), "--eval-fail-on-regression"]
    result = run(pytester, server, cases, *args, *gate, "--eval-epochs", "2")
    assert result.ret == 0, result.stdout.str()  # b's hard fails 0 -> 1 of 2 epochs: two cases decide nothing
    assert [line for line in result.outlines if "WARNING --eval-epochs" in line] == [
        "WARNING --eval-epochs 2 at temperature 0: a model that honours it gives every epoch the same answer "
        "(the epochs are copies); give --eval-temperature (0.7, say) for epochs that measure its noise"
    ]
    result.stdout.fnmatch_lines(
        [
            "*variant dialectic: 2 paired cases (cases, epochs 1 vs 2), mean score *"
            "hard-fail share per case 0.0% -> 25.0% (sign-flip p = 1)*",
            "*gate dialectic-no-regression: passed*",
        ]
    )
    directory = next((pytester.path / "results").glob("fake_dialectic_*_e2"))
    comparison = json.loads((directory / "comparison.json").read_text())
    assert comparison["epochs"] == {"baseline": 1, "current": 2} and comparison["variants"][0]["new_hard_fails"] == [
        "b"
    ]
    assert json.loads((directory / "run_meta.json").read_text())["epochs"] == 2
    page = (directory / "report.html").read_text(encoding="utf-8")
    assert '<section id="epochs">' in page and "hard-fail share per case" in page and "sign-flip p" in page

    assert main(["runs", str(pytester.path / "results")]) == 0
    (table,) = [
        t for t in json.loads((pytester.path / "results" / "runs.json").read_text())["tables"] if t["id"] == "dialectic"
    ]
    rows = {row["epochs"]: row for row in table["rows"]}
    assert rows[1]["pass_share"] is None and rows[1]["epochs_agree"] is None
    assert (rows[2]["pass_share"], rows[2]["epochs_agree"]) == (0.75, 0.5) and "epochs 2" in rows[2]["label"]
