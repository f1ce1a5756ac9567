"""The batch clients (plugin/batch/: OpenAI, Anthropic, Gemini) against the fake provider's batch endpoints (tests/fakebatch.py),
over real HTTP on 127.0.0.1: one batch, polls, ordinary replies, failed and expired requests,
splitting, cancel, a rerun that finds its batch in the ledger, no key anywhere but a header, and
the retries: what is sent again after a transient failure, and what never is."""

import json
import re
import time
import traceback
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import pytest
import requests
from fakeprovider import FakeProvider, cut, dropped, slow, status

from pytest_reasoning_evals.batch import (
    CANCELED,
    CANCELING,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    LEDGER_FILE,
    AnthropicBatchClient,
    BatchError,
    BatchHandle,
    BatchLedger,
    GeminiBatchClient,
    OpenAIBatchClient,
    client_for,
    entry_for,
)
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.providers.wire import anthropic_parse, gemini_parse, openai_parse
from pytest_reasoning_evals.registry import ModelSpec

KEY = "sk-PLANTEDbatchKey0123456789abcdefXYZ"  # key-shaped, so a scanner would flag it too
SPECS = {
    "openai": ModelSpec("gpt", "openai", "gpt-4.1-mini"),
    "anthropic": ModelSpec("claude", "anthropic", "claude-sonnet-4"),
    "gemini": ModelSpec("gem", "gemini", "gemini-2.5-flash"),
}
PARSE = {"openai": openai_parse, "anthropic": anthropic_parse, "gemini": gemini_parse}
BASE = {"openai": "/v1", "anthropic": "/v1", "gemini": "/v1beta"}  # the registry's base URL, on the fake
KEY_HEADER = {"openai": "authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}
CLIENT_CLASS = {"openai": OpenAIBatchClient, "anthropic": AnthropicBatchClient, "gemini": GeminiBatchClient}
# the default's four retries, without its waits (half a second, doubling)
FAST = RetryPolicy(max_retries=4, backoff_base=0.001, backoff_max=0.01, jitter=0.0)


def asked(body):
    """The last user text of a request body, in any of the three formats."""
    if "contents" in body:
        return body["contents"][-1]["parts"][0]["text"]
    return body["messages"][-1]["content"]


@pytest.fixture
def fake():
    with FakeProvider(keep_alive=True) as server:
        server.responder = lambda body: "answer to " + asked(body)
        yield server


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def provider(request):
    return request.param


@pytest.fixture
def session(fake):
    """One connection pool for the test's clients, closed before the fake server (whose keep-alive
    handlers would otherwise wait for the next request on each open connection)."""
    with requests.Session() as shared:
        yield shared


@pytest.fixture
def client(fake, session):
    def make(provider, ledger=None, policy=FAST):
        return client_for(provider, session, fake.url + BASE[provider], KEY, ledger, policy=policy)

    return make


def questions(provider, n=20, model=None):
    spec = SPECS[provider] if model is None else ModelSpec("m", provider, model)
    asks = [Request(f"q-{i:05d}", "zero_shot", ({"role": "user", "content": f"question {i}"},)) for i in range(n)]
    return [entry_for(spec, ask) for ask in asks]


def until_ended(batches, handle, most=10):
    """The statuses of each poll until the batch ended."""
    seen = [batches.poll(handle)]
    while not seen[-1].ended and len(seen) < most:
        seen.append(batches.poll(handle))
    return seen


def test_twenty_requests_are_one_batch_polled_until_done_and_read_as_ordinary_replies(client, fake, provider):
    fake.batch.polls = 2
    batches, entries = client(provider), questions(provider)
    [handle] = batches.submit(entries)
    assert handle.provider == provider and handle.custom_ids == tuple(e.custom_id for e in entries)
    seen = until_ended(batches, handle)
    assert [(s.state, s.total, s.done, s.failed) for s in seen] == [
        (IN_PROGRESS, 20, 0, 0),
        (IN_PROGRESS, 20, 0, 0),
        (ENDED, 20, 20, 0),
    ]
    results = batches.results(handle)
    assert list(results) == [e.custom_id for e in entries]
    for i, entry in enumerate(entries):
        assert results[entry.custom_id].ok
        assert PARSE[provider](results[entry.custom_id].body).text == f"answer to question {i}"
    assert (fake.batch.created, fake.batch.uploaded, fake.live_calls) == (1, 1 if provider == "openai" else 0, 0)


def test_a_batch_line_is_the_body_the_live_call_sends(client, fake, provider):
    ask = Request("q-00001", "zero_shot", ({"role": "user", "content": "question 1"},))
    live = HttpModel(replace(SPECS[provider], base_url=fake.url + BASE[provider])).complete(ask)
    assert live.error is None and fake.live_calls == 1
    sent_live, sent_path = fake.requests[-1]["body"], fake.requests[-1]["path"]
    batches = client(provider)
    [handle] = batches.submit([entry_for(SPECS[provider], ask)])
    if provider == "openai":  # the JSONL lines inside the multipart upload
        [upload] = [r["body"] for r in fake.requests if r["path"] == "/v1/files"]
        batch_bodies = [json.loads(line)["body"] for line in upload.splitlines() if line.startswith("{")]
    elif provider == "anthropic":
        batch_bodies = [item["params"] for item in fake.requests[-1]["body"]["requests"]]
    else:  # one create call whose inline requests are the live bodies, the model in its URL as live
        create = fake.requests[-1]
        assert create["path"] == sent_path.replace(":generateContent", ":batchGenerateContent")
        batch_bodies = [item["request"] for item in create["body"]["batch"]["input_config"]["requests"]["requests"]]
    assert batch_bodies == [sent_live]
    until_ended(batches, handle)
    [result] = batches.results(handle).values()
    assert PARSE[provider](result.body).text == live.text  # the reply reads as the live one did


def test_a_failed_and_an_expired_request_are_reported_with_their_kind(client, fake, provider):
    outcome = {"question 3": "failed", "question 5": "expired"}
    fake.batch.outcome = lambda cid, body: outcome.get(asked(body))
    batches, entries = client(provider), questions(provider)
    [handle] = batches.submit(entries)
    last = until_ended(batches, handle)[-1]
    assert (last.done, last.failed) == (20, 2)
    results = batches.results(handle)
    assert (results[entries[3].custom_id].error, results[entries[5].custom_id].error) == (FAILED, EXPIRED)
    assert "fake batch failure" in results[entries[3].custom_id].message
    assert results[entries[3].custom_id].body is None and results[entries[5].custom_id].body is None
    assert sum(r.ok for r in results.values()) == 18


def test_clean_up_deletes_the_files_an_ended_batch_left_and_reports_what_it_could_not(client, fake, provider):
    fake.batch.outcome = lambda cid, body: "failed" if asked(body) == "question 3" else None
    batches, entries = client(provider), questions(provider)
    [handle] = batches.submit(entries)
    until_ended(batches, handle)
    batches.results(handle)
    kept = dict(fake.batch._files)
    assert batches.clean_up(handle) == []
    if provider == "openai":  # the uploaded requests, the output file and the error file
        assert fake.batch.deleted == [handle.input_file_id, *[f for f in kept if f != handle.input_file_id]]
        assert len(fake.batch.deleted) == 3 and not fake.batch._files
    else:  # Anthropic keeps no file of ours; an inline Gemini batch neither
        assert fake.batch.deleted == []
    if provider == "openai":  # deleted already: each 404 is reported, nothing raised
        problems = batches.clean_up(handle)
        assert len(problems) == 3 and all("HTTP 404" in p and "PLANTED" not in p for p in problems)
        fake.script(*[status(500)] * 5)  # the batch cannot even be read: that is the one problem, nothing raised
        [problem] = batches.clean_up(handle)
        assert problem.startswith(f"GET {fake.url}/v1/batches/{handle.batch_id}: HTTP 500")
        assert problem.endswith("(after 5 attempts)") and fake.pending_faults == 0


def test_a_lowered_request_limit_splits_into_two_batches(client, fake, provider, monkeypatch):
    monkeypatch.setattr(type(client(provider)), "MAX_REQUESTS", 12)
    batches, entries = client(provider), questions(provider)
    handles = batches.submit(entries)
    assert [len(h.custom_ids) for h in handles] == [12, 8] and fake.batch.created == 2
    results = {}
    for handle in handles:
        until_ended(batches, handle)
        results.update(batches.results(handle))
    assert list(results) == [e.custom_id for e in entries] and all(r.ok for r in results.values())


def test_a_lowered_byte_limit_splits_too(client, fake, provider, monkeypatch):
    batches, entries = client(provider), questions(provider)
    # ten of the longer requests fit (question 10 to 19: one byte more each), eleven never do
    half = sum(batches.size(e) for e in entries[10:]) + batches.OVERHEAD
    monkeypatch.setattr(type(batches), "MAX_BYTES", half)
    assert [len(h.custom_ids) for h in batches.submit(entries)] == [10, 10] and fake.batch.created == 2


def test_openai_sends_one_batch_per_model(client, fake):
    batches = client("openai")
    entries = questions("openai", 3, "gpt-4.1-mini") + questions("openai", 2, "gpt-4.1")
    handles = batches.submit(entries)
    assert [len(h.custom_ids) for h in handles] == [3, 2]
    for handle in handles:  # the fake fails a file naming two models, as OpenAI's validation does
        until_ended(batches, handle)
        assert all(r.ok for r in batches.results(handle).values())


def test_cancel_stops_a_batch_and_its_requests_come_back_canceled(client, fake, provider):
    fake.batch.polls = 5
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 4))
    assert batches.poll(handle).state == IN_PROGRESS
    after = batches.cancel(handle)
    # Gemini has no cancelling state and its cancel answers {}: the client polls, and the fake has ended it
    expected = {"openai": (CANCELING, "cancelling"), "anthropic": (CANCELING, "canceling")}
    assert (after.state, after.provider_state) == expected.get(provider, (ENDED, "BATCH_STATE_CANCELLED"))
    assert until_ended(batches, handle)[-1].state == ENDED
    assert {r.error for r in batches.results(handle).values()} == {CANCELED}
    assert fake.batch.cancels == 1 and fake.live_calls == 0


