"""Cassettes that must not lie and must not break: what reaches a cassette, and what happens when a
cassette file is broken or its save is cut short.

- Only a response that parsed into a completion is recorded: a malformed 200 (HTML, truncated
  JSON, missing or empty answer lists, a body that cannot be decoded) fails its item once and
  is asked again by the next recording run, never replayed as the same error.
- Saves are atomic (a temp file beside the cassette, then a rename): a kill mid-save leaves the
  previous cassette whole; `rewrite` replaces the old cassette only with a complete new one.
- An unreadable cassette (truncated, bad YAML, missing or mistyped fields) is that item's
  one-line cassette miss naming the file and how to record it again, never a traceback; a
  recording run records it anew.
"""

from __future__ import annotations

import builtins
import gzip
import io
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from fakeprovider import malformed, missing_fields, slow, status, truncated
from helpers import cassette_path

from pytest_reasoning_evals.cassettes import CassetteClient
from pytest_reasoning_evals.providers.base import MISS, CallOutcome, Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "FAKE_PROVIDER_KEY"
POLICY = RetryPolicy(max_retries=2, backoff_base=0.01, backoff_max=0.02, jitter=0.0, timeout=2.0)
CLOSED_PORT_URL = "http://127.0.0.1:9/v1"  # nothing listens here: replays must not need it
SUITE = "chaosbench-zeroshot"
BASES = {"openai": "openai_base", "anthropic": "anthropic_base", "gemini": "gemini_base"}


def make_client(root: Path, mode: str, base_url: str, provider: str = "openai") -> CassetteClient:
    spec = ModelSpec(
        alias="fake",
        provider=provider,
        model_id="fake-model",
        api_key_env=KEY_VAR,
        base_url=base_url,
        price_in=1.0,
        price_out=2.0,
    )
    return CassetteClient(HttpModel(spec, POLICY), root, mode)


def ask(text: str = "Is Lorenz-63 chaotic?", item: str = "q-1", history: tuple[dict, ...] = ()) -> Request:
    return Request(item_id=item, cassette_folder=SUITE, messages=(*history, {"role": "user", "content": text}))


def path_of(root: Path, item: str = "q-1") -> Path:
    return cassette_path(root, "fake", SUITE, item)


def interactions(path: Path) -> list[dict]:
    return yaml.safe_load(path.read_text())["interactions"]


def answers_in(path: Path) -> list[str]:
    return [json.loads(i["response"]["body"]["string"])["choices"][0]["message"]["content"] for i in interactions(path)]


def leftovers(root: Path) -> list[Path]:
    """Anything in the cassette tree that is not a cassette (temp files of a save)."""
    return [p for p in root.rglob("*") if p.is_file() and p.suffix != ".yaml"]


# ---------------------------------------------------------------------------------------------
# 2. a malformed 200 is never recorded
# ---------------------------------------------------------------------------------------------

MALFORMED_200 = {
    "html": malformed,
    "truncated-json": truncated,
    "missing-fields": missing_fields,
    "empty-choices": lambda: status(
        200,
        body=json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 0},
            }
        ),
    ),
    "json-list": lambda: status(200, body="[1, 2, 3]"),
    "choices-not-a-list": lambda: status(200, body=json.dumps({"choices": {"0": "TRUE"}})),
    "message-not-an-object": lambda: status(200, body=json.dumps({"choices": [{"message": "TRUE"}]})),
}


