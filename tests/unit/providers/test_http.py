"""HttpModel against a real local HTTP server (tests/fakeprovider.py): replies, retries, faults.

Every test checks both what the Completion recorded and exactly how many requests reached the
server. The retry policy is tiny (backoff 0.01 s; timeout 0.3 s in the timeout tests, 10 s elsewhere
so a loaded machine's slow reply is not taken for a timeout), so the file runs in seconds.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass

import pytest
import requests

from pytest_reasoning_evals.providers.base import ErrorKind, Request
from pytest_reasoning_evals.providers.http import LATENCY_HEADER, AuthError, HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec, load_registry
from tests.fakeprovider import FakeProvider, malformed, missing_fields, slow, status, truncated

MAX_RETRIES = 2
ATTEMPTS = MAX_RETRIES + 1
TIMEOUT = 0.3  # of the timeout tests' policy (SHORT)
SLOW = 2 * TIMEOUT  # a reply this slow always times out; the server cuts the sleep short on close
# every other test waits long enough for a loaded machine: a 500 that takes 0.3 s is still a 500
POLICY = RetryPolicy(max_retries=MAX_RETRIES, backoff_base=0.01, backoff_max=0.05, jitter=0.0, timeout=10.0)
SHORT = dataclasses.replace(POLICY, timeout=TIMEOUT)
PRICE_IN, PRICE_OUT = 1.0, 2.0  # $ per 1M tokens
KEY = "test-key-123"
REQUEST = Request(
    item_id="q1",
    cassette_folder="chaosbench",
    messages=({"role": "system", "content": "Answer TRUE or FALSE."}, {"role": "user", "content": "Is it chaotic?"}),
)


@dataclass(frozen=True)
class Format:
    provider: str
    key_env: str | None
    base: str  # FakeProvider attribute holding the base URL
    path: str  # the path the server should see (model id "m")
    auth_header: str | None  # lower-cased header that carries the key
    auth_value: str | None  # its expected value
    finish_reason: str

    def spec(self, server: FakeProvider, key_env: str | None = "default") -> ModelSpec:
        return ModelSpec(
            alias=f"fake-{self.provider}",
            provider=self.provider,
            model_id="m",
            api_key_env=self.key_env if key_env == "default" else key_env,
            base_url=getattr(server, self.base),
            price_in=PRICE_IN,
            price_out=PRICE_OUT,
        )


OPENAI = Format(
    "openai", "FAKE_OPENAI_KEY", "openai_base", "/v1/chat/completions", "authorization", f"Bearer {KEY}", "stop"
)
ANTHROPIC = Format("anthropic", "FAKE_ANTHROPIC_KEY", "anthropic_base", "/v1/messages", "x-api-key", KEY, "end_turn")
GEMINI = Format(
    "gemini", "FAKE_GEMINI_KEY", "gemini_base", "/v1beta/models/m:generateContent", "x-goog-api-key", KEY, "STOP"
)
FORMATS = [pytest.param(f, id=f.provider) for f in (OPENAI, ANTHROPIC, GEMINI)]


@pytest.fixture
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(params=FORMATS)
def fmt(request, monkeypatch) -> Format:
    f: Format = request.param
    for other in (OPENAI, ANTHROPIC, GEMINI):
        monkeypatch.setenv(other.key_env, KEY)
    return f


def model_for(fmt: Format, server: FakeProvider, policy: RetryPolicy = POLICY) -> HttpModel:
    return HttpModel(fmt.spec(server), policy=policy)


def cost(input_tokens: int, output_tokens: int) -> float:
    return input_tokens * PRICE_IN / 1e6 + output_tokens * PRICE_OUT / 1e6


def assert_success(completion, text: str = "TRUE", input_tokens: int = 12, output_tokens: int = 3) -> None:
    assert completion.error is None
    assert completion.text == text
    assert completion.input_tokens == input_tokens
    assert completion.output_tokens == output_tokens
    assert completion.cost_usd == pytest.approx(cost(input_tokens, output_tokens))
    assert completion.latency_ms > 0


def assert_failed(completion, *needles: str) -> None:
    assert completion.text == ""
    assert completion.error
    for needle in needles:
        assert needle in completion.error, completion.error
    # the kind the model sets is the one its message says (what a record keeps of it)
    assert completion.outcome.error_kind is ErrorKind.of(completion.error) is not None
    assert completion.input_tokens == completion.output_tokens == 0
    assert completion.cost_usd == 0.0


# --- 1. a normal reply ---


def test_normal_reply(fmt, server):
    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert completion.provider == fmt.provider
    assert completion.model == "m"
    assert completion.finish_reason == fmt.finish_reason
    assert completion.thinking_tokens == 0
    assert completion.cost_usd == pytest.approx(12 * 1.0 / 1e6 + 3 * 2.0 / 1e6)

    (seen,) = server.requests
    assert seen["method"] == "POST"
    assert seen["path"] == fmt.path
    assert seen["query"] == {}  # the key travels in a header, never in the URL
    assert seen["headers"][fmt.auth_header] == fmt.auth_value
    assert seen["headers"]["content-type"] == "application/json"
    body = seen["body"]
    if fmt.provider == "gemini":
        assert "model" not in body  # the model is in the path
        assert body["contents"] == [{"role": "user", "parts": [{"text": "Is it chaotic?"}]}]
        assert body["systemInstruction"] == {"parts": [{"text": "Answer TRUE or FALSE."}]}
        assert body["generationConfig"]["temperature"] == 0
        assert body["generationConfig"]["maxOutputTokens"] == 512
    else:
        assert body["model"] == "m"
        assert body["temperature"] == 0
        assert body["max_tokens"] == 512
        if fmt.provider == "anthropic":
            assert seen["headers"]["anthropic-version"] == "2023-06-01"
            assert body["system"] == "Answer TRUE or FALSE."
            assert body["messages"] == [{"role": "user", "content": "Is it chaotic?"}]
        else:
            assert body["messages"] == list(REQUEST.messages)


def test_reply_text_and_usage_come_from_the_server(fmt, server):
    server.reply_text = "FALSE, because the Lyapunov exponent is positive."
    server.usage.prompt, server.usage.completion = 1000, 250

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(
        completion, text="FALSE, because the Lyapunov exponent is positive.", input_tokens=1000, output_tokens=250
    )
    assert completion.cost_usd == pytest.approx(1000 * 1.0 / 1e6 + 250 * 2.0 / 1e6)
    assert len(server.requests) == 1


# --- 2. 429 and Retry-After ---


def test_429_then_ok_retries_once(fmt, server):
    server.script(status(429, retry_after="0"))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert completion.finish_reason == fmt.finish_reason
    assert len(server.requests) == 2
    assert server.requests[0]["body"] == server.requests[1]["body"]  # the retry resends the same call


def test_retry_after_is_honoured(fmt, server):
    # The server asks for 0.2 s, four times the policy's own backoff_max (0.05 s): the client
    # must still wait at least what the server asked for before retrying.
    server.script(status(429, retry_after="0.2"))

    started = time.monotonic()
    completion = model_for(fmt, server).complete(REQUEST)
    elapsed = time.monotonic() - started

    assert_success(completion)
    assert len(server.requests) == 2
    assert elapsed >= 0.19, f"retried after {elapsed:.3f}s although the server sent Retry-After: 0.2"


def test_retry_after_within_backoff_max_is_honoured(server, monkeypatch):
    # Control for the test above: with backoff_max above the server's Retry-After it is obeyed.
    monkeypatch.setenv(OPENAI.key_env, KEY)
    policy = RetryPolicy(
        max_retries=MAX_RETRIES, backoff_base=0.01, backoff_max=1.0, jitter=0.0, timeout=POLICY.timeout
    )
    server.script(status(503, retry_after="0.2"))

    started = time.monotonic()
    completion = model_for(OPENAI, server, policy).complete(REQUEST)
    elapsed = time.monotonic() - started

    assert_success(completion)
    assert len(server.requests) == 2
    assert elapsed >= 0.19


def test_negative_retry_after_does_not_crash(fmt, server):
    # A nonsensical Retry-After from a misbehaving proxy must not turn into an exception
    # (time.sleep(-1) raises ValueError): the client should just retry.
    server.script(status(429, retry_after="-1"))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert len(server.requests) == 2


def test_http_date_retry_after_falls_back_to_backoff(fmt, server):
    server.script(status(503, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert len(server.requests) == 2


def test_429_on_every_attempt_gives_up(fmt, server):
    server.script(*[status(429, retry_after="0")] * (ATTEMPTS + 2))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "HTTP 429", f"{ATTEMPTS} attempts")
    assert len(server.requests) == ATTEMPTS
    assert server.pending_faults == 2


# --- 3. 5xx ---


def test_repeated_500_gives_up_after_max_retries(fmt, server):
    server.script(*[status(500)] * (ATTEMPTS + 1))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "HTTP 500", f"after {ATTEMPTS} attempts")
    assert completion.finish_reason is None
    assert len(server.requests) == ATTEMPTS
    assert server.pending_faults == 1  # the extra scripted 500 was never asked for


def test_mixed_5xx_then_ok(fmt, server):
    server.script(status(500), status(503))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert len(server.requests) == 3


def test_400_is_not_retried(fmt, server):
    server.script(status(400, body='{"error": "bad request"}'))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "HTTP 400", "bad request", "after 1 attempt")
    assert "attempts" not in completion.error
    assert len(server.requests) == 1


def test_x_should_retry_false_stops_the_retry_of_a_500_and_true_retries_a_400_not_a_refused_key(fmt, server):
    """OpenAI's and Anthropic's servers say in x-should-retry what their SDKs do with an answer;
    a refused key stops the session whatever it says."""
    server.script(status(500, headers={"x-should-retry": "false"}), status(500))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "HTTP 500", "after 1 attempt")
    assert len(server.requests) == 1 and server.pending_faults == 1
    server.clear()
    server.script(status(400, body='{"error": "try again"}', headers={"x-should-retry": "true"}))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert len(server.requests) == 2
    server.clear()
    server.script(status(401, headers={"x-should-retry": "true"}))

    with pytest.raises(AuthError):
        model_for(fmt, server).complete(REQUEST)

    assert len(server.requests) == 1


# --- 4. timeouts ---


def test_timeout_on_every_attempt_is_an_item_error(fmt, server):
    server.script(*[slow(SLOW)] * ATTEMPTS)

    completion = model_for(fmt, server, SHORT).complete(REQUEST)

    assert_failed(completion, "timeout", f"{ATTEMPTS} attempts")
    assert len(server.requests) == ATTEMPTS


def test_one_slow_reply_then_ok(fmt, server):
    server.script(slow(SLOW))

    completion = model_for(fmt, server, SHORT).complete(REQUEST)

    assert_success(completion)
    assert completion.latency_ms < SLOW * 1000  # the latency of the answered attempt, not of the lost one
    assert len(server.requests) == 2


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_one_attempt_naming_the_url_nothing_listens_at(fmt):
    url = f"http://user:pw@127.0.0.1:{closed_port()}/v1"
    spec = ModelSpec(alias="dead", provider=fmt.provider, model_id="m", api_key_env=fmt.key_env, base_url=url)

    completion = HttpModel(spec, policy=POLICY).complete(REQUEST)

    assert_failed(completion, "nothing is listening at http://***@127.0.0.1:", "for model 'dead'")
    assert "attempt" not in completion.error, "one attempt: a retried call says after how many"
    assert "pw" not in completion.error
    assert "serve-local" not in completion.error, "only the local model's server is started by serve-local"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_local_model_refused_says_the_command_that_starts_its_server(host):
    port = closed_port()
    spec = dataclasses.replace(load_registry()["smollm2-135m"], base_url=f"http://{host}:{port}/v1")

    completion = HttpModel(spec, policy=POLICY).complete(REQUEST)

    assert_failed(completion, "nothing is listening at", f"start it with: reasoning-evals serve-local --port {port}")
    assert "\n" not in completion.error


def test_a_connection_reset_is_still_retried(fmt):
    """A server that accepts and resets the connection (a restart, an overloaded proxy) is
    retried as a 5xx is; only a refused connection (nothing listening) is not."""
    accepted = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)

        def reset_each() -> None:
            for _ in range(ATTEMPTS):
                conn, _ = listener.accept()
                accepted.append(conn)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # linger 0: the close sends RST

        thread = threading.Thread(target=reset_each, daemon=True)
        thread.start()
        spec = ModelSpec(
            alias="resets",
            provider=fmt.provider,
            model_id="m",
            api_key_env=fmt.key_env,
            base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
        )
        completion = HttpModel(spec, policy=POLICY).complete(REQUEST)
        thread.join(timeout=5)

    assert_failed(completion, "connection failed", f"{ATTEMPTS} attempts")
    assert len(accepted) == ATTEMPTS


# --- 5. 401 / 403 ---


@pytest.mark.parametrize("code", [401, 403])
def test_auth_refused_raises_at_once(fmt, server, code):
    server.script(status(code))
    model = model_for(fmt, server)

    with pytest.raises(AuthError) as info:
        model.complete(REQUEST)

    message = str(info.value)
    assert fmt.key_env in message
    assert f"HTTP {code}" in message
    assert KEY not in message  # never echo the key itself
    assert len(server.requests) == 1


# --- 6. missing key ---


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_missing_key_raises_before_any_request(fmt, server, monkeypatch, value):
    if value is None:
        monkeypatch.delenv(fmt.key_env)
    else:
        monkeypatch.setenv(fmt.key_env, value)
    model = model_for(fmt, server)

    with pytest.raises(AuthError, match=fmt.key_env):
        model.complete(REQUEST)

    assert server.requests == []


# --- 7. malformed provider JSON ---


@pytest.mark.parametrize("fault", [malformed, truncated])
def test_malformed_reply_is_an_item_error_not_retried(fmt, server, fault):
    server.script(fault())

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "malformed provider response")
    assert completion.finish_reason is None
    assert len(server.requests) == 1


def test_a_reply_without_its_answer_is_an_item_error_not_retried_that_counts_its_billed_tokens(fmt, server):
    server.script(missing_fields())

    completion = model_for(fmt, server).complete(REQUEST)

    assert completion.text == "" and "malformed provider response" in completion.error
    assert (completion.input_tokens, completion.output_tokens) == (12, 3)  # the provider billed them
    assert completion.cost_usd == pytest.approx(cost(12, 3))
    assert completion.finish_reason is None
    assert len(server.requests) == 1


def test_non_object_json_is_an_item_error(fmt, server):
    server.script(status(200, body="[1, 2, 3]"))

    completion = model_for(fmt, server).complete(REQUEST)

    assert_failed(completion, "malformed provider response")
    assert len(server.requests) == 1


# --- 8. Gemini thinking tokens ---


def test_gemini_thoughts_are_output_tokens_once(server, monkeypatch):
    monkeypatch.setenv(GEMINI.key_env, KEY)
    server.usage.prompt, server.usage.completion, server.usage.thoughts = 100, 7, 40

    completion = model_for(GEMINI, server).complete(REQUEST)

    assert_success(completion, input_tokens=100, output_tokens=47)
    assert completion.thinking_tokens == 40
    assert completion.cost_usd == pytest.approx(100 * 1.0 / 1e6 + 47 * 2.0 / 1e6)
    assert len(server.requests) == 1


def test_gemini_without_thoughts(server, monkeypatch):
    monkeypatch.setenv(GEMINI.key_env, KEY)
    completion = model_for(GEMINI, server).complete(REQUEST)

    assert_success(completion)
    assert completion.thinking_tokens == 0


# --- 9. OpenAI-compatible servers without a key ---


def test_openai_compatible_without_key_sends_no_authorization(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ModelSpec(
        alias="local",
        provider="openai_compatible",
        model_id="smollm2",
        api_key_env=None,
        base_url=server.openai_base,
        price_in=0.0,
        price_out=0.0,
    )

    completion = HttpModel(spec, policy=POLICY).complete(REQUEST)

    assert completion.error is None
    assert completion.text == "TRUE"
    assert completion.provider == "openai_compatible"
    assert (completion.input_tokens, completion.output_tokens, completion.cost_usd) == (12, 3, 0.0)
    assert completion.latency_ms > 0
    (seen,) = server.requests
    assert seen["path"] == "/v1/chat/completions"
    assert "authorization" not in seen["headers"]
    assert seen["body"]["model"] == "smollm2"


def test_openai_compatible_auth_refusal_without_key_variable(server):
    spec = ModelSpec(alias="local", provider="openai_compatible", model_id="m", base_url=server.openai_base)
    server.script(status(401))

    with pytest.raises(AuthError, match="HTTP 401"):
        HttpModel(spec, policy=POLICY).complete(REQUEST)
    assert len(server.requests) == 1


# --- 10. the recorded-latency header ---


def test_latency_header_is_used_as_latency(fmt, server):
    server.extra_headers[LATENCY_HEADER] = "1234.5"

    completion = model_for(fmt, server).complete(REQUEST)

    assert_success(completion)
    assert completion.latency_ms == 1234.5
    assert len(server.requests) == 1


def test_latency_is_measured_without_the_header(fmt, server):
    completion = model_for(fmt, server).complete(REQUEST)

    assert 0 < completion.latency_ms < POLICY.timeout * 1000


# --- the fake itself ---


def test_fake_provider_unknown_path_is_404_and_keeps_the_script(server):
    server.script(status(500))
    response = requests.post(server.url + "/v2/nowhere", json={"x": 1}, timeout=2)

    assert response.status_code == 404
    assert server.requests[0]["path"] == "/v2/nowhere"
    assert server.requests[0]["body"] == {"x": 1}
    assert server.pending_faults == 1


def test_fake_provider_shuts_down_cleanly(capfd, monkeypatch):
    monkeypatch.setenv(OPENAI.key_env, KEY)
    threads_before = set(threading.enumerate())
    with FakeProvider() as fake:
        port = fake.port
        fake.script(slow(SLOW))  # a handler left sleeping for a client that gave up
        completion = model_for(OPENAI, fake, SHORT).complete(REQUEST)
        assert completion.error is None
        assert len(fake.requests) == 2

    assert set(threading.enumerate()) <= threads_before  # serving and handler threads all joined
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        pass  # the listening socket is closed
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "Broken pipe" not in err
    assert "HTTP/1" not in err  # the request log is silent


# --- a judge panel's repeats and provider-side reasoning ---


def _sent_body(server: FakeProvider) -> dict:
    return server.requests[-1]["body"]


def test_a_seed_makes_each_repeat_a_different_request_in_every_format(fmt, server):
    """A judge model sitting three times sends three requests that differ: OpenAI and Gemini by
    their seed field; Anthropic, which has no seed, by the repeat's tag in metadata."""
    bodies = []
    for seed in (1, 2, 3):
        completion = model_for(fmt, server).complete(dataclasses.replace(REQUEST, temperature=0.7, seed=seed))
        assert completion.error is None
        bodies.append(_sent_body(server))
    assert len({json.dumps(b, sort_keys=True) for b in bodies}) == 3
    seeds = {
        "openai": lambda b: b["seed"],
        "anthropic": lambda b: b["metadata"]["user_id"],
        "gemini": lambda b: b["generationConfig"]["seed"],
    }[fmt.provider]
    assert [seeds(b) for b in bodies] == ([1, 2, 3] if fmt.provider != "anthropic" else ["seed-1", "seed-2", "seed-3"])
    temperature = bodies[0]["generationConfig"]["temperature"] if fmt.provider == "gemini" else bodies[0]["temperature"]
    assert temperature == 0.7


def test_no_seed_keeps_the_provider_default_body(fmt, server):
    """Requests without a seed (answers, a lone judge) are as before: recorded cassettes still match."""
    model_for(fmt, server).complete(REQUEST)
    body = _sent_body(server)
    unchanged = {
        "openai": lambda: body["seed"] == 0,
        "anthropic": lambda: "metadata" not in body,
        "gemini": lambda: "seed" not in body["generationConfig"],
    }[fmt.provider]
    assert unchanged()


def test_reasoning_returned_apart_from_the_text_is_kept_apart(fmt, server):
    """OpenAI-compatible reasoning_content, Anthropic thinking blocks and Gemini thought parts are
    the completion's reasoning, never part of its text."""
    server.reply_text = "FALSE"
    server.reasoning = "The system has a positive exponent, so..."
    completion = model_for(fmt, server).complete(REQUEST)
    assert (completion.text, completion.reasoning) == ("FALSE", "The system has a positive exponent, so...")
    server.reasoning = ""
    assert model_for(fmt, server).complete(REQUEST).reasoning == ""
