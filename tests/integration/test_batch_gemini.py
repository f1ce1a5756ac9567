"""Gemini's batch mode (plugin/batch/gemini.py) against the fake's Gemini batch endpoints
(tests/fakebatch.py) over real HTTP on 127.0.0.1: what the create call carries, the byte limit of
inline requests, a batch that failed as a whole, and a ledger holding Gemini batches. What every
client does alike (polls, failed and expired requests, cancel, errors, keys) is in
test_batch_clients.py, parametrized over the three providers."""

import json

import pytest
import requests
from fakeprovider import FakeProvider, status

from pytest_reasoning_evals.batch import (
    ENDED,
    FAILED,
    BatchError,
    BatchLedger,
    GeminiBatchClient,
    client_for,
    entry_for,
)
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.wire import gemini_call, gemini_parse
from pytest_reasoning_evals.registry import ModelSpec

KEY = "AIzaPLANTEDgeminiBatchKey0123456789abcd"  # Google's key shape, so a scanner would flag it too
SPEC = ModelSpec("gem", "gemini", "gemini-2.5-flash", base_url="https://generativelanguage.googleapis.com/v1beta")
CREATE = "/v1beta/models/gemini-2.5-flash:batchGenerateContent"


@pytest.fixture
def fake():
    with FakeProvider(keep_alive=True) as server:
        server.responder = lambda body: "answer to " + body["contents"][-1]["parts"][0]["text"]
        yield server


@pytest.fixture
def session(fake):
    with requests.Session() as shared:  # closed before the fake server, as in test_batch_clients.py
        yield shared


def asks(n=20, model=None):
    spec = SPEC if model is None else ModelSpec("m", "gemini", model, base_url=SPEC.base_url)
    system = {"role": "system", "content": "Answer TRUE or FALSE."}
    return spec, [
        Request(f"q-{i:05d}", "zero_shot", (system, {"role": "user", "content": f"question {i}"})) for i in range(n)
    ]


def gemini(fake, session, ledger=None):
    return client_for("gemini", session, fake.gemini_base, KEY, ledger, model="gem")


def creates(fake):
    return [r for r in fake.requests if r["method"] == "POST" and r["path"].endswith(":batchGenerateContent")]


def test_twenty_requests_are_one_create_call_of_twenty_inline_live_bodies(fake, session):
    spec, requests_ = asks()
    batches = gemini(fake, session)
    [handle] = batches.submit([entry_for(spec, r) for r in requests_])
    [create] = creates(fake)
    assert create["path"] == CREATE and create["query"] == {}  # the key is a header, never ?key=
    batch = create["body"]["batch"]
    assert batch["display_name"] == "pytest-reasoning-evals"
    inline = batch["input_config"]["requests"]["requests"]
    assert [item["request"] for item in inline] == [gemini_call(spec, r, None).body for r in requests_]
    assert [item["metadata"] for item in inline] == [{"key": cid} for cid in handle.custom_ids]
    status_ = batches.poll(handle)
    assert (status_.state, status_.provider_state, status_.total, status_.done) == (
        ENDED,
        "BATCH_STATE_SUCCEEDED",
        20,
        20,
    )
    assert fake.requests[-1]["method"] == "GET" and fake.requests[-1]["path"] == f"/v1beta/batches/{handle.batch_id}"
    results = batches.results(handle)
    assert [gemini_parse(results[cid].body).text for cid in handle.custom_ids] == [
        f"answer to question {i}" for i in range(20)
    ]
    assert {r["headers"]["x-goog-api-key"] for r in fake.requests} == {KEY} and fake.live_calls == 0


def test_the_create_call_is_sent_as_the_bytes_sized_and_split_at_the_byte_limit(fake, session, monkeypatch):
    spec, requests_ = asks()
    entries = [entry_for(spec, r) for r in requests_]
    sizes = gemini(fake, session).size
    whole = GeminiBatchClient.OVERHEAD + sum(sizes(e) for e in entries)  # each item counted with a comma after it
    monkeypatch.setattr(GeminiBatchClient, "MAX_BYTES", whole)
    assert len(gemini(fake, session).submit(entries)) == 1
    # what was counted is what was sent, but for the last item's comma: never more than the limit
    assert int(creates(fake)[0]["headers"]["content-length"]) == whole - 1
    monkeypatch.setattr(GeminiBatchClient, "MAX_BYTES", whole - 1)
    handles = gemini(fake, session).submit(entries)
    assert [len(h.custom_ids) for h in handles] == [19, 1]
    assert all(int(c["headers"]["content-length"]) <= whole - 1 for c in creates(fake)[1:])


def test_one_create_call_per_model(fake, session):
    (flash, few), (pro, more) = asks(3), asks(2, "gemini-2.5-pro")
    handles = gemini(fake, session).submit([entry_for(flash, r) for r in few] + [entry_for(pro, r) for r in more])
    assert [len(h.custom_ids) for h in handles] == [3, 2]  # the same items for two models: ids of their own
    assert [c["path"] for c in creates(fake)] == [CREATE, "/v1beta/models/gemini-2.5-pro:batchGenerateContent"]