def _empty_answers(provider: str) -> str:
    return json.dumps(
        {
            "openai": {"id": "x", "object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 3}},
            "gemini": {"candidates": [], "usageMetadata": {"promptTokenCount": 3}},
            "anthropic": {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "content": [],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        }[provider]
    )


def _gzip_reply(body: bytes) -> dict:
    return {
        "status": {"code": 200, "message": "OK"},
        "body": {"string": body},
        "headers": {"Content-Encoding": ["gzip"], "Content-Type": ["application/json"]},
    }


# ---------------------------------------------------------------------------------------------
# 4. half-written and unreadable cassettes
# ---------------------------------------------------------------------------------------------


def record_one(server, root: Path, item: str = "q-1") -> Path:
    completion = make_client(root, "once", server.openai_base).complete(ask(item=item))
    assert completion.error is None
    return path_of(root, item)


def _cut_in_half(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _cut_before_response(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[: text.index("  response:")])


def _edit(change):
    def apply(path: Path) -> None:
        data = yaml.safe_load(path.read_text())
        change(data)
        path.write_text(yaml.safe_dump(data))

    return apply


def _set(keys: tuple, value):
    def change(data):
        target = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


UNREADABLE = {
    "cut-in-half": (_cut_in_half, ""),
    "cut-before-response": (_cut_before_response, "interaction 1 has no 'response'"),
    "bad-yaml": (lambda p: p.write_text("interactions: [\n  - {request: oops\n"), "not valid YAML"),
    "empty-file": (lambda p: p.write_text(""), "empty file"),
    "not-utf8": (lambda p: p.write_bytes(b"\xff\xfe\x00garbage\x81"), "not UTF-8 text"),
    "not-a-mapping": (lambda p: p.write_text("- just\n- a list\n"), "no list of interactions"),
    "status-code-a-string": (_edit(_set(("interactions", 0, "response", "status", "code"), "two hundred")), "status"),
    "headers-a-list": (_edit(_set(("interactions", 0, "response", "headers"), ["a", "b"])), "headers"),
    "body-missing": (_edit(_set(("interactions", 0, "response", "body"), None)), "body"),
    "request-uri-missing": (_edit(lambda d: d["interactions"][0]["request"].pop("uri")), "uri"),
    "recorded-malformed-200": (
        _edit(_set(("interactions", 0, "response", "body", "string"), '{"choices": [')),
        "not a completion",
    ),
}


def assert_unreadable_miss(error: str, path: Path, reason: str, item: str = "q-1") -> None:
    assert error.startswith(f"{MISS} for item {item!r}: unreadable cassette ("), error
    assert reason in error, error
    assert str(path) in error and "--eval-record-mode=refresh" in error, error
    assert "\n" not in error and "Traceback" not in error


# --- atomic saves ---

KILL_MID_SAVE = textwrap.dedent("""
    import builtins, io, os, signal, sys
    from pathlib import Path

    from pytest_reasoning_evals.cassettes import CassetteClient
    from pytest_reasoning_evals.providers.base import Request
    from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
    from pytest_reasoning_evals.registry import ModelSpec

    root, url = Path(sys.argv[1]), sys.argv[2]
    spec = ModelSpec(alias="fake", provider="openai", model_id="fake-model", api_key_env=None, base_url=url)
    client = CassetteClient(HttpModel(spec, RetryPolicy(max_retries=0, timeout=5.0)), root, sys.argv[3])
    folder = root / "fake" / "chaosbench-zeroshot"
    real_open = builtins.open

    class Killing:
        # a file whose first write puts half the text on disk, then the process is SIGKILLed
        def __init__(self, handle):
            self.handle = handle
        def write(self, text):
            self.handle.write(text[: len(text) // 2])
            self.handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self.handle.close()
        def __getattr__(self, name):
            return getattr(self.handle, name)

    def killing_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if ("w" in mode or "x" in mode) and Path(file).parent == folder:
            return Killing(handle)
        return handle

    def turn(n, history):
        return Request(item_id="dlg-1", cassette_folder="chaosbench-zeroshot",
                       messages=(*history, {"role": "user", "content": f"turn {n}"}))

    with client.conversation("chaosbench-zeroshot", "dlg-1"):
        one = turn(1, ())
        assert client.complete(one).error is None
        print("turn 1 saved", flush=True)
        builtins.open = io.open = killing_open  # the save after turn 2 is cut halfway by a kill
        client.complete(turn(2, (*one.messages, {"role": "assistant", "content": "TRUE"})))
    print("not killed", flush=True)
""")


class Crash(BaseException):
    """Stands for a kill: nothing after it runs in the saving code."""


def crash_mid_write(monkeypatch, folder: Path) -> None:
    """The next file opened for writing in `folder` gets half its text, then Crash is raised."""
    real_open = builtins.open

    class Half(io.StringIO):
        def __init__(self, handle):
            super().__init__()
            self.handle = handle

        def write(self, text):
            self.handle.write(text[: len(text) // 2])
            self.handle.close()
            raise Crash("killed mid-save")

        def __exit__(self, *exc):
            self.handle.close()

    def cutting_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if ("w" in mode or "x" in mode) and Path(file).parent == folder:
            return Half(handle)
        return handle

    monkeypatch.setattr(builtins, "open", cutting_open)
    monkeypatch.setattr(io, "open", cutting_open)


def _dialogue(client: CassetteClient, turns: int = 3) -> list:
    history: tuple[dict, ...] = ()
    out = []
    with client.conversation(SUITE, "dlg-1"):
        for n in range(1, turns + 1):
            request = ask(f"turn {n}", item="dlg-1", history=history)
            completion = client.complete(request)
            out.append(completion)
            if completion.error:
                break
            history = (*request.messages, {"role": "assistant", "content": completion.text})
    return out


@pytest.mark.parametrize("fault", MALFORMED_200.values(), ids=MALFORMED_200.keys())
def test_malformed_200_is_not_recorded_and_the_next_recording_asks_again(server, tmp_path, fault) -> None:
    server.script(fault())
    first = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert first.error and first.error.startswith("malformed provider response"), first.error
    assert len(server.requests) == 1, "a malformed 200 is not retried"
    assert not path_of(tmp_path).exists(), "the broken response must not reach a cassette"

    # the server is fixed: the next recording run asks again (a real request) and records the answer
    second = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert (second.error, second.text, second.outcome.hit) == (None, "TRUE", False)
    assert len(server.requests) == 2
    assert answers_in(path_of(tmp_path)) == ["TRUE"]

    # and from then on it replays, with no server
    replayed = make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask())
    assert (replayed.error, replayed.text, replayed.outcome.hit) == (None, "TRUE", True)


@pytest.mark.parametrize("provider", ["openai", "gemini", "anthropic"])
def test_an_empty_answer_list_is_malformed_and_not_recorded(server, tmp_path, provider) -> None:
    server.script(status(200, body=_empty_answers(provider)))
    client = make_client(tmp_path, "once", getattr(server, BASES[provider]), provider)
    completion = client.complete(ask())
    assert completion.error and completion.error.startswith("malformed provider response"), completion
    assert not path_of(tmp_path).exists()
    again = make_client(tmp_path, "once", getattr(server, BASES[provider]), provider).complete(ask())
    assert (again.error, again.text) == (None, "TRUE") and len(server.requests) == 2


def test_500_then_malformed_200_records_nothing(server, tmp_path) -> None:
    server.script(status(500), truncated())
    completion = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert completion.error.startswith("malformed provider response") and len(server.requests) == 2
    assert not path_of(tmp_path).exists()


def test_500_then_200_keeps_only_the_good_answer_and_a_rerun_replays_it(server, tmp_path) -> None:
    server.script(status(500), status(503))
    assert make_client(tmp_path, "once", server.openai_base).complete(ask()).text == "TRUE"
    assert len(server.requests) == 3
    assert [i["response"]["status"]["code"] for i in interactions(path_of(tmp_path))] == [200]
    # a recording re-run and a replay both answer from the cassette: nothing more is sent
    for mode, url in (("once", server.openai_base), ("new_episodes", server.openai_base), ("none", CLOSED_PORT_URL)):
        again = make_client(tmp_path, mode, url).complete(ask())
        assert (again.error, again.text, again.outcome.hit) == (None, "TRUE", True), mode
    assert len(server.requests) == 3


def test_a_malformed_turn_keeps_the_answered_turns_and_is_asked_again(server, tmp_path) -> None:
    server.script(slow(0), malformed())  # turn 1 answered, turn 2 gets an HTML page
    one = ask("turn 1", item="dlg-1")
    two = ask("turn 2", item="dlg-1", history=(*one.messages, {"role": "assistant", "content": "TRUE"}))
    client = make_client(tmp_path, "once", server.openai_base)
    with client.conversation(SUITE, "dlg-1"):
        assert client.complete(one).error is None
        assert client.complete(two).error.startswith("malformed provider response")
    path = path_of(tmp_path, "dlg-1")
    assert len(interactions(path)) == 1, "only the answered turn is in the cassette"

    client = make_client(tmp_path, "once", server.openai_base)
    with client.conversation(SUITE, "dlg-1"):
        first, second = client.complete(one), client.complete(two)
    assert (first.outcome.hit, second.outcome.hit, second.error) == (True, False, None)
    assert len(server.requests) == 3 and len(interactions(path)) == 2


def test_the_record_hook_records_decoded_completions_only(tmp_path) -> None:
    # The check each response about to be recorded goes through (it must refuse, never raise):
    # a gzip body is recorded decoded; one that is not a completion once decoded (or not gzip
    # at all) is refused.
    hook = make_client(tmp_path, "once", CLOSED_PORT_URL)._before_record_response
    assert hook(_gzip_reply(b"<html>not gzip</html>")) is None
    good = json.dumps({"choices": [{"message": {"content": "TRUE"}, "finish_reason": "stop"}], "usage": {}}).encode()
    kept = hook(_gzip_reply(gzip.compress(good)))
    assert kept["body"]["string"] == good and "Content-Encoding" not in kept["headers"], "recorded decoded"
    assert hook(_gzip_reply(gzip.compress(b'{"choices": []}'))) is None


@pytest.mark.parametrize("damage", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_an_unreadable_cassette_is_a_one_line_miss_naming_the_file(server, tmp_path, damage) -> None:
    break_it, reason = damage
    path = record_one(server, tmp_path)
    record_one(server, tmp_path, "q-2")
    break_it(path)
    client = make_client(tmp_path, "none", CLOSED_PORT_URL)
    miss = client.complete(ask())  # no exception
    assert (miss.text, miss.provider) == ("", "openai")
    assert_unreadable_miss(miss.error, path, reason)
    # the session goes on: the next item replays
    assert client.complete(ask(item="q-2")).text == "TRUE"
    assert len(server.requests) == 2


def test_an_unreadable_dialogue_cassette_fails_its_turns_without_a_traceback(server, tmp_path) -> None:
    one = ask("turn 1", item="dlg-1")
    two = ask("turn 2", item="dlg-1", history=(*one.messages, {"role": "assistant", "content": "TRUE"}))
    client = make_client(tmp_path, "once", server.openai_base)
    with client.conversation(SUITE, "dlg-1"):
        client.complete(one), client.complete(two)
    path = path_of(tmp_path, "dlg-1")
    _cut_before_response(path)
    client = make_client(tmp_path, "none", CLOSED_PORT_URL)
    with client.conversation(SUITE, "dlg-1"):
        miss = client.complete(one)
    assert_unreadable_miss(miss.error, path, "interaction 1 has no 'response'", "dlg-1")


def test_a_recording_run_records_an_unreadable_cassette_anew(server, tmp_path) -> None:
    path = record_one(server, tmp_path)
    _cut_in_half(path)
    server.reply_text = "FALSE"
    completion = make_client(tmp_path, "once", server.openai_base).complete(ask())
    assert (completion.error, completion.text, len(server.requests)) == (None, "FALSE", 2)
    assert answers_in(path) == ["FALSE"]
    assert make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask()).text == "FALSE"


@pytest.mark.parametrize("mode", ["once", "new_episodes"])
def test_a_kill_mid_save_leaves_the_previous_cassette_whole(server, tmp_path, mode) -> None:
    script = tmp_path / "kill_mid_save.py"
    script.write_text(KILL_MID_SAVE)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "cassettes"), server.openai_base, mode],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)
    assert "turn 1 saved" in done.stdout and "not killed" not in done.stdout
    assert len(server.requests) == 2
    path = path_of(tmp_path / "cassettes", "dlg-1")
    assert len(interactions(path)) == 1, "the cassette saved after turn 1 is intact"
    one = ask("turn 1", item="dlg-1")
    client = make_client(tmp_path / "cassettes", "none", CLOSED_PORT_URL)
    with client.conversation(SUITE, "dlg-1"):
        replayed = client.complete(one)
    assert (replayed.error, replayed.text) == (None, "TRUE")


def test_a_save_cut_short_leaves_the_old_cassette_and_no_temp_file(server, tmp_path, monkeypatch) -> None:
    path = record_one(server, tmp_path)
    before = path.read_bytes()
    crash_mid_write(monkeypatch, path.parent)
    with pytest.raises(Crash):
        make_client(tmp_path, "new_episodes", server.openai_base).complete(ask("a changed question"))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []
    assert make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask()).text == "TRUE"


