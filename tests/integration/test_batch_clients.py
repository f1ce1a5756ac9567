"""The batch clients (plugin/batch/: OpenAI, Anthropic, Gemini) against the fake provider's batch endpoints (tests/fakebatch.py),
over real HTTP on 127.0.0.1: one batch, polls, ordinary replies, failed and expired requests,
splitting, cancel, a rerun that finds its batch in the ledger, and no key anywhere but a header."""

import json
import traceback
from dataclasses import replace

import pytest
import requests
from fakeprovider import FakeProvider, slow, status

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
from pytest_reasoning_evals.providers.http import HttpModel
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
    def make(provider, ledger=None):
        return client_for(provider, session, fake.url + BASE[provider], KEY, ledger)

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
        fake.script(status(500))  # the batch cannot even be read: that is the one problem, nothing raised
        [problem] = batches.clean_up(handle)
        assert problem.startswith(f"GET {fake.url}/v1/batches/{handle.batch_id}: HTTP 500")


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
        url = gone.url + BASE[provider]
    with pytest.raises(BatchError, match="ConnectionError") as caught:
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