def test_results_of_a_batch_still_running_are_refused(client, fake, provider):
    fake.batch.polls = 3
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 2))
    with pytest.raises(BatchError, match="has not ended"):
        batches.results(handle)


def test_an_openai_batch_refused_as_a_whole_fails_every_request_with_the_reason(client, fake, monkeypatch):
    monkeypatch.setattr(OpenAIBatchClient, "chunks", lambda self, entries: [entries])  # two models in one file
    batches = client("openai")
    [handle] = batches.submit(questions("openai", 2, "gpt-4.1-mini") + questions("openai", 1, "gpt-4.1"))
    status = batches.poll(handle)
    assert (status.state, status.provider_state) == (ENDED, "failed")
    results = batches.results(handle)
    assert {(r.error, r.message) for r in results.values()} == {
        (FAILED, "every request of a batch must name the same model")
    }


def test_a_reply_that_is_no_batch_is_an_error_naming_the_call(client, fake, provider):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 1))
    fake.script(status(200, body="<html>maintenance</html>"))
    with pytest.raises(
        BatchError, match=r"GET http://127.0.0.1:\d+/v1(beta)?/.*batches/.*: the reply is not a JSON object"
    ):
        batches.poll(handle)
    fake.script(status(404, body='{"error": {"message": "no such batch"}}'))
    with pytest.raises(BatchError, match="HTTP 404: .*no such batch") as caught:
        batches.poll(handle)
    assert caught.value.status == 404


