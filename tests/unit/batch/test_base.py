"""custom_id, splitting and the batch entry of a request (plugin/batch/base.py): no HTTP."""

import re

import pytest
import requests

from pytest_reasoning_evals.batch import (
    AnthropicBatchClient,
    BatchEntry,
    BatchError,
    BatchHandle,
    OpenAIBatchClient,
    custom_id,
    entry_for,
    split,
)
from pytest_reasoning_evals.batch.base import unique
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.wire import anthropic_call, openai_call
from pytest_reasoning_evals.registry import ModelSpec

ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
GPT = ModelSpec("gpt", "openai", "gpt-4.1-mini", base_url="https://api.openai.com/v1")
CLAUDE = ModelSpec("claude", "anthropic", "claude-sonnet-4", base_url="https://api.anthropic.com/v1")


def request(item="q-00001", folder="zero_shot", text="Is the Lorenz system chaotic?"):
    return Request(item_id=item, cassette_folder=folder, messages=({"role": "user", "content": text},))


def entries(n, size=0):
    return [BatchEntry(f"id-{i}", {"model": "m", "pad": "x" * size}) for i in range(n)]


# --- custom_id ---


def test_custom_id_is_stable_readable_and_fits_anthropics_rule():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    cid = custom_id("zero_shot", "q-00001", body)
    assert cid == custom_id("zero_shot", "q-00001", dict(reversed(body.items())))  # key order does not matter
    assert cid.startswith("zero_shot--q-00001_") and len(cid.rsplit("_", 1)[1]) == 12
    assert ANTHROPIC_ID.fullmatch(cid)


def test_custom_id_changes_with_the_body_the_item_and_the_folder():
    body = {"model": "m", "max_tokens": 16}
    ids = {
        custom_id("f", "a", body),
        custom_id("f", "a", {**body, "max_tokens": 17}),
        custom_id("f", "b", body),
        custom_id("g", "a", body),
    }
    assert len(ids) == 4


def test_long_or_odd_names_are_cut_to_64_allowed_characters_and_stay_apart():
    body = {"model": "m"}
    long_a = custom_id("cot/prompt v2", "dlg-0001#turn 3/" + "x" * 100, body)
    long_b = custom_id("cot/prompt v2", "dlg-0001#turn 3/" + "x" * 101, body)
    for cid in (long_a, long_b, custom_id("", "", body), custom_id("é/ü", "ß", body)):
        assert ANTHROPIC_ID.fullmatch(cid), cid
    assert long_a != long_b and long_a.startswith("cot-prompt-v2--dlg-0001-turn-3-x")


# --- the entry of a request ---


@pytest.mark.parametrize("spec, build", [(GPT, openai_call), (CLAUDE, anthropic_call)])
def test_an_entry_carries_the_body_the_live_call_sends(spec, build):
    entry = entry_for(spec, request())
    assert entry.body == build(spec, request(), None).body
    assert entry.custom_id == custom_id("zero_shot", "q-00001", entry.body)
    assert (entry.cassette_folder, entry.item_id) == ("zero_shot", "q-00001")
    assert repr(entry) == f"BatchEntry({entry.custom_id!r})"


def test_an_entry_needs_no_base_url():
    spec = ModelSpec("gpt", "openai", "gpt-4.1-mini")
    assert entry_for(spec, request()).body["model"] == "gpt-4.1-mini"


# --- splitting ---


def test_split_keeps_the_order_and_cuts_at_the_request_limit():
    chunks = split(entries(7), max_requests=3, max_bytes=10**9, size=lambda e: 1)
    assert [[e.custom_id for e in c] for c in chunks] == [["id-0", "id-1", "id-2"], ["id-3", "id-4", "id-5"], ["id-6"]]


def test_split_cuts_at_the_byte_limit_exactly():
    chunks = split(entries(5), max_requests=100, max_bytes=20, size=lambda e: 10)
    assert [len(c) for c in chunks] == [2, 2, 1]  # 20 bytes fit, 30 do not


def test_split_of_nothing_is_no_batch():
    assert split([], 10, 10, size=len) == []


def test_one_request_larger_than_a_batch_is_refused():
    with pytest.raises(BatchError, match=r"id-0 is 11 bytes: more than one batch may hold \(10\)"):
        split(entries(1), 10, 10, size=lambda e: 11)


def test_a_custom_id_is_sent_once():
    twice = [*entries(2), *entries(3)]
    assert [e.custom_id for e in unique(twice)] == ["id-0", "id-1", "id-2"]


def test_openai_splits_by_model_and_by_its_lowered_limits(monkeypatch):
    client = OpenAIBatchClient(requests.Session(), "https://api.openai.com/v1", None)
    mixed = [BatchEntry(f"id-{i}", {"model": "a" if i % 2 else "b"}) for i in range(6)]
    assert [[e.custom_id for e in c] for c in client.chunks(mixed)] == [
        ["id-0", "id-2", "id-4"],
        ["id-1", "id-3", "id-5"],
    ]
    monkeypatch.setattr(OpenAIBatchClient, "MAX_REQUESTS", 2)
    assert [len(c) for c in client.chunks(mixed)] == [2, 1, 2, 1]


def test_sizes_are_the_bytes_sent():
    entry = BatchEntry("id-é", {"model": "m", "messages": [{"role": "user", "content": "ünïcode"}]})
    openai = OpenAIBatchClient(requests.Session(), "https://api.openai.com/v1", None)
    anthropic = AnthropicBatchClient(requests.Session(), "https://api.anthropic.com/v1", None)
    assert openai.size(entry) == len(openai.line(entry)) and openai.line(entry).endswith(b"\n")
    assert b'"url":"/v1/chat/completions"' in openai.line(entry)
    assert anthropic.size(entry) == len(anthropic.item(entry).encode("utf-8")) + 1
    assert "ünïcode" in anthropic.item(entry)  # UTF-8, not \\u escapes: the size is what goes out


def test_anthropic_lowered_byte_limit_leaves_room_for_the_envelope(monkeypatch):
    client = AnthropicBatchClient(requests.Session(), "https://api.anthropic.com/v1", None)
    three = entries(3)
    each = client.size(three[0])
    monkeypatch.setattr(AnthropicBatchClient, "MAX_BYTES", 2 * each + client.OVERHEAD)
    assert [len(c) for c in client.chunks(three)] == [2, 1]
    monkeypatch.setattr(AnthropicBatchClient, "MAX_BYTES", 2 * each + client.OVERHEAD - 1)
    assert [len(c) for c in client.chunks(three)] == [1, 1, 1]


# --- handles ---


def test_a_handle_reads_back_from_its_json():
    handle = BatchHandle("openai", "batch_1", ("a", "b"), "2026-01-01T00:00:00+00:00", "file-1")
    assert BatchHandle.from_json(handle.to_json()) == handle
    assert repr(handle) == "BatchHandle(openai batch_1, 2 requests, created 2026-01-01T00:00:00+00:00)"


def test_a_bad_base_url_is_refused_without_its_credentials():
    with pytest.raises(BatchError) as caught:
        OpenAIBatchClient(requests.Session(), "ftp://user:sk-secret@host/v1", None)
    assert "sk-secret" not in str(caught.value)
