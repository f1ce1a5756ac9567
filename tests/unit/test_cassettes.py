"""cassettes.py: record against a real HTTP server on 127.0.0.1, replay with it gone."""

from __future__ import annotations

import json

import pytest
import yaml
from fakeprovider import FakeProvider, status
from helpers import cassette_path

from pytest_reasoning_evals.cassette_index import CassetteIndex
from pytest_reasoning_evals.cassettes import MATCH, CassetteClient, MatchRule
from pytest_reasoning_evals.providers.base import ErrorKind, Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "FAKE_PROVIDER_KEY"
PLANTED_KEY = "fake-" + "k3y" * 8  # built at run time; must never reach a cassette
POLICY = RetryPolicy(max_retries=2, backoff_base=0.01, backoff_max=0.02, jitter=0.0, timeout=2.0)
CLOSED_PORT_URL = "http://127.0.0.1:9/v1"  # nothing listens here: replays must not need it


def make_client(root, mode: str, base_url: str) -> CassetteClient:
    spec = ModelSpec(
        alias="fake",
        provider="openai",
        model_id="fake-model",
        api_key_env=KEY_VAR,
        base_url=base_url,
        price_in=1.0,
        price_out=2.0,
    )
    return CassetteClient(HttpModel(spec, POLICY), root, mode)


def ask(text: str = "Is Lorenz-63 chaotic?", item: str = "q-1") -> Request:
    return Request(item_id=item, cassette_folder="chaosbench-zeroshot", messages=({"role": "user", "content": text},))


def interactions(path) -> list[dict]:
    return yaml.safe_load(path.read_text())["interactions"]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_VAR, PLANTED_KEY)
    with FakeProvider() as provider:
        yield provider


def test_record_then_replay_on_another_port_without_a_server(server: FakeProvider, tmp_path) -> None:
    server.reply_text = "FALSE"
    recorded = make_client(tmp_path, "once", server.openai_base).complete(ask())
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    assert path.exists() and len(server.requests) == 1
    server.close()
    replayed = make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask())
    assert (replayed.text, replayed.input_tokens, replayed.output_tokens, replayed.cost_usd, replayed.error) == (
        "FALSE",
        recorded.input_tokens,
        recorded.output_tokens,
        recorded.cost_usd,
        None,
    )
    assert replayed.latency_ms == recorded.latency_ms > 0, "replay reports the recorded latency"
    assert replayed.outcome.cassette == "fake/chaosbench-zeroshot/q-1.yaml"


def test_replay_needs_no_key(server: FakeProvider, tmp_path, monkeypatch) -> None:
    make_client(tmp_path, "once", server.openai_base).complete(ask())
    monkeypatch.delenv(KEY_VAR)
    assert make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask()).text == "TRUE"


def test_cassette_holds_no_key_and_no_identifying_response_headers(server: FakeProvider, tmp_path) -> None:
    server.extra_headers = {
        "Set-Cookie": "session=abc",
        "x-request-id": "req_123",
        "openai-organization": "org-x",
        "x-ratelimit-remaining-requests": "99",
        "Content-Type": "application/json",
    }
    make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {PLANTED_KEY}", "the live call carried the key"
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    text = path.read_text()
    assert PLANTED_KEY not in text
    (interaction,) = interactions(path)
    assert not {"authorization", "Authorization"} & set(interaction["request"]["headers"])
    response_headers = {name.lower() for name in interaction["response"]["headers"]}
    assert (
        not {"set-cookie", "x-request-id", "openai-organization", "x-ratelimit-remaining-requests"} & response_headers
    )
    assert "content-type" in response_headers


def test_failed_responses_are_never_recorded(server: FakeProvider, tmp_path) -> None:
    server.script(status(500), status(429, retry_after="0"))
    completion = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert completion.text == "TRUE" and len(server.requests) == 3
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    assert [i["response"]["status"]["code"] for i in interactions(path)] == [200]


def test_all_attempts_failing_writes_no_cassette(server: FakeProvider, tmp_path) -> None:
    server.script(*[status(503)] * 3)
    completion = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert completion.error and "HTTP 503" in completion.error
    assert not cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1").exists()


def test_replay_miss_names_item_difference_and_rerecord_command(server: FakeProvider, tmp_path) -> None:
    make_client(tmp_path, "once", server.openai_base).complete(ask("Is Lorenz-63 chaotic?"))
    miss = make_client(tmp_path, "none", server.openai_base).complete(ask("Is Lorenz-63 periodic?"))
    assert miss.text == "" and miss.provider == "openai"
    message = miss.error
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    assert message == f"cassette miss for item 'q-1': the cassette has no matching request (differs in: body): {path}"
    assert len(server.requests) == 1, "a replay miss sends nothing"


def test_replay_without_cassette_file(server: FakeProvider, tmp_path) -> None:
    miss = make_client(tmp_path, "none", server.openai_base).complete(ask(item="q-7"))
    assert miss.error.startswith("cassette miss for item 'q-7': no cassette file: ")
    assert server.requests == []