def test_a_handle_of_another_provider_is_refused_before_any_request(client, fake):
    claude = BatchHandle("anthropic", "msgbatch_1", ("a",), "2026-01-01T00:00:00+00:00")
    with pytest.raises(BatchError, match="msgbatch_1, 1 requests.* is not a batch of openai"):
        client("openai").poll(claude)
    assert fake.requests == []


def test_an_id_read_from_a_ledger_cannot_leave_the_batch_path(client, fake, provider):
    batches = client(provider)
    odd = BatchHandle(provider, "../../files/x", ("a",), "2026-01-01T00:00:00+00:00")
    with pytest.raises(BatchError, match="HTTP 404"):
        batches.poll(odd)
    assert fake.requests[-1]["path"].endswith("batches/..%2F..%2Ffiles%2Fx")


# --- the ledger: a rerun never sends a request twice ---


def test_a_submit_killed_after_the_create_leaves_a_ledger_a_rerun_polls(client, fake, provider, tmp_path, monkeypatch):
    real = BatchLedger.record

    def record_then_killed(self, handle):
        real(self, handle)
        raise KeyboardInterrupt  # the process dies right after the create returned and was recorded

    monkeypatch.setattr(BatchLedger, "record", record_then_killed)
    entries = questions(provider)
    with pytest.raises(KeyboardInterrupt):
        client(provider, BatchLedger(tmp_path)).submit(entries)
    monkeypatch.undo()
    assert fake.batch.created == 1
    again = client(provider, BatchLedger(tmp_path))
    [handle] = again.submit(entries)
    assert fake.batch.created == 1 and handle.custom_ids == tuple(e.custom_id for e in entries)
    until_ended(again, handle)
    assert len(again.results(handle)) == 20


