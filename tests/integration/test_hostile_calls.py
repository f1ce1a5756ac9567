"""Issue 25, the calls: hostile replies lose no item, what is paid is what is reported, no key in an
error message, and a killed run pays again for at most the N calls it had out.

Real HTTP against the fake provider (tests/fakeprovider.py) on 127.0.0.1 throughout.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from fakeprovider import FakeProvider, Usage, missing_fields, status
from helpers import add_eval_module, answer_by_text, cassette_path, question, tagged_run_args, the_run, write_jsonl

from pytest_reasoning_evals.providers.base import ErrorKind, Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec
from pytest_reasoning_evals.secrets import scan_line

KEY_VAR = "FAKE_PROVIDER_KEY"
KEY = "sk-proj-Abc123def456GHI789jkl012MNO345pqr"  # key-shaped, as a real one is
POLICY = RetryPolicy(max_retries=2, backoff_base=0.0, backoff_max=0.0, jitter=0.0, timeout=5.0)
PRICE_IN, PRICE_OUT = 1.0, 2.0  # $ per 1M tokens
REQUEST = Request(item_id="q1", cassette_folder="s", messages=({"role": "user", "content": "Is it chaotic?"},))
FORMATS = ("openai", "anthropic", "gemini")


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, KEY)


def model_for(provider: str, server: FakeProvider) -> HttpModel:
    base = {"openai": server.openai_base, "anthropic": server.anthropic_base, "gemini": server.gemini_base}[provider]
    spec = ModelSpec(
        alias="fake",
        provider=provider,
        model_id="m",
        api_key_env=KEY_VAR,
        base_url=base,
        price_in=PRICE_IN,
        price_out=PRICE_OUT,
    )
    return HttpModel(spec, POLICY)


def reply(provider: str, content=None, parts=None, prompt=12, completion=3) -> dict:
    """A 200 body of `provider` whose answer is `content` (OpenAI's message content) or `parts`
    (Anthropic's content blocks, Gemini's parts), with these token counts."""
    if provider == "openai":
        return {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
        }
    if provider == "anthropic":
        return {
            "content": parts,
            "stop_reason": "end_turn",
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion},
    }


def body(data: dict) -> str:
    return json.dumps(data, allow_nan=True)  # Infinity and NaN as Python's json writes (and reads) them


DEEP = "[" * 100_000 + "]" * 100_000


# --- 3. replies that half-parse ---


@pytest.mark.parametrize("provider", FORMATS)
def test_a_reply_whose_text_comes_in_parts_is_read(provider) -> None:
    with FakeProvider() as server:
        if provider == "openai":
            data = reply(provider, content=[{"type": "text", "text": "TR"}, {"type": "text", "text": "UE"}])
        elif provider == "anthropic":
            data = reply(
                provider,
                parts=[
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "TR"},
                    {"type": "text", "text": "UE"},
                ],
            )
        else:
            data = reply(provider, parts=[{"text": "hm", "thought": True}, {"text": "TR"}, {"text": "UE"}])
        server.script(status(200, body=body(data)))
        completion = model_for(provider, server).complete(REQUEST)
    assert (completion.error, completion.text, completion.input_tokens, completion.output_tokens) == (
        None,
        "TRUE",
        12,
        3,
    )


def hostile(provider: str, shape: str) -> tuple[str, bool]:
    """A hostile 200 body, and whether its token counts can be read (then its cost is known)."""
    text_is = {"number": 42, "object": {"text": "TRUE"}, "list of numbers": [1, 2]}
    if shape in text_is:
        value = text_is[shape]
        if provider == "openai":
            return body(reply(provider, content=value)), True
        part = {"type": "text", "text": value} if provider == "anthropic" else {"text": value}
        return body(reply(provider, parts=[part])), True
    fine = {
        "content": "TRUE",
        "parts": [{"type": "text", "text": "TRUE"}] if provider == "anthropic" else [{"text": "TRUE"}],
    }
    tokens = {"infinite": math.inf, "nan": math.nan, "negative": -5, "fractional": 2.5, "absurd": 10**15, "text": "12"}
    if shape in tokens:
        return body(reply(provider, **fine, completion=tokens[shape])), False
    if shape == "reason":  # a completion record's finish_reason is a string or null
        data = reply(provider, **fine)
        (
            data["choices"][0] if provider == "openai" else data["candidates"][0] if provider == "gemini" else data
        ).update(
            {"openai": {"finish_reason": 7}, "anthropic": {"stop_reason": {"a": 1}}, "gemini": {"finishReason": [1]}}[
                provider
            ]
        )
        return body(data), True
    assert shape == "deep"
    return DEEP, False


SHAPES = (
    "number",
    "object",
    "list of numbers",
    "infinite",
    "nan",
    "negative",
    "fractional",
    "absurd",
    "text",
    "reason",
    "deep",
)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("provider", FORMATS)
def test_a_hostile_reply_is_a_malformed_response_of_its_item_not_retried(provider, shape) -> None:
    text, costed = hostile(provider, shape)
    with FakeProvider() as server:
        server.script(status(200, body=text))
        completion = model_for(provider, server).complete(REQUEST)
        assert len(server.requests) == 1, "a malformed reply is not asked again"
    assert completion.error.startswith(ErrorKind.MALFORMED), completion.error
    assert completion.text == ""
    assert len(completion.error) < 400, "one short line"
    # What the call cost is counted when its tokens can be read, and is never negative or NaN.
    expected = (12 * PRICE_IN + 3 * PRICE_OUT) / 1e6 if costed else 0.0
    assert completion.cost_usd == pytest.approx(expected) and math.isfinite(completion.cost_usd)
    assert completion.input_tokens >= 0 and completion.output_tokens >= 0


def test_a_reply_without_its_answer_still_counts_the_tokens_it_was_billed() -> None:
    with FakeProvider() as server:
        server.script(missing_fields())
        completion = model_for("openai", server).complete(REQUEST)
    assert completion.error.startswith(ErrorKind.MALFORMED)
    assert (completion.input_tokens, completion.output_tokens) == (12, 3)
    assert completion.cost_usd == pytest.approx((12 * PRICE_IN + 3 * PRICE_OUT) / 1e6)


# --- the runs ---


def bank(pytester, questions: int) -> str:
    return str(
        write_jsonl(
            pytester.path / "bank.jsonl",
            [question(f"q-{i:03d}", "TRUE" if i % 3 else "FALSE") for i in range(questions)],
        )
    )


def outputs(pytester, tag: str) -> tuple[dict, dict, list[dict]]:
    run = the_run(pytester.path / f"results-{tag}", "fake")
    records = [json.loads(line) for line in (run / "completions.jsonl").read_text().splitlines()]
    return json.loads((run / "summary.json").read_text()), json.loads((run / "run_meta.json").read_text()), records


@pytest.mark.slow
def test_hostile_replies_reach_the_summary_as_errors_and_their_cost_is_counted(pytester) -> None:
    add_eval_module(pytester)
    server_usage = Usage(prompt=125_000, completion=0)  # at $1 per 1M input tokens: $0.125 a call, exact in binary
    with FakeProvider() as server:
        server.usage = server_usage
        server.script(
            status(200, body=hostile("openai", "number")[0]),  # billed 12 + 3 tokens: $0.000012
            status(200, body=hostile("openai", "infinite")[0]),
            status(200, body=DEEP),
        )
        result = pytester.runpytest_subprocess(
            *tagged_run_args(pytester, server.openai_base, "hostile", bank(pytester, 10), price_in=1.0)
        )
        assert len(server.requests) == 10
    summary, meta, records = outputs(pytester, "hostile")
    assert len(records) == summary["total_questions"] == 10, result.stdout.str()
    assert summary["num_errors"] == 3 and summary["num_unknown"] == 3
    assert sorted(r["error"].split(" (")[0] for r in records if r["error"]) == [ErrorKind.MALFORMED] * 3
    paid = 7 * 0.125 + 12 / 1e6
    assert summary["cost_usd"] == pytest.approx(paid) and meta["spent_usd"] == pytest.approx(paid)


PRICE_PER_CALL = 0.125  # 125,000 prompt tokens at $1 per 1M: sums of it are exact


def progress_spent(stdout: str) -> float:
    spent = re.findall(r"eval progress: .*\$([0-9.]+) of \$[0-9.]+ spent", stdout)
    assert spent, stdout
    return float(spent[-1])


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_what_calls_made_ahead_paid_is_reported_at_a_budget_stop_and_the_overshoot_is_bounded(
    pytester, workers: str
) -> None:
    add_eval_module(pytester)
    concurrency, budget_calls = 8, 20
    with FakeProvider() as server:
        server.usage = Usage(prompt=125_000, completion=0)
        server.responder = answer_by_text
        server.delay = 0.05
        args = tagged_run_args(pytester, server.openai_base, "budget", bank(pytester, 120), price_in=1.0)
        result = pytester.runpytest_subprocess(
            *args,
            "--eval-max-cost",
            str(budget_calls * PRICE_PER_CALL),
            "--eval-concurrency",
            str(concurrency),
            "-n",
            workers,
        )
        paid = len(server.requests) * PRICE_PER_CALL
    summary, meta, records = outputs(pytester, "budget")
    assert summary["not_asked"]["count"] > 0, result.stdout.str()
    assert summary["cost_usd"] == paid, (summary["cost_usd"], paid)
    assert meta["spent_usd"] == paid
    assert progress_spent(result.stdout.str()) == pytest.approx(paid, abs=1e-4)
    assert len(records) + summary["not_asked"]["count"] == 120
    # The README's bound: the budget's calls, plus at most the N requests each process has out.
    assert len(server.requests) <= budget_calls + concurrency * max(1, int(workers)), len(server.requests)


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_the_paid_turns_of_a_dialogue_the_budget_stopped_midway_are_reported(pytester, concurrency: str) -> None:
    add_eval_module(pytester)
    turns = [
        question(f"d{d}-t{t}", "TRUE", family="multi_hop", dialogue_id=f"d{d}", turn=t)
        for d in range(3)
        for t in (1, 2, 3)
    ]
    cases = str(write_jsonl(pytester.path / "dialogues.jsonl", turns))
    with FakeProvider() as server:
        server.usage = Usage(prompt=125_000, completion=0)
        server.responder = answer_by_text
        args = tagged_run_args(pytester, server.openai_base, "dialogues", cases, price_in=1.0)
        # $0.50: the first dialogue's 3 turns and the second's first; its second turn is not asked
        result = pytester.runpytest_subprocess(*args, "--eval-max-cost", "0.5", "--eval-concurrency", concurrency)
        paid = len(server.requests) * PRICE_PER_CALL
    summary, meta, _ = outputs(pytester, "dialogues")
    assert summary["not_asked"]["ids"] == ["d1", "d2"] and paid == 0.5, result.stdout.str()
    assert summary["cost_usd"] == meta["spent_usd"] == paid
    assert progress_spent(result.stdout.str()) == pytest.approx(paid, abs=1e-4)


# --- L9. a provider's error body that echoes the key ---


@pytest.mark.parametrize("code", [400, 404, 500])
def test_an_error_body_echoing_the_key_is_stored_without_it(code) -> None:
    other = "sk-ant-api03-" + "Zz9" * 10  # another key-shaped string in the body
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}. Also {other}, Bearer {KEY}"}})
    with FakeProvider() as server:
        server.script(*[status(code, retry_after="0", body=echo)] * 3)
        completion = model_for("openai", server).complete(REQUEST)
    assert completion.error.startswith(f"HTTP {code}: "), completion.error
    assert KEY not in completion.error and other not in completion.error
    assert scan_line(completion.error, allow=False) == [], completion.error
    assert "Incorrect API key provided" in completion.error, "the rest of the message is kept"


def test_a_malformed_reply_echoing_the_key_is_shown_without_it() -> None:
    with FakeProvider() as server:
        server.script(status(200, body=f"<html>upstream said: key {KEY} is over quota</html>"))
        completion = model_for("openai", server).complete(REQUEST)
    assert completion.error.startswith(ErrorKind.MALFORMED) and KEY not in completion.error
    assert scan_line(completion.error, allow=False) == []


@pytest.mark.slow
def test_an_echoed_key_reaches_no_result_file(pytester) -> None:
    add_eval_module(pytester)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})
    with FakeProvider() as server:
        server.script(*[status(400, body=echo)] * 3)
        pytester.runpytest_subprocess(*tagged_run_args(pytester, server.openai_base, "echo", bank(pytester, 3)))
    written = "".join(p.read_text() for p in (pytester.path / "results-echo").rglob("*") if p.is_file())
    assert "Incorrect API key provided" in written and KEY not in written


# --- L1. a killed run pays again for at most the N calls it had out ---

SLOW_SAVES = """
import os, time
import pytest_reasoning_evals.cassettes as cassettes

if os.environ.get("SLOW_SAVES"):  # a saving cassette takes long: replies wait, paid and not saved
    _write = cassettes.write_atomically

    def write_atomically(*args, **kwargs):
        time.sleep(float(os.environ["SLOW_SAVES"]))
        return _write(*args, **kwargs)

    cassettes.write_atomically = write_atomically
"""


@pytest.mark.slow
def test_a_sigkill_pays_again_for_at_most_n_calls(pytester) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(SLOW_SAVES)
    concurrency = 8
    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 3 * concurrency  # far more than can be answered before the kill
        args = tagged_run_args(pytester, server.openai_base, "killed", bank(pytester, 40))
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args, "--eval-concurrency", str(concurrency)],
            cwd=pytester.path,
            env={**os.environ, "SLOW_SAVES": "30"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline, seen, still_since = time.monotonic() + 60, -1, time.monotonic()
            while time.monotonic() < deadline and process.poll() is None:  # until nothing more is asked for 1.5 s
                if len(server.requests) != seen:
                    seen, still_since = len(server.requests), time.monotonic()
                elif seen > 0 and time.monotonic() - still_since > 1.5:
                    break
                time.sleep(0.05)
            assert seen > 0, "the run never asked"
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        saved = len(list((pytester.path / "cassettes-killed").rglob("*.yaml")))
        answered = len(server.requests)
        server.hold_after = None
        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", str(concurrency))
        assert resumed.ret == 0, resumed.stdout.str()
        asked = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
    paid_twice = len(asked) - len(set(asked))
    assert paid_twice == answered - saved
    assert paid_twice <= concurrency, f"{paid_twice} calls paid twice with --eval-concurrency {concurrency}"


# --- what calls made ahead paid when the run stops for another reason than the budget ---


def paid_and_reported(pytester, tag: str, paid: float, result) -> None:
    summary, meta, records = outputs(pytester, tag)
    assert summary["cost_usd"] == paid, (summary["cost_usd"], paid, result.stdout.str())
    assert meta["spent_usd"] == paid
    assert len(records) < 120, "the run stopped early"
    progress = [line for line in result.stdout.lines if "eval progress:" in line]
    if progress:  # shown once a live call answered (a key refused at once shows none): its last line says it all
        assert progress[-1].startswith("eval progress:") and progress[-1].endswith(f"${paid:.4f} spent"), progress


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_what_calls_made_ahead_paid_is_reported_when_maxfail_stops_the_run(pytester, workers: str) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.usage = Usage(prompt=125_000, completion=0)
        server.delay = 0.05  # the calls made ahead are out when the first wrong answer stops the run
        args = tagged_run_args(
            pytester, server.openai_base, "maxfail", bank(pytester, 120), price_in=1.0
        )  # "TRUE" to every third wrong
        result = pytester.runpytest_subprocess(*args, "-x", "--eval-concurrency", "8", "-n", workers)
        paid = len(server.requests) * PRICE_PER_CALL
    assert len(server.requests) > 1, result.stdout.str()
    paid_and_reported(pytester, "maxfail", paid, result)


@pytest.mark.slow
def test_what_calls_made_ahead_paid_is_reported_when_an_outage_stops_the_run(pytester) -> None:
    add_eval_module(pytester)
    good, down = 12, 400
    with FakeProvider() as server:
        server.usage = Usage(prompt=125_000, completion=0)
        server.delay = 0.02
        server.script(
            *[status(200, body=body(reply("openai", content="TRUE", prompt=125_000, completion=0)))] * good,
            *[status(500, retry_after="0")] * down,
        )
        args = tagged_run_args(pytester, server.openai_base, "outage", bank(pytester, 120), price_in=1.0)
        result = pytester.runpytest_subprocess(*args, "--eval-concurrency", "8")
        assert "provider outage" in result.stdout.str(), result.stdout.str()
        assert 0 < server.pending_faults < down, "the good replies were used up, then the 500s began"
        paid = good * PRICE_PER_CALL  # the requests answered 200
    paid_and_reported(pytester, "outage", paid, result)


# --- a hand-edited cassette whose body is JSON nested 100,000 deep ---


def test_a_cassette_whose_body_is_nested_too_deep_is_an_unreadable_cassette_of_its_item(tmp_path) -> None:
    import yaml

    from pytest_reasoning_evals.cassettes import CassetteClient
    from pytest_reasoning_evals.providers.base import MISS

    with FakeProvider() as server:
        recorded = CassetteClient(model_for("openai", server), tmp_path, "once").complete(REQUEST)
    assert recorded.error is None
    path = cassette_path(tmp_path, "fake", REQUEST.cassette_folder, REQUEST.item_id)
    cassette = yaml.safe_load(path.read_text())
    cassette["interactions"][0]["response"]["body"]["string"] = DEEP
    path.write_text(yaml.safe_dump(cassette))
    with FakeProvider() as server:  # never asked: a replay
        replayed = CassetteClient(model_for("openai", server), tmp_path, "none").complete(REQUEST)
        assert server.requests == []
    assert replayed.error.startswith(f"{MISS} for item 'q1': unreadable cassette ("), replayed.error
    assert str(path) in replayed.error and "\n" not in replayed.error


# --- a harness error is not a provider error ---


def test_a_harness_error_is_counted_as_its_own_kind_not_as_a_provider_error() -> None:
    from pytest_reasoning_evals.chaosbench.gates import check_gates
    from pytest_reasoning_evals.chaosbench.metrics import errors_by_kind, summarize
    from pytest_reasoning_evals.chaosbench.questions import parse_record
    from pytest_reasoning_evals.chaosbench.rows import compact
    from pytest_reasoning_evals.chaosbench.scoring import score
    from pytest_reasoning_evals.providers.base import MISS, Completion

    def record(n: int, error: str | None) -> dict:
        asked = parse_record(question(f"q-{n}", "TRUE"), "bank.jsonl:1", "atomic")
        answer = Completion(provider=None, model="fake", text="" if error else "TRUE", error=error)
        return score(asked, answer, "sha")

    records = [
        record(0, "harness error: KeyError: 'x'"),
        record(1, f"{MISS} for item 'q-1': no cassette"),
        record(2, "HTTP 500: fake provider error 500"),
        record(3, None),
    ]
    rows = [compact(r) for r in records]
    assert errors_by_kind(rows) == {"cassette_miss": 1, "provider": 1, "harness": 1}
    summary = summarize(rows, model="fake", mode="zeroshot")
    gate = next(g for g in check_gates(summary, min_accuracy=None, strict_items=False) if g.name == "failed-calls")
    assert "1 provider errors, 1 cassette misses, 1 harness errors" in gate.detail, gate.detail


# --- a provider's multi-line error body in the terminal ---

MULTI_LINE = "<html>\n<body>\n" + "upstream connect error or disconnect/reset before headers\n" * 6 + "</body>\n</html>"


def test_a_gate_line_is_one_line_of_bounded_length() -> None:
    from pytest_reasoning_evals.gates import GateResult, gate_line

    line = gate_line(GateResult("complete", False, f"the run is incomplete: (last: HTTP 500: {MULTI_LINE}); stopped"))
    assert "\n" not in line and "\r" not in line, line
    assert line.startswith(
        "gate complete: FAILED (the run is incomplete: (last: HTTP 500: <html> <body> upstream connect"
    ), line
    assert line.endswith("…)") and len(line) < 240, line
    short = gate_line(GateResult("min-accuracy", True, "overall accuracy 0.9000, required >= 0.8"))
    assert short == "gate min-accuracy: passed (overall accuracy 0.9000, required >= 0.8)", (
        "a short detail is kept whole"
    )


@pytest.mark.slow
def test_a_multi_line_error_body_is_one_gate_line_in_the_summary_block(pytester) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.script(*[status(500, retry_after="0", body=MULTI_LINE)] * 40)
        result = pytester.runpytest_subprocess(
            *tagged_run_args(pytester, server.openai_base, "multiline", bank(pytester, 6))
        )
    out = result.stdout.str()
    assert "provider outage" in out, out
    block = out[out.index("eval summary: fake") :]
    gate = [line for line in block.splitlines() if line.startswith("gate complete:")]
    assert len(gate) == 1 and gate[0].endswith(")") and len(gate[0]) < 240, block
    # nor pytest's own line of the stop's reason
    assert not any(line.startswith(("<body>", "upstream connect")) for line in block.splitlines()), block
    gates = json.loads((the_run(pytester.path / "results-multiline", "fake") / "gates.json").read_text())
    detail = next(g for g in gates["gates"] if g["name"] == "complete")["detail"]
    assert detail.endswith("the run stopped, incomplete") and "…" not in detail, "gates.json keeps the whole detail"


@pytest.mark.slow
def test_what_calls_made_ahead_paid_is_reported_when_a_refused_key_stops_the_run(pytester) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.usage = Usage(prompt=125_000, completion=0)
        server.delay = 0.05  # the calls made ahead are out when the first request is refused
        server.script(status(401))
        args = tagged_run_args(pytester, server.openai_base, "refused", bank(pytester, 120), price_in=1.0)
        result = pytester.runpytest_subprocess(*args, "--eval-concurrency", "8")
        assert "model key refused" in result.stdout.str(), result.stdout.str()
        paid = (len(server.requests) - 1) * PRICE_PER_CALL  # all but the refused one were answered 200
    assert paid > 0, "calls were out when the key was refused"
    paid_and_reported(pytester, "refused", paid, result)
