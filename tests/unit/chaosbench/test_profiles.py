"""--eval-profile=upstream: the bodies it sends are the bytes upstream ChaosBench-Logic's
`chaosbench eval` sends, its cut and parser read replies as upstream's do; the harness profile's
bodies are unchanged."""

from __future__ import annotations

import json

import pytest
from helpers import DEFAULT_PROMPTS

from pytest_reasoning_evals.chaosbench.profiles import UpstreamPrompt
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.upstream_parse import upstream_label
from pytest_reasoning_evals.providers.wire import openai_call
from pytest_reasoning_evals.registry import ModelSpec

GPT = ModelSpec(alias="gpt-4o-mini", provider="openai", model_id="gpt-4o-mini", base_url="https://api.openai.com/v1")
O3 = ModelSpec(
    alias="o3",
    provider="openai",
    model_id="o3",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    thinking_budget=4096,
)
# upstream-shaped items (v2 fields), non-ASCII as its system names are
ITEMS = [
    Question("atomic_0001", "Is the Rössler system chaotic?", "TRUE", "atomic", "core", "rossler", "V2"),
    Question(
        "adv_0002",
        "Given that it is bounded, is the Hindmarsh–Rose model random?",
        "FALSE",
        "adversarial",
        "core",
        "hindmarsh_rose",
        "V2",
    ),
]

# --- upstream, as its files build a body (github.com/11NOel11/ChaosBench-Logic, commit 2e2351b) ---
SYSTEM_V1 = (  # chaosbench/eval/prompts.py: _SYSTEM_INSTRUCTION_V1
    "You are an expert in dynamical systems and chaos theory. "
    "Answer the following question about a dynamical system with EXACTLY one word: "
    "TRUE or FALSE. Do not add any explanation."
)
FORCED_V1 = "Your previous answer was not clear. Reply with EXACTLY one word: TRUE or FALSE."
STRICT_SUFFIX = "\n\nReturn exactly one token: TRUE or FALSE. No explanation."  # providers/openai.py


def build_prompt(question: str) -> str:  # prompts.py: build_prompt (user template "{question}")
    return f"{SYSTEM_V1}\n\nQuestion: {question}"


def build_reprompt(original_prompt: str, original_response: str) -> str:  # prompts.py: build_reprompt
    return f"{original_prompt}\n\nYour response: {original_response[:200]}\n\n{FORCED_V1}"


def upstream_body(model: str, prompt: str, max_tokens: int = 16, temperature: float = 0.0) -> bytes:
    """providers/openai.py: OpenAIProvider.generate's payload, as json.dumps writes it."""
    payload: dict = {"model": model, "messages": [{"role": "user", "content": prompt + STRICT_SUFFIX}]}
    if model.startswith(("o1", "o3", "gpt-5")):
        payload["max_completion_tokens"] = max(max_tokens, 1024)
    else:
        payload["max_tokens"] = max_tokens
        payload["temperature"] = temperature
    return json.dumps(payload).encode("utf-8")


def provider_text(reply: str) -> str:  # providers/openai.py: the reply as generate returns it
    return reply.strip()[:200]


# --- the harness's side ---


def sent(spec: ModelSpec, request) -> bytes:
    """The bytes the HTTP client posts (requests' json= is json.dumps with its defaults)."""
    return json.dumps(openai_call(spec, request, "key").body).encode("utf-8")


@pytest.mark.parametrize("question", ITEMS, ids=lambda q: q.id)
@pytest.mark.parametrize("spec", [GPT, O3], ids=["plain", "reasoning"])
def test_a_question_is_upstreams_body(spec: ModelSpec, question: Question) -> None:
    request = UpstreamPrompt.make(None, None).request(question)
    assert sent(spec, request) == upstream_body(spec.model_id, build_prompt(question.question))


@pytest.mark.parametrize("spec", [GPT, O3], ids=["plain", "reasoning"])
def test_a_reprompt_is_one_user_message_quoting_the_cut_reply(spec: ModelSpec) -> None:
    question = ITEMS[1]
    reply = "  I think, considering the bounded attractor, " + "that the answer hinges on the model " * 10
    prompt = UpstreamPrompt.make(None, None)
    request = prompt.reprompt(prompt.request(question), reply)
    expected = build_reprompt(build_prompt(question.question), provider_text(reply))
    assert sent(spec, request) == upstream_body(spec.model_id, expected)
    assert len(request.messages) == 1 and "Your response: I think" in request.messages[0]["content"]


def test_an_explicit_max_tokens_and_temperature_are_upstreams_flags() -> None:
    request = UpstreamPrompt.make(32, 0.5).request(ITEMS[0])
    assert sent(GPT, request) == upstream_body("gpt-4o-mini", build_prompt(ITEMS[0].question), 32, 0.5)


def test_the_harness_profile_sends_what_it_sent() -> None:
    request = PromptTemplate.load(DEFAULT_PROMPTS, "zeroshot").request(ITEMS[0])
    body = json.loads(sent(GPT, request))
    assert list(body) == ["model", "messages", "temperature", "max_tokens", "seed"]
    assert (body["max_tokens"], body["seed"]) == (64, 0)
    reprompted = PromptTemplate.reprompt(request, "maybe")
    assert [m["role"] for m in reprompted.messages] == ["user", "assistant", "user"]
    assert json.loads(sent(O3, request))["max_completion_tokens"] == 64 + 4096


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("TRUE", "TRUE"),
        ("**False.**", "FALSE"),
        ("Yes", "TRUE"),
        ("The answer is no, it is periodic", "FALSE"),  # the last line's tokens: "no" is not last, but a label
        ("FINAL_ANSWER: TRUE\nbecause it is chaotic", "TRUE"),
        ("It depends on the parameters: TRUE", None),
        ("Chaotic systems are deterministic", None),
        ("", None),
        ("   ", None),
    ],
)
def test_upstreams_parser(reply: str, label: str | None) -> None:
    assert upstream_label(reply) == label


def test_a_label_after_200_characters_is_cut_off_before_parsing() -> None:
    prompt = UpstreamPrompt.make(None, None)
    reply = "Considering the Lyapunov spectrum " * 7 + "\nTRUE"
    assert len(reply.strip()) > 200
    assert prompt.label(reply, None) is None
    assert PromptTemplate.load(DEFAULT_PROMPTS, "zeroshot").label(reply) == "TRUE"
    assert upstream_label(reply) == "TRUE"