def test_a_create_that_failed_midway_is_resumed_with_only_the_rest(client, fake, provider, tmp_path, monkeypatch):
    monkeypatch.setattr(type(client(provider)), "MAX_REQUESTS", 12)
    entries = questions(provider)
    ledger = BatchLedger(tmp_path)
    first = client(provider, ledger)
    first.submit(entries[:12])  # a batch made ...
    upload = [slow(0)] if provider == "openai" else []  # (OpenAI's file upload goes through)
    fake.script(*upload, status(500))  # ... then the next create fails
    with pytest.raises(BatchError, match="HTTP 500"):
        first.submit(entries)
    assert fake.batch.created == 1 and fake.pending_faults == 0
    handles = client(provider, BatchLedger(tmp_path)).submit(entries)
    assert [len(h.custom_ids) for h in handles] == [12, 8] and fake.batch.created == 2
    assert [len(h.custom_ids) for h in ledger.pending()] == [12, 8]


def test_forget_drops_a_batch_from_the_ledger(client, fake, provider, tmp_path):
    ledger = BatchLedger(tmp_path)
    batches = client(provider, ledger)
    [handle] = batches.submit(questions(provider, 2))
    ledger.forget(handle)
    assert ledger.pending() == []


# --- keys: only in a header ---


def test_the_key_goes_only_in_its_header(client, fake, provider, tmp_path):
    batches = client(provider, BatchLedger(tmp_path))
    [handle] = batches.submit(questions(provider, 3))
    until_ended(batches, handle)
    batches.results(handle)
    for seen in fake.requests:
        header = seen["headers"][KEY_HEADER[provider]]
        assert header == (f"Bearer {KEY}" if provider == "openai" else KEY)
        assert KEY not in json.dumps([seen["path"], seen["query"], seen["body"]])
    shown = [repr(batches), repr(handle), str(handle.to_json()), (tmp_path / LEDGER_FILE).read_text()]
    assert not [text for text in shown if "PLANTED" in text]


def test_an_error_quoting_the_key_shows_no_key(client, fake, provider):
    fake.script(status(401, body=json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})))
    with pytest.raises(BatchError) as caught:
        client(provider).submit(questions(provider, 2))
    error = caught.value
    assert error.status == 401 and "Incorrect API key provided: ***" in str(error)
    rendered = [str(error), repr(error), "".join(traceback.format_exception(error))]
    assert not [text for text in rendered if "PLANTED" in text]


def test_a_connection_error_shows_no_key(provider):
    with FakeProvider() as gone:
        origin = gone.url
    url = origin + BASE[provider]
    with pytest.raises(BatchError, match=f"nothing is listening at {origin}$") as caught:  # refused: sent once
        CLIENT_CLASS[provider](requests.Session(), url, KEY, timeout=5).submit(questions(provider, 1))
    assert "PLANTED" not in "".join(traceback.format_exception(caught.value))


def test_anthropic_sends_no_key_to_a_results_url_on_another_host():
    batches = AnthropicBatchClient(requests.Session(), "https://api.anthropic.com/v1", KEY)
    with pytest.raises(BatchError, match="not sent the key"):
        batches._results_url({"id": "msgbatch_1", "results_url": "https://elsewhere.example/results"})


def test_a_provider_without_a_batch_client_is_refused():
    with pytest.raises(
        BatchError, match=r"provider 'openai_compatible' has no batch client \(only openai, anthropic, gemini\)"
    ):
        client_for("openai_compatible", requests.Session(), "http://127.0.0.1:9/v1", KEY)


# --- retries: a request safe to send again is, after a transient failure; a create never is ---

# the request that downloads an ended batch's replies (Gemini's inline replies are in the batch itself)
RESULTS = {
    "openai": r"/v1/files/[^/]+/content",
    "anthropic": r"/v1/messages/batches/[^/]+/results",
    "gemini": r"/v1beta/batches/[^/:]+",
}
CANCEL = {
    "openai": r"/v1/batches/[^/]+/cancel",
    "anthropic": r"/v1/messages/batches/[^/]+/cancel",
    "gemini": r"/v1beta/batches/[^/:]+:cancel",
}
GEMINI_CREATE = r"/v1beta/models/[^/:]+:batchGenerateContent"