def test_a_batch_failed_as_a_whole_fails_every_request_with_its_reason(fake, session, monkeypatch):
    operation = {
        "name": "batches/b1",
        "metadata": {"state": "BATCH_STATE_FAILED", "batchStats": {"requestCount": "2"}},
        "done": True,
        "error": {"code": 3, "message": "quota of enqueued tokens exceeded"},
    }
    batches = gemini(fake, session)
    spec, requests_ = asks(2)
    [handle] = batches.submit([entry_for(spec, r) for r in requests_])
    fake.script(status(200, body=json.dumps(operation)))
    results = batches.results(handle)
    assert {(r.error, r.message) for r in results.values()} == {(FAILED, "quota of enqueued tokens exceeded")}


def test_an_error_naming_the_create_call_shows_no_key(fake, session, tmp_path):
    fake.script(status(400, body=json.dumps({"error": {"code": 400, "message": f"API key not valid: {KEY}"}})))
    spec, requests_ = asks(2)
    with pytest.raises(BatchError) as caught:
        gemini(fake, session, BatchLedger(tmp_path)).submit([entry_for(spec, r) for r in requests_])
    message = str(caught.value)
    assert message.startswith(f"POST {fake.gemini_base}/models/gemini-2.5-flash:batchGenerateContent: HTTP 400")
    assert "PLANTED" not in message and caught.value.status == 400
    assert not (tmp_path / "batch.json").exists()  # nothing was created, nothing recorded


def test_the_ledger_holds_a_gemini_batch_and_a_rerun_sends_nothing_again(fake, session, tmp_path):
    spec, requests_ = asks(5)
    entries = [entry_for(spec, r) for r in requests_]
    [handle] = gemini(fake, session, BatchLedger(tmp_path)).submit(entries)
    text = (tmp_path / "batch.json").read_text()
    assert json.loads(text)["batches"][0]["provider"] == "gemini" and "PLANTED" not in text
    assert gemini(fake, session, BatchLedger(tmp_path)).submit(entries) == [handle] and len(creates(fake)) == 1


# --- a batch larger than inline requests may be: a JSONL file through the Files API ---


def test_a_batch_past_the_inline_limit_goes_as_an_uploaded_file_and_its_replies_come_back_as_one(
    fake, session, tmp_path, monkeypatch
):
    monkeypatch.setattr(GeminiBatchClient, "INLINE_BYTES", 1000)  # 20 requests are more than that
    spec, requests_ = asks()
    batches = gemini(fake, session, BatchLedger(tmp_path))
    [handle] = batches.submit([entry_for(spec, r) for r in requests_])
    start, upload, create = fake.requests[:3]
    assert (start["path"], start["headers"]["x-goog-upload-command"]) == ("/upload/v1beta/files", "start")
    assert start["headers"]["x-goog-upload-header-content-length"] == upload["headers"]["content-length"]
    assert upload["headers"]["x-goog-upload-command"] == "upload, finalize"
    lines = [json.loads(line) for line in upload["body"].splitlines()]  # the fake reads the JSONL as text
    assert [line["request"] for line in lines] == [gemini_call(spec, r, None).body for r in requests_]
    assert [line["key"] for line in lines] == list(handle.custom_ids)
    file_name = create["body"]["batch"]["input_config"]["file_name"]
    assert create["path"] == CREATE and "requests" not in create["body"]["batch"]["input_config"]
    assert handle.input_file_id == file_name and fake.batch.uploaded == 1
    assert json.loads((tmp_path / "batch.json").read_text())["batches"][0]["input_file_id"] == file_name
    batches.poll(handle)
    results = batches.results(handle)
    download = fake.requests[-1]
    assert download["path"].startswith("/download/v1beta/files/") and download["query"] == {"alt": ["media"]}
    assert [gemini_parse(results[cid].body).text for cid in handle.custom_ids] == [
        f"answer to question {i}" for i in range(20)
    ]
    assert {r["headers"]["x-goog-api-key"] for r in fake.requests} == {KEY} and fake.live_calls == 0
    responses = batches._batch(handle)[0]["response"]["responsesFile"]
    assert batches.clean_up(handle) == [] and fake.batch.deleted == [file_name, responses]


def test_an_upload_url_on_another_host_gets_neither_the_key_nor_the_requests(fake, session, monkeypatch):
    monkeypatch.setattr(GeminiBatchClient, "INLINE_BYTES", 1000)
    fake.batch.upload_url = "https://elsewhere.invalid/upload"  # what the upload's start answers
    spec, requests_ = asks()
    with pytest.raises(BatchError, match="given no URL on http://127.0.0.1"):
        gemini(fake, session).submit([entry_for(spec, r) for r in requests_])
    assert len(fake.requests) == 1 and fake.batch.created == 0
