"""Reasoning models (`reasoning: true` in the registry) against the local fake server: the body
each wire format sends, and their thinking tokens counted as output in tokens and cost."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import HttpModel
from pytest_reasoning_evals.providers.wire import output_cap, sent_temperature
from tests.fakeprovider import FakeProvider
from tests.unit.providers.test_http import ANTHROPIC, GEMINI, KEY, OPENAI, POLICY, PRICE_IN, PRICE_OUT, REQUEST

ASKED = dataclasses.replace(REQUEST, max_tokens=64, temperature=0.3)


@pytest.fixture
def server(monkeypatch):
    for fmt in (OPENAI, ANTHROPIC, GEMINI):
        monkeypatch.setenv(fmt.key_env, KEY)
    with FakeProvider() as fake:
        yield fake


def sent(fmt, server, request: Request = ASKED, **fields) -> dict:
    """The body the server received for one call of the `fmt` model with these registry fields."""
    spec = dataclasses.replace(fmt.spec(server), **fields)
    completion = HttpModel(spec, policy=POLICY).complete(request)
    assert completion.error is None, completion.error
    (seen,) = server.requests
    return seen["body"]


def test_an_openai_reasoning_model_gets_max_completion_tokens_and_no_temperature(server):
    body = sent(OPENAI, server, reasoning=True, thinking_budget=1000)
    assert "temperature" not in body and "max_tokens" not in body
    # the hidden reasoning counts against max_completion_tokens: the answer keeps its own 64
    assert body["max_completion_tokens"] == 64 + 1000
    assert body["seed"] == 0 and body["messages"] == list(REQUEST.messages)


def test_an_openai_reasoning_model_without_a_budget_gets_the_answers_max_tokens(server):
    body = sent(OPENAI, server, reasoning=True)
    assert body["max_completion_tokens"] == 64 and "temperature" not in body


def test_an_openai_compatible_reasoning_model_keeps_temperature_and_max_tokens(server):
    # vLLM, llama.cpp and Ollama take both from a reasoning model too
    compatible = dataclasses.replace(OPENAI, provider="openai_compatible")
    body = sent(compatible, server, reasoning=True)
    assert (body["temperature"], body["max_tokens"]) == (0.3, 64) and "max_completion_tokens" not in body


def test_an_anthropic_reasoning_model_thinks_within_its_budget_at_the_apis_temperature(server):
    body = sent(ANTHROPIC, server, reasoning=True, thinking_budget=2048)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # max_tokens must exceed budget_tokens: the budget plus the answer's own tokens
    assert body["max_tokens"] == 2048 + 64
    # thinking is incompatible with a changed temperature: none is sent, the API's default (1) applies
    assert "temperature" not in body


def test_a_gemini_reasoning_model_gets_its_thinking_budget_and_room_for_it(server):
    body = sent(GEMINI, server, reasoning=True, thinking_budget=1024)
    config = body["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 1024}
    assert config["maxOutputTokens"] == 1024 + 64  # Gemini's thoughts count against maxOutputTokens
    assert config["temperature"] == 0.3


def test_a_gemini_reasoning_model_without_a_budget_thinks_as_the_model_decides(server):
    config = sent(GEMINI, server, reasoning=True)["generationConfig"]
    assert "thinkingConfig" not in config and config["maxOutputTokens"] == 64


@pytest.mark.parametrize("fmt", [OPENAI, ANTHROPIC, GEMINI], ids=lambda f: f.provider)
def test_a_model_that_is_not_a_reasoning_model_sends_what_it_always_sent(fmt, server):
    body = sent(fmt, server)
    assert "thinking" not in body and "max_completion_tokens" not in body
    config = body.get("generationConfig", body)
    assert config.get("temperature") == 0.3
    assert config.get("max_tokens", config.get("maxOutputTokens")) == 64


@pytest.mark.parametrize(
    ("fmt", "fields", "temperature", "cap"),
    [
        (OPENAI, {}, 0.3, 64),
        (OPENAI, {"reasoning": True, "thinking_budget": 100}, None, 164),
        (ANTHROPIC, {"reasoning": True, "thinking_budget": 2048}, None, 2112),
        (GEMINI, {"reasoning": True, "thinking_budget": 1024}, 0.3, 1088),
    ],
    ids=["plain", "openai", "anthropic", "gemini"],
)
def test_what_the_manifest_and_the_estimate_read_is_what_the_wire_sends(server, fmt, fields, temperature, cap):
    spec = dataclasses.replace(fmt.spec(server), **fields)
    assert (sent_temperature(spec, 0.3), output_cap(spec, 64)) == (temperature, cap)


# --- thinking tokens are output tokens: counted once in tokens and cost ---


@pytest.mark.parametrize(
    ("fmt", "thinking"),
    [(OPENAI, 256), (ANTHROPIC, 0), (GEMINI, 256)],
    ids=["openai: completion_tokens includes reasoning_tokens", "anthropic: output_tokens includes thinking", "gemini"],
)
def test_reasoning_tokens_are_counted_once_in_tokens_and_cost(fmt, server, thinking):
    # OpenAI's completion_tokens and Anthropic's output_tokens already include the reasoning;
    # Gemini's candidatesTokenCount leaves its thoughtsTokenCount out
    server.usage.prompt, server.usage.completion, server.usage.thoughts = 100, 300, thinking
    spec = dataclasses.replace(fmt.spec(server), reasoning=True, thinking_budget=2048)
    completion = HttpModel(spec, policy=POLICY).complete(ASKED)
    billed = 300 + (thinking if fmt is GEMINI else 0)
    assert (completion.input_tokens, completion.output_tokens, completion.thinking_tokens) == (100, billed, thinking)
    assert completion.cost_usd == pytest.approx((100 * PRICE_IN + billed * PRICE_OUT) / 1e6)