def batch_path(batches, handle):
    """The path a poll of `handle` asks, as a pattern for FakeBatches.fail."""
    return re.escape(urlsplit(batches.batch_url(handle)).path)


def sent(fake, method, path, since=0):
    """The requests of `method` to a path matching `path` the fake received (from its `since`-th request on)."""
    return [r for r in fake.requests[since:] if r["method"] == method and re.fullmatch(path, r["path"])]


def test_a_poll_answered_503_twice_is_sent_again_and_returns_the_status(client, fake, provider):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 3))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, status(503), status(503))
    seen = batches.poll(handle)
    assert (seen.state, seen.total, seen.done, seen.failed) == (ENDED, 3, 3, 0)  # polls = 0: ended at its first look
    assert len(sent(fake, "GET", path)) == 3 and fake.batch.unused_faults == 0


@pytest.mark.parametrize("fault", [dropped, cut], ids=["closed-before-the-answer", "cut-in-the-body"])
def test_a_results_download_that_loses_its_connection_once_succeeds(client, fake, provider, fault):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 3))
    until_ended(batches, handle)
    before = len(fake.requests)
    fake.batch.fail("GET", RESULTS[provider], fault())
    results = batches.results(handle)
    assert [PARSE[provider](r.body).text for r in results.values()] == [f"answer to question {i}" for i in range(3)]
    assert len(sent(fake, "GET", RESULTS[provider], before)) == 2 and fake.batch.unused_faults == 0


def test_a_poll_that_times_out_once_is_sent_again(fake, session, provider):
    batches = CLIENT_CLASS[provider](session, fake.url + BASE[provider], KEY, timeout=0.5, policy=FAST)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, slow(3))  # answered after the client stopped waiting
    assert batches.poll(handle).ended and len(sent(fake, "GET", path)) == 2


def test_a_429_waits_the_seconds_its_retry_after_asks_and_one_asking_past_the_cap_is_not_waited_for(
    client, fake, provider
):
    # our own schedule would wait a minute, past the 5 s cap: only the server's Retry-After: 0 lets it retry
    patient = RetryPolicy(max_retries=4, backoff_base=60.0, backoff_max=60.0, jitter=0.0, max_total_wait=5.0)
    batches = client(provider, policy=patient)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, status(429, retry_after="0"))
    started = time.monotonic()
    assert batches.poll(handle).ended
    assert time.monotonic() - started < 5 and len(sent(fake, "GET", path)) == 2
    fake.batch.fail("GET", path, status(429, retry_after="600"), status(429, retry_after="0"))
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    assert caught.value.status == 429 and len(sent(fake, "GET", path)) == 3  # given up at once
    assert str(caught.value).endswith(
        "(after 1 attempt; gave up: the server asked to wait 600 s more, over the 5 s cap on waiting per call)"
    )


# (provider, the requests go as a file (Gemini past its inline bytes), the request that must be sent once)
CREATES = [
    ("openai", False, r"/v1/files"),  # the upload of the requests
    ("openai", False, r"/v1/batches"),  # the create naming it
    ("anthropic", False, r"/v1/messages/batches"),
    ("gemini", False, GEMINI_CREATE),
    ("gemini", True, r"/upload/v1beta/files"),  # the upload's start
    ("gemini", True, r"/upload/v1beta/files/session-[0-9a-f]+"),  # its bytes
    ("gemini", True, GEMINI_CREATE),
]


