"""Prices that match the bill (issue 43 items 3 and 4): input tokens read from or written to the
provider's prompt cache priced at their own prices, over real HTTP against the fake provider
(tests/fakeprovider.py, which sends each format's cached-token usage fields when asked)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from helpers import DIALECTIC_MODULE, EVAL_MODULE, FAKE_KEY_VAR, model_entry, models_yaml, question, write_jsonl

from pytest_reasoning_evals.providers.base import ErrorKind, Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

POLICY = RetryPolicy(max_retries=0, timeout=5.0)
REQUEST = Request(
    item_id="q1",
    cassette_folder="chaosbench",
    messages=({"role": "system", "content": "Answer TRUE or FALSE."}, {"role": "user", "content": "Is it chaotic?"}),
)
PRICE_IN, PRICE_OUT, PRICE_CACHED = 2.0, 8.0, 0.5  # $ per 1M tokens


def spec(server, provider: str, **prices) -> ModelSpec:
    base = server.openai_base if provider == "openai" else server.anthropic_base
    return ModelSpec(
        alias="fake",
        provider=provider,
        model_id="m",
        api_key_env=FAKE_KEY_VAR,
        base_url=base,
        price_in=PRICE_IN,
        price_out=PRICE_OUT,
        **prices,
    )


def test_openai_cached_tokens_are_priced_at_the_cached_price(server) -> None:
    server.usage.prompt, server.usage.completion, server.usage.cached = 1000, 10, 800
    completion = HttpModel(spec(server, "openai", price_cached_in=PRICE_CACHED), POLICY).complete(REQUEST)
    assert completion.error is None
    assert (completion.input_tokens, completion.cached_tokens, completion.cache_write_tokens) == (1000, 800, 0)
    assert completion.cost_usd == pytest.approx((200 * PRICE_IN + 800 * PRICE_CACHED + 10 * PRICE_OUT) / 1e6)
    assert completion.cache_saved_usd == pytest.approx(800 * (PRICE_IN - PRICE_CACHED) / 1e6)


def test_a_model_without_a_cached_price_prices_cached_tokens_at_price_in(server) -> None:
    server.usage.prompt, server.usage.completion, server.usage.cached = 1000, 10, 800
    completion = HttpModel(spec(server, "openai"), POLICY).complete(REQUEST)
    assert completion.cached_tokens == 800
    assert completion.cost_usd == (1000 * PRICE_IN + 10 * PRICE_OUT) / 1e6  # the very float of a call without caching
    assert completion.cache_saved_usd == 0.0


def test_anthropic_cache_reads_and_writes_are_priced_apart_from_the_rest(server) -> None:
    server.usage.prompt, server.usage.completion = 100, 10  # input_tokens: neither read nor written
    server.usage.cached, server.usage.cache_write = 800, 200
    completion = HttpModel(spec(server, "anthropic", price_cached_in=0.2), POLICY).complete(REQUEST)
    assert completion.error is None
    assert (completion.input_tokens, completion.cached_tokens, completion.cache_write_tokens) == (1100, 800, 200)
    write = 1.25 * PRICE_IN  # no price_cache_write_in: Anthropic bills a write at 1.25x the input price
    assert completion.cost_usd == pytest.approx((100 * PRICE_IN + 800 * 0.2 + 200 * write + 10 * PRICE_OUT) / 1e6)
    assert completion.cache_saved_usd == pytest.approx((800 * (PRICE_IN - 0.2) + 200 * (PRICE_IN - write)) / 1e6)
    given = HttpModel(spec(server, "anthropic", price_cached_in=0.2, price_cache_write_in=3.0), POLICY)
    assert given.complete(REQUEST).cost_usd == pytest.approx((100 * PRICE_IN + 160 + 600 + 10 * PRICE_OUT) / 1e6)


def test_more_cached_tokens_than_prompt_tokens_is_a_malformed_reply(server) -> None:
    server.usage.prompt, server.usage.cached = 10, 11
    completion = HttpModel(spec(server, "openai", price_cached_in=PRICE_CACHED), POLICY).complete(REQUEST)
    assert completion.outcome.error_kind is ErrorKind.MALFORMED
    assert completion.error.startswith("malformed provider response (ValueError)")
    assert completion.cost_usd == 0.0  # its usage cannot be read either: no negative price of the rest


# --- a ChaosBench run: records, summary.json ---

QUESTIONS = 4


@pytest.fixture
def project(pytester: pytest.Pytester, fake_key) -> pytest.Pytester:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makeini("[pytest]\neval_min_coverage = 0\n")
    # every answer TRUE, the fake's reply: a run passes (exit 0)
    write_jsonl(pytester.path / "bank.jsonl", [question(f"q-{i}", "TRUE") for i in range(QUESTIONS)])
    return pytester


def run_args(project: pytest.Pytester, server, provider: str, tag: str, *more: str) -> list[str]:
    base = server.openai_base if provider == "openai" else server.anthropic_base
    entry = model_entry(base, provider=provider, price_in=PRICE_IN, price_out=PRICE_OUT, price_cached_in=PRICE_CACHED)
    (project.path / f"models-{tag}.yaml").write_text(models_yaml(entry))
    return [
        "--eval-models-file", f"models-{tag}.yaml", "--model", "fake", "--eval-cases", "bank.jsonl",
        "--eval-cassette-dir", f"cassettes-{tag}", "--eval-out-dir", f"results-{tag}", *more,
    ]  # fmt: skip


def outputs(project: pytest.Pytester, tag: str) -> tuple[dict, list[dict]]:
    (run,) = (project.path / f"results-{tag}").glob("fake_zeroshot*")
    records = [json.loads(line) for line in (run / "completions.jsonl").read_text().splitlines()]
    return json.loads((run / "summary.json").read_text()), records


def test_a_run_records_cached_tokens_and_its_summary_what_the_cache_saved(project, server) -> None:
    server.usage.prompt, server.usage.completion, server.usage.cached = 1000, 3, 600
    recorded = project.runpytest(*run_args(project, server, "openai", "cached", "--eval-record-mode", "once"))
    assert recorded.ret == 0, recorded.stdout.str()
    summary, records = outputs(project, "cached")
    saved = QUESTIONS * 600 * (PRICE_IN - PRICE_CACHED) / 1e6
    assert summary["cost_saved_usd"] == {"cache": pytest.approx(saved)}
    assert summary["cost_usd"] == pytest.approx(QUESTIONS * (400 * PRICE_IN + 600 * PRICE_CACHED + 3 * PRICE_OUT) / 1e6)
    assert {r["cached_tokens"] for r in records} == {600} and all("cache_write_tokens" not in r for r in records)

    priced = [(r["id"], r["cost_usd"], r["cached_tokens"], r["cache_saved_usd"]) for r in records]
    for replay in (1, 2):  # the first replay reads the cassette files, the second the cassette index
        replayed = project.runpytest(*run_args(project, server, "openai", "cached", "--eval-record-mode", "none"))
        assert replayed.ret == 0 and server.live_calls == QUESTIONS, replay
        again, records = outputs(project, "cached")
        assert again == summary, replay
        assert [(r["id"], r["cost_usd"], r["cached_tokens"], r["cache_saved_usd"]) for r in records] == priced


def test_a_run_without_cached_tokens_writes_no_cache_fields(project, server) -> None:
    recorded = project.runpytest(*run_args(project, server, "openai", "plain", "--eval-record-mode", "once"))
    assert recorded.ret == 0, recorded.stdout.str()
    summary, records = outputs(project, "plain")
    assert "cost_saved_usd" not in summary
    assert not any(key.startswith("cache") for r in records for key in r)
    assert summary["cost_usd"] == pytest.approx(QUESTIONS * (12 * PRICE_IN + 3 * PRICE_OUT) / 1e6)


def test_shipped_models_carry_their_cache_prices() -> None:
    from pytest_reasoning_evals.registry import cache_prices, load_registry

    registry = load_registry()
    assert cache_prices(registry["gpt-4.1-mini"]) == (0.10, 0.40)  # a quarter of price_in; a write: price_in
    assert cache_prices(registry["claude-sonnet-4"]) == pytest.approx((0.30, 3.75))  # 0.1x and 1.25x of 3.00
    assert cache_prices(replace(registry["gemini"], price_cached_in=None)) == (0.30, 0.30)


# --- --eval-prompt-cache ---

EPHEMERAL = {"type": "ephemeral"}


def dialectic_run(pytester: pytest.Pytester, server, tag: str, *more: str):
    """A dialectic run of `fake` (Anthropic format) over two cases, judged by `fake-judge` (OpenAI format)."""
    from tests.integration.test_dialectic_run import STRUCTURED, Scripted, cases_file

    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED})
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    entries = (
        model_entry(server.anthropic_base, provider="anthropic", price_in=PRICE_IN, price_out=PRICE_OUT),
        model_entry(server.openai_base, "fake-judge", provider="openai_compatible", model_id="fake-judge"),
    )
    (pytester.path / "models.yaml").write_text(models_yaml(*entries))
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    return pytester.runpytest_subprocess(
        "--eval-models-file", "models.yaml", "--eval-dialectic-cases", str(cases), "--model", "fake",
        "--eval-judge-model", "fake-judge", "--eval-cassette-dir", f"cassettes-{tag}", "-p", "no:randomly", *more,
    )  # fmt: skip


def messages_bodies(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["path"] == "/v1/messages"]


def test_prompt_cache_marks_the_anthropic_system_prompt_and_a_replay_needs_it(pytester, server, fake_key) -> None:
    marked = dialectic_run(pytester, server, "marked", "--eval-record-mode", "once", "--eval-prompt-cache")
    assert marked.ret == 0, marked.stdout.str()
    sent = messages_bodies(server)
    with_system = [body for body in sent if "system" in body]  # the dialectic variant's; the baseline has none
    assert len(with_system) == 2 and len(sent) > 2
    for body in with_system:
        (block,) = body["system"]  # the system prompt as one content block, marked
        assert block["type"] == "text" and block["text"].strip() and block["cache_control"] == EPHEMERAL
    assert not any("cache_control" in json.dumps(body) for body in sent if "system" not in body)
    judged = [r["body"] for r in server.requests if r["path"] == "/v1/chat/completions"]
    assert judged and "cache_control" not in json.dumps(judged)  # the OpenAI-format judge's requests: unchanged
    calls = server.live_calls

    replayed = dialectic_run(pytester, server, "marked", "--eval-record-mode", "none", "--eval-prompt-cache")
    assert replayed.ret == 0 and server.live_calls == calls, replayed.stdout.str()  # offline: nothing sent

    unmarked = dialectic_run(pytester, server, "marked", "--eval-record-mode", "none")
    assert unmarked.ret != 0 and server.live_calls == calls  # another request: no cassette answers it
    unmarked.stdout.fnmatch_lines(["*cassette miss*"])


def test_a_recording_without_prompt_cache_is_a_miss_for_a_replay_with_it(pytester, server, fake_key) -> None:
    assert dialectic_run(pytester, server, "plain", "--eval-record-mode", "once").ret == 0
    assert [type(body["system"]) for body in messages_bodies(server) if "system" in body] == [str, str]  # as before
    calls = server.live_calls
    marked = dialectic_run(pytester, server, "plain", "--eval-record-mode", "none", "--eval-prompt-cache")
    assert marked.ret != 0 and server.live_calls == calls
    marked.stdout.fnmatch_lines(["*cassette miss*"])


def test_prompt_cache_changes_no_openai_request(project, server) -> None:
    sent = {}
    for tag, more in (("plain", ()), ("marked", ("--eval-prompt-cache",))):
        server.clear()
        ran = project.runpytest(*run_args(project, server, "openai", tag, "--eval-record-mode", "once", *more))
        assert ran.ret == 0, ran.stdout.str()
        sent[tag] = sorted(json.dumps(r["body"], sort_keys=True) for r in server.requests)
    assert len(sent["marked"]) == QUESTIONS and sent["marked"] == sent["plain"]
    assert "cache_control" not in "".join(sent["marked"])


def test_a_request_without_a_system_prompt_marks_nothing(server) -> None:
    model = HttpModel(replace(spec(server, "anthropic"), prompt_cache=True), POLICY)
    asked = replace(REQUEST, messages=({"role": "user", "content": "Is it chaotic?"},))
    assert model.complete(asked).error is None
    (body,) = [r["body"] for r in server.requests]
    assert "system" not in body and "cache_control" not in json.dumps(body)


def test_a_models_file_cannot_set_prompt_cache(tmp_path) -> None:
    from pytest_reasoning_evals.registry import RegistryError, load_registry

    path = tmp_path / "models.yaml"
    path.write_text(models_yaml(model_entry("http://127.0.0.1:1/v1", provider="anthropic", prompt_cache=True)))
    with pytest.raises(RegistryError, match=r"unknown field\(s\) \['prompt_cache'\]"):
        load_registry(path)


# --- the runs table ---


def test_the_runs_table_shows_the_cost_per_point_of_accuracy(project, server, capsys) -> None:
    from pytest_reasoning_evals.__main__ import main

    server.usage.prompt, server.usage.completion = 1000, 3
    ran = project.runpytest(*run_args(project, server, "openai", "priced", "--eval-record-mode", "once"))
    assert ran.ret == 0, ran.stdout.str()
    summary = outputs(project, "priced")[0]
    assert summary["overall_accuracy"] == 1.0 and summary["cost_usd"] > 0
    folder = project.path / "results-priced"
    assert main(["runs", str(folder)]) == 0
    assert "cost per point" in capsys.readouterr().out
    (table,) = json.loads((folder / "runs.json").read_text())["tables"]
    (row,) = table["rows"]
    assert row["cost_per_point"] == pytest.approx(summary["cost_usd"] / 100)


def test_cost_per_point_is_none_without_a_point_or_a_cost() -> None:
    from pytest_reasoning_evals.chaosbench.runs import cost_per_point

    assert cost_per_point(0.5, 0.25) == pytest.approx(0.02)
    assert cost_per_point(0.5, 0.0) is None and cost_per_point(None, 0.5) is None and cost_per_point(0.5, None) is None