def test_saves_leave_only_cassettes_behind(server, tmp_path) -> None:
    record_one(server, tmp_path)
    one = ask("turn 1", item="dlg-1")
    client = make_client(tmp_path, "once", server.openai_base)
    with client.conversation(SUITE, "dlg-1"):
        client.complete(one)
        client.complete(ask("turn 2", item="dlg-1", history=(*one.messages, {"role": "assistant", "content": "TRUE"})))
    assert leftovers(tmp_path) == []
    assert sorted(p.name for p in (tmp_path / "fake" / SUITE).iterdir()) == ["dlg-1.yaml", "q-1.yaml"]


# --- rewrite keeps the old cassette until the new one is complete ---


def test_rewrite_whose_calls_all_fail_keeps_the_old_cassette(server, tmp_path) -> None:
    path = record_one(server, tmp_path)
    before = path.read_bytes()
    server.script(*[status(503)] * 3)
    failed = make_client(tmp_path, "rewrite", server.openai_base).complete(ask())
    assert "HTTP 503" in failed.error
    assert path.read_bytes() == before


def test_rewrite_with_a_malformed_answer_keeps_the_old_cassette(server, tmp_path) -> None:
    path = record_one(server, tmp_path)
    before = path.read_bytes()
    server.script(truncated())
    assert make_client(tmp_path, "rewrite", server.openai_base).complete(ask()).error
    assert path.read_bytes() == before