@pytest.mark.parametrize("provider, as_file, path", CREATES, ids=[f"{p}-{path}" for p, _, path in CREATES])
def test_a_create_or_upload_answered_503_is_sent_once_where_the_same_clients_poll_is_sent_again(
    client, fake, monkeypatch, provider, as_file, path
):
    """The provider may have accepted it: a second would be a second batch, paid twice."""
    if as_file:
        monkeypatch.setattr(GeminiBatchClient, "INLINE_BYTES", 1000)  # 20 requests are more than that
    batches, entries = client(provider), questions(provider)
    fake.batch.fail("POST", path, status(503))  # a second attempt would go through
    with pytest.raises(BatchError, match=r"^POST http://127\.0\.0\.1:\d+/\S+: HTTP 503: ") as caught:
        batches.submit(entries)
    assert caught.value.status == 503 and "attempt" not in str(caught.value)  # as before retries existed
    assert len(sent(fake, "POST", path)) == 1 and fake.batch.created == 0
    [handle] = batches.submit(entries)  # the same client, its retries on, sends a poll again
    fake.batch.fail("GET", batch_path(batches, handle), status(503))
    assert batches.poll(handle).ended and fake.batch.unused_faults == 0


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_an_answer_no_retry_can_mend_is_not_sent_again_and_its_message_shows_no_key(client, fake, provider, code):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    quoting = json.dumps({"error": {"message": f"refused with key {KEY}"}})
    fake.batch.fail("GET", path, status(code, body=quoting))  # a second attempt would find the batch
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    assert caught.value.status == code and len(sent(fake, "GET", path)) == 1
    assert str(caught.value).endswith(f": HTTP {code}: {quoting.replace(KEY, '***')}")  # as before retries existed
    fake.batch.fail("GET", path, status(503), status(code, body=quoting))  # retried, then the end at once
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    error = caught.value
    assert error.status == code and len(sent(fake, "GET", path)) == 3 and fake.batch.unused_faults == 0
    assert str(error).endswith(f": HTTP {code}: {quoting.replace(KEY, '***')} (after 2 attempts)")
    rendered = [str(error), repr(error), "".join(traceback.format_exception(error))]
    assert not [text for text in rendered if "PLANTED" in text]


def test_a_409_is_sent_again_to_openai_and_anthropic_as_their_sdks_do_and_not_to_gemini(client, fake, provider):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, status(503), status(409))
    if provider == "gemini":  # Google's SDK retries 408, 429 and 5xx, not 409 (ABORTED, ALREADY_EXISTS)
        with pytest.raises(BatchError, match=r"HTTP 409: .*\(after 2 attempts\)$"):
            batches.poll(handle)
        assert len(sent(fake, "GET", path)) == 2
    else:
        assert batches.poll(handle).ended and len(sent(fake, "GET", path)) == 3


def test_when_the_retries_are_used_up_the_error_says_how_many_attempts_were_made(client, fake, provider):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    quoting = json.dumps({"error": {"message": f"overloaded; your key {KEY}"}})
    fake.batch.fail("GET", path, *[status(503, body=quoting)] * 6)
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    message = str(caught.value)
    assert len(sent(fake, "GET", path)) == 5 and fake.batch.unused_faults == 1  # 4 retries: 5 attempts in all
    assert (
        message
        == f"GET {fake.url}{urlsplit(batches.batch_url(handle)).path}: HTTP 503: "
        + quoting.replace(KEY, "***")
        + " (after 5 attempts)"
    )
    assert caught.value.status == 503


def test_a_poll_whose_connection_drops_every_time_is_tried_five_times_and_shows_no_key(client, fake, provider):
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, *[dropped()] * 5)
    with pytest.raises(
        BatchError, match=r"^GET http://127\.0\.0\.1:\d+/\S+: ConnectionError: .*\(after 5 attempts\)$"
    ) as caught:
        batches.poll(handle)
    assert caught.value.status is None and "\n" not in str(caught.value) and fake.batch.unused_faults == 0
    assert "PLANTED" not in "".join(traceback.format_exception(caught.value))


@dataclass(frozen=True)
class Counting(RetryPolicy):
    """A policy that notes each wait it is asked for: one per retry."""

    waits: list = field(default_factory=list)

    def wait(self, attempt: int, retry_after: str | None) -> float:
        self.waits.append(attempt)
        return super().wait(attempt, retry_after)


def test_a_poll_or_cancel_where_nothing_listens_fails_at_once_naming_where_and_shows_no_key(provider):
    """A refused connection is a wrong base URL, not a passing trouble: as a live call, no retry waits for it."""
    with FakeProvider() as gone:
        port = gone.port
    counting = Counting(max_retries=4, backoff_base=0.001, backoff_max=0.01, jitter=0.0)  # FAST, counted
    batches = CLIENT_CLASS[provider](
        requests.Session(),
        f"http://user:PLANTEDpass@127.0.0.1:{port}" + BASE[provider],
        KEY,
        timeout=5,
        policy=counting,
    )
    handle = BatchHandle(provider, "b1", ("a",), "2026-01-01T00:00:00+00:00")
    shown = re.escape(f"http://***@127.0.0.1:{port}")
    for ask, method in ((batches.poll, "GET"), (batches.cancel, "POST")):
        with pytest.raises(BatchError) as caught:
            ask(handle)
        assert re.fullmatch(rf"{method} {shown}/\S+: nothing is listening at {shown}", str(caught.value))
        rendered = str(caught.value) + "".join(traceback.format_exception(caught.value))
        assert caught.value.status is None and "PLANTED" not in rendered  # neither the key nor the password
    assert counting.waits == []  # no retry: nothing waited for