@pytest.mark.parametrize(
    ("mode", "requests_sent", "texts"),
    [("once", 1, ["TRUE"]), ("new_episodes", 1, ["TRUE"]), ("rewrite", 2, ["FALSE"])],
)
def test_record_modes_on_an_unchanged_request(server, tmp_path, mode, requests_sent, texts) -> None:
    make_client(tmp_path, "once", server.openai_base).complete(ask())
    server.reply_text = "FALSE"
    make_client(tmp_path, mode, server.openai_base).complete(ask())
    assert len(server.requests) == requests_sent
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    bodies = [
        json.loads(i["response"]["body"]["string"])["choices"][0]["message"]["content"] for i in interactions(path)
    ]
    assert bodies == texts


def test_once_and_new_episodes_add_a_changed_request_beside_the_first_and_none_refuses_it(server, tmp_path) -> None:
    # one file holds every prompt's requests of an item: `once` records what it does not answer yet
    make_client(tmp_path, "once", server.openai_base).complete(ask("first"))
    assert make_client(tmp_path, "none", server.openai_base).complete(ask("second")).error.startswith("cassette miss")
    assert make_client(tmp_path, "once", server.openai_base).complete(ask("second")).error is None
    make_client(tmp_path, "new_episodes", server.openai_base).complete(ask("third"))
    assert len(interactions(cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1"))) == 3
    assert len(server.requests) == 3


def test_a_plain_replay_from_the_index_is_the_completion_the_opened_cassette_gives(
    server: FakeProvider, tmp_path, monkeypatch
) -> None:
    server.reply_text = "FALSE"
    base = server.openai_base
    make_client(tmp_path, "once", base).complete(ask())
    server.close()
    opened = make_client(tmp_path, "none", base).complete(ask())  # no index: the file is opened
    (tmp_path / "cache").mkdir()
    hits = []
    for mode in ("none", "once", "none"):  # runs: the first parses the file into the index, the others read its row
        index = CassetteIndex(tmp_path / "cache")
        client = CassetteClient(make_client(tmp_path, mode, base).model, tmp_path, mode, index)
        monkeypatch.setattr(CassetteClient, "_load", None)  # the plain replay opens nothing
        assert client.complete(ask()) == opened
        monkeypatch.undo()
        index.close()
        hits.append(index.hits)
    assert hits == [0, 1, 1]
    # A request that is not the recorded one byte for byte still matches through vcrpy's
    # matchers (the cassette is opened, from the row already read): another port ...
    moved = CassetteClient(make_client(tmp_path, "none", CLOSED_PORT_URL).model, tmp_path, "none", index)
    assert moved.complete(ask()) == opened
    # ... or the recorded body with other JSON spacing.
    path = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    cassette = yaml.safe_load(path.read_text())
    request = cassette["interactions"][0]["request"]
    request["body"] = json.dumps(json.loads(request["body"]), indent=1)
    path.write_text(yaml.safe_dump(cassette))
    client = CassetteClient(make_client(tmp_path, "none", base).model, tmp_path, "none", index)
    assert client.complete(ask()) == opened
    assert client.complete(ask("another question")).error.startswith("cassette miss")


def tenant(r1, r2) -> None:
    """A header rule: what equal URL and body bytes do not imply."""
    assert r1.headers.get("X-Tenant") == r2.headers.get("X-Tenant")


@pytest.mark.parametrize("path", ["index first replay", "byte-equal in the call", "vcrpy's matchers"])
def test_a_rule_added_to_the_match_definition_holds_on_every_replay_path(
    server: FakeProvider, tmp_path, monkeypatch, path
) -> None:
    base = server.openai_base
    make_client(tmp_path, "once", base).complete(ask())
    server.close()
    file = cassette_path(tmp_path, "fake", "chaosbench-zeroshot", "q-1")
    cassette = yaml.safe_load(file.read_text())
    request = cassette["interactions"][0]["request"]
    request["headers"]["X-Tenant"] = ["other"]  # recorded with a header the request sent now lacks
    if path == "vcrpy's matchers":  # not the bytes sent: only vcrpy's matchers find it
        request["body"] = json.dumps(json.loads(request["body"]), indent=1)
    file.write_text(yaml.safe_dump(cassette))
    (tmp_path / "cache").mkdir()

    def client(match) -> CassetteClient:
        index = CassetteIndex(tmp_path / "cache") if path == "index first replay" else None
        return CassetteClient(make_client(tmp_path, "none", base).model, tmp_path, "none", index, match)

    if path == "index first replay":
        monkeypatch.setattr(CassetteClient, "_load", None)  # the default rules answer without opening the file
    assert client(MATCH).complete(ask()).outcome.hit is True
    monkeypatch.undo()
    missed = client(MATCH.adding(MatchRule(tenant))).complete(ask())
    assert missed.outcome.error_kind is ErrorKind.MISS and missed.text == ""
    assert "differs in: tenant" in missed.error