def test_rewrite_cut_short_mid_save_keeps_the_old_cassette(server, tmp_path, monkeypatch) -> None:
    path = record_one(server, tmp_path)
    before = path.read_bytes()
    server.reply_text = "FALSE"
    crash_mid_write(monkeypatch, path.parent)
    with pytest.raises(Crash):
        make_client(tmp_path, "rewrite", server.openai_base).complete(ask())
    monkeypatch.undo()
    assert path.read_bytes() == before and leftovers(tmp_path) == []
    assert make_client(tmp_path, "none", CLOSED_PORT_URL).complete(ask()).text == "TRUE"


def test_rewrite_of_a_dialogue_replaces_its_cassette_only_when_every_turn_is_answered(server, tmp_path) -> None:
    _dialogue(make_client(tmp_path, "once", server.openai_base))
    path = path_of(tmp_path, "dlg-1")
    before = path.read_bytes()
    assert len(interactions(path)) == 3

    server.reply_text = "FALSE"
    server.script(slow(0), status(400))  # turn 1 answered, turn 2 refused for good
    made = _dialogue(make_client(tmp_path, "rewrite", server.openai_base))
    assert [c.error is None for c in made] == [True, False]
    assert path.read_bytes() == before, "a rewrite that failed at turn 2 keeps the old, complete cassette"

    made = _dialogue(make_client(tmp_path, "rewrite", server.openai_base))
    assert all(c.error is None for c in made) and len(made) == 3
    assert answers_in(path) == ["FALSE"] * 3, "a complete rewrite replaces it"
    assert leftovers(tmp_path) == []