def test_a_cancel_answered_503_then_cut_short_is_sent_again_and_cancels_once(client, fake, provider):
    fake.batch.polls = 5
    batches = client(provider)
    [handle] = batches.submit(questions(provider, 2))
    # the second attempt's cancel is done before its answer is cut: the third cancels a cancelled batch
    fake.batch.fail("POST", CANCEL[provider], status(503), cut())
    after = batches.cancel(handle)
    assert after.state in (CANCELING, ENDED) and fake.batch.cancels == 1
    assert len(sent(fake, "POST", CANCEL[provider])) == 3 and fake.batch.unused_faults == 0
    assert until_ended(batches, handle)[-1].state == ENDED
    assert {r.error for r in batches.results(handle).values()} == {CANCELED}


def test_a_file_delete_answered_503_is_sent_again(client, fake):
    batches = client("openai")
    [handle] = batches.submit(questions("openai", 3))
    until_ended(batches, handle)
    batches.results(handle)
    fake.batch.fail("DELETE", r"/v1/files/[^/]+", status(503), dropped())
    assert batches.clean_up(handle) == []
    assert len(fake.batch.deleted) == 2 and not fake.batch._files  # the requests and the replies
    assert len(sent(fake, "DELETE", r"/v1/files/[^/]+")) == 4 and fake.batch.unused_faults == 0


def test_a_file_delete_whose_answer_was_cut_counts_as_deleted_when_its_retry_finds_the_file_gone(client, fake):
    batches = client("openai")
    [handle] = batches.submit(questions("openai", 3))
    until_ended(batches, handle)
    batches.results(handle)
    files = r"/v1/files/[^/]+"
    fake.batch.fail("DELETE", files, cut())  # the file is deleted, the answer lost: the retry gets a 404
    assert batches.clean_up(handle) == []
    assert len(fake.batch.deleted) == 2 and not fake.batch._files  # the requests and the replies
    assert len(sent(fake, "DELETE", files)) == 3 and fake.batch.unused_faults == 0
    problems = batches.clean_up(handle)  # a 404 at the first attempt is still said: no attempt of ours deleted it
    assert len(problems) == 2 and all("HTTP 404" in p and "attempt" not in p for p in problems)


# the first request of a submit: OpenAI's upload of the requests, the others' create
FIRST_POST = {"openai": r"/v1/files", "anthropic": r"/v1/messages/batches", "gemini": GEMINI_CREATE}


def test_x_should_retry_false_stops_a_polls_retry_and_true_retries_it_but_never_a_create_or_a_refused_key(
    client, fake, provider
):
    """OpenAI's and Anthropic's servers say in x-should-retry what their SDKs do with an answer."""
    retry, no_retry = {"x-should-retry": "true"}, {"x-should-retry": "false"}
    batches = client(provider)
    fake.batch.fail("POST", FIRST_POST[provider], status(400, headers=retry))  # a second send could pay twice
    with pytest.raises(BatchError) as caught:
        batches.submit(questions(provider, 1))
    assert caught.value.status == 400 and len(sent(fake, "POST", FIRST_POST[provider])) == 1
    [handle] = batches.submit(questions(provider, 1))
    path = batch_path(batches, handle)
    fake.batch.fail("GET", path, status(500, headers=no_retry))  # a second attempt would find the batch
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    assert caught.value.status == 500 and "attempt" not in str(caught.value) and len(sent(fake, "GET", path)) == 1
    fake.batch.fail("GET", path, status(400, headers=retry))
    assert batches.poll(handle).ended and len(sent(fake, "GET", path)) == 3
    fake.batch.fail("GET", path, status(401, headers=retry))  # a refused key is never asked again
    with pytest.raises(BatchError) as caught:
        batches.poll(handle)
    assert caught.value.status == 401 and len(sent(fake, "GET", path)) == 4 and fake.batch.unused_faults == 0
