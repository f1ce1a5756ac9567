"""--eval-profile=upstream over real HTTP against the fake provider: one user message with max_tokens
16, a reprompt quoting the reply cut to 200 characters under "Your response:", a run directory, a
manifest and a report of its own; the default profile's bodies as they were (issue 40 item 3)."""

from __future__ import annotations

import json

import pytest
from fakeprovider import FakeProvider
from helpers import fake_run_args, four_questions, named_run

from pytest_reasoning_evals.chaosbench.prompts import REPROMPT
from pytest_reasoning_evals.chaosbench.rows import compact
from pytest_reasoning_evals.chaosbench.upstream import upstream_metrics

# a label only past the 200th character: the harness reads it, upstream's cut does not
# (a cut ending in a lone "t" or "n" would be read as a label, as upstream reads it)
LONG = "Considering the Lyapunov spectrum " * 7 + "\nTRUE"
SUFFIX = "\n\nReturn exactly one token: TRUE or FALSE. No explanation."


def respond(body: dict) -> str:
    """A long reply to a question, FALSE to upstream's reprompt."""
    return "FALSE" if "Your response:" in body["messages"][-1]["content"] else LONG


def run(recording_evals: pytest.Pytester, *extra: str) -> tuple[list[dict], pytest.RunResult]:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = respond
        result = recording_evals.runpytest_subprocess(*fake_run_args(recording_evals, server.openai_base, bank), *extra)
        return [r["body"] for r in server.requests], result


def test_upstream_sends_one_message_of_16_tokens_and_reprompts_with_the_cut_reply(
    recording_evals: pytest.Pytester,
) -> None:
    bodies, result = run(recording_evals, "--eval-profile=upstream", "--eval-min-coverage=0")
    assert result.ret in (0, 1), result.stdout.str()
    assert len(bodies) == 8, "each question, then one reprompt"
    assert all(list(b) == ["model", "messages", "max_tokens", "temperature"] for b in bodies)
    assert all((b["max_tokens"], b["temperature"], len(b["messages"])) == (16, 0.0, 1) for b in bodies)
    assert all(b["messages"][0]["role"] == "user" and b["messages"][0]["content"].endswith(SUFFIX) for b in bodies)
    reprompts = [b["messages"][0]["content"] for b in bodies if "Your response:" in b["messages"][0]["content"]]
    assert len(reprompts) == 4
    quoted = f"\n\nYour response: {LONG.strip()[:200]}\n\n{REPROMPT}{SUFFIX}"
    assert all(content.endswith(quoted) and "TRUE\n\n" not in content for content in reprompts)
    run_dir = named_run(recording_evals.path / "results", "fake_zeroshot")
    assert "upstream-" in run_dir.name
    manifest = json.loads((run_dir / "run_manifest.json").read_text())
    assert manifest["prompt"]["profile"] == "upstream"
    records = [json.loads(line) for line in (run_dir / "completions.jsonl").read_text().splitlines()]
    assert {r["label"] for r in records} == {"FALSE"}  # the reprompt's, not the cut TRUE
    assert json.loads((run_dir / "upstream_metrics.json").read_text()) == upstream_metrics(
        [compact(r) for r in records]
    )
    assert "<dt>profile</dt><dd>upstream</dd>" in (run_dir / "report.html").read_text()


def test_the_harness_profile_sends_what_it_sent(recording_evals: pytest.Pytester) -> None:
    bodies, result = run(recording_evals)
    assert result.ret in (0, 1), result.stdout.str()
    assert len(bodies) == 4, "the harness reads the last line's TRUE: no reprompt"
    assert all(list(b) == ["model", "messages", "temperature", "max_tokens", "seed"] for b in bodies)
    assert all((b["max_tokens"], b["seed"], len(b["messages"])) == (64, 0, 1) for b in bodies)
    run_dir = named_run(recording_evals.path / "results", "fake_zeroshot")
    assert run_dir.name == "fake_zeroshot_bank-" + run_dir.name.rsplit("-", 1)[1]
    assert json.loads((run_dir / "run_manifest.json").read_text())["prompt"]["profile"] == "harness"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--eval-profile=upstream", "--eval-mode=cot"], "--eval-mode=cot"),
        (["--eval-profile=upstream", "--eval-prompts=prompts"], "--eval-prompts"),
        (["--eval-profile=upstream", "--eval-reprompt=2"], "--eval-reprompt"),
        (["--eval-profile=leaderboard"], "--eval-profile"),
    ],
)
def test_what_upstream_cannot_do_is_a_usage_error(
    recording_evals: pytest.Pytester, extra: list[str], named: str
) -> None:
    (recording_evals.path / "prompts").mkdir()
    result = recording_evals.runpytest_subprocess("--model", "fake", *extra)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert named in result.stderr.str()