def test_rewrite_of_a_dialogue_stopped_midway_keeps_the_old_cassette(server, tmp_path) -> None:
    _dialogue(make_client(tmp_path, "once", server.openai_base))
    path = path_of(tmp_path, "dlg-1")
    before = path.read_bytes()
    client = make_client(tmp_path, "rewrite", server.openai_base)
    with pytest.raises(KeyboardInterrupt), client.conversation(SUITE, "dlg-1"):
        client.complete(ask("turn 1", item="dlg-1"))
        raise KeyboardInterrupt  # a stop (budget, refused key, Ctrl-C) after one paid turn
    assert path.read_bytes() == before


# --- the replay path (record mode "none" sends nothing) ---


@pytest.mark.parametrize("provider", ["openai", "gemini", "anthropic"])
def test_a_replay_gives_what_the_recording_got_in_every_wire_format(server, tmp_path, provider) -> None:
    server.reply_text = "FALSE, because the map is invertible."
    recorded = make_client(tmp_path, "once", getattr(server, BASES[provider]), provider).complete(ask())
    assert recorded.error is None and recorded.outcome.hit is False
    sent = len(server.requests)
    replayed = make_client(tmp_path, "none", getattr(server, BASES[provider]), provider).complete(ask())
    assert len(server.requests) == sent, "a replay sends nothing"
    assert replayed.outcome == CallOutcome(hit=True, cassette=recorded.outcome.cassette)
    for field in (
        "text",
        "input_tokens",
        "output_tokens",
        "thinking_tokens",
        "latency_ms",
        "cost_usd",
        "finish_reason",
        "provider",
        "model",
    ):
        assert getattr(replayed, field) == getattr(recorded, field), field


def test_a_replayed_interaction_answers_once_per_opening(server, tmp_path) -> None:
    """As vcrpy plays it: inside one conversation, an interaction answers one request; asking the
    same thing twice is a miss, not the same answer served again."""
    make_client(tmp_path, "once", server.openai_base).complete(ask())
    replay = make_client(tmp_path, "none", server.openai_base)
    with replay.conversation("chaosbench-zeroshot", "q-1"):
        first = replay.complete(ask())
        second = replay.complete(ask())
    assert first.error is None and first.text == "TRUE"
    assert second.error.startswith(MISS) and "the cassette has no matching request" in second.error
    assert replay.complete(ask()).error is None  # a new opening plays it again


def test_a_replay_miss_names_what_differs_from_the_closest_recording(server, tmp_path) -> None:
    make_client(tmp_path, "once", server.openai_base).complete(ask("Is Lorenz-63 chaotic?"))
    missed = make_client(tmp_path, "none", server.openai_base).complete(ask("Is the logistic map chaotic?"))
    assert missed.error == (
        f"{MISS} for item 'q-1': the cassette has no matching request (differs in: body): {path_of(tmp_path)}"
    )
