"""Issue 25, cassettes: nothing recorded is lost, and no cassette misleads the run or the user.

- (4) a recording run whose cassettes cannot be saved is a usage error before anything is paid
  (the folder is not a folder, or is read-only), or stops at the first save that fails (the
  answered item keeps its record, the summary is written, nothing more is asked);
- (7) `--eval-record-mode=refresh` re-records only the items whose cassette does not answer them
  (a prompt changed, an unreadable file, a file with no usable answer), and the printed advice
  names the mode that records each kind of miss;
- (L1) temp files that killed runs left beside the cassettes are removed by the next recording;
- (L2) the cassette index sees an edit in place that keeps the size and puts the mtime back;
- (L4) a cassette that is not a regular file (a FIFO, a link to /dev/zero) or is too large is an
  unreadable cassette, read by neither the replay nor the index warmer;
- (a) a dialectic judge's or resolution call's cassette miss is counted in CASSETTE MISSES, with the
  command that records it;
- (b) a session that runs no eval item (--collect-only, a -k matching nothing) changes no run
  directory, keeps an earlier run's budget marker, and leaves no new folder;
- (c) a team's own questions asked with the shipped ChaosBench prompt get a notice and a manifest flag.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from fakeprovider import FakeProvider
from helpers import (
    FAKE_KEY_VAR,
    add_eval_module,
    cases_run,
    cassette_path,
    fake_model_args,
    fake_models,
    question,
    read_summary,
    run_dir,
    write_jsonl,
)

from pytest_reasoning_evals import cassette_index, cassettes, results
from pytest_reasoning_evals.cassette_index import MAX_BYTES, CassetteIndex
from pytest_reasoning_evals.cassettes import CassetteClient, read_cassette
from pytest_reasoning_evals.index_warmer import warm
from pytest_reasoning_evals.providers.base import MISS, Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

POLICY = RetryPolicy(max_retries=0, timeout=5.0)
CLOSED_PORT_URL = "http://127.0.0.1:9/v1"  # nothing listens here: replays must not need it
SUITE = "bank-zeroshot"


def client(root: Path, mode: str, base_url: str, index: CassetteIndex | None = None) -> CassetteClient:
    spec = ModelSpec(
        alias="fake", provider="openai", model_id="fake-model", api_key_env=FAKE_KEY_VAR, base_url=base_url
    )
    return CassetteClient(HttpModel(spec, POLICY), root, mode, index)


def ask(text: str, item: str = "q-1", history: tuple[dict, ...] = ()) -> Request:
    return Request(item_id=item, cassette_folder=SUITE, messages=(*history, {"role": "user", "content": text}))


def path_of(root: Path, item: str = "q-1") -> Path:
    return cassette_path(root, "fake", SUITE, item)


def sent_texts(server: FakeProvider) -> list[str]:
    return [r["body"]["messages"][-1]["content"] for r in server.requests]


def answers_in(path: Path) -> list[str]:
    return [
        json.loads(i["response"]["body"]["string"])["choices"][0]["message"]["content"]
        for i in yaml.safe_load(path.read_text())["interactions"]
    ]


def bank(pytester, changed: tuple[str, ...] = ()) -> Path:
    """Six questions; those in `changed` asked in other words (what a prompt change does to a request)."""
    items = [question(f"q-{i}", "TRUE" if i % 2 else "FALSE") for i in range(6)]
    for item in items:
        if item["id"] in changed:
            item["question"] = f"Is system {item['id']} deterministic, in the long run?"
    return write_jsonl(pytester.path / "bank.jsonl", items)


def eval_args(pytester, server_url: str, *args: str) -> list[str]:
    return [*fake_model_args(pytester, fake_models(server_url), pytester.path / "bank.jsonl"), *args]


def records(pytester) -> dict[str, dict]:
    lines = (run_dir(pytester, "fake") / "completions.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def printed_command(out: str) -> list[str]:
    """The arguments of the `record them with:` advice (without the key variables and `pytest`)."""
    command = re.search(r"record them with: (.*)", out)[1]
    words = shlex.split(command)
    return words[words.index("pytest") + 1 :]


# ---------------------------------------------------------------------------------------------
# (4) cassettes that cannot be saved
# ---------------------------------------------------------------------------------------------


def test_a_recording_run_whose_cassette_folder_cannot_be_a_folder_is_a_usage_error_before_any_call(
    pytester, server
) -> None:
    # Portable stand-in for a folder that cannot be written (tests run as root, which chmod does
    # not stop): the model's cassette folder is a file, so no cassette can be created under it.
    add_eval_module(pytester)
    bank(pytester)
    (pytester.path / "cassettes").mkdir()
    (pytester.path / "cassettes" / "fake").write_text("not a folder\n")
    result = pytester.runpytest_subprocess(*eval_args(pytester, server.openai_base, "--eval-record-mode", "once"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert (
        f"--eval-cassette-dir {pytester.path / 'cassettes'}: {pytester.path / 'cassettes' / 'fake'} is not a folder"
        in result.stderr.str()
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert server.requests == [], "nothing was paid"


def test_a_read_only_cassette_folder_is_named_with_its_os_error(tmp_path, monkeypatch) -> None:
    # A read-only file system, as access(2) and statvfs(2) report it (root passes chmod, and a
    # read-only mount needs privileges a test cannot count on): the OS calls are mocked, nothing else.
    monkeypatch.setattr(cassettes.os, "access", lambda path, mode: False)
    monkeypatch.setattr(cassettes.os, "statvfs", lambda path: os.statvfs_result((0,) * 8 + (os.ST_RDONLY, 255)))
    assert (
        cassettes.save_problem(tmp_path / "cassettes" / "fake")
        == f"cannot save cassettes in {tmp_path}: Read-only file system"
    )
    monkeypatch.setattr(cassettes.os, "access", lambda path, mode: True)
    assert cassettes.save_problem(tmp_path / "cassettes" / "fake") is None


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [("--eval-concurrency", "1"), ("--eval-concurrency", "4"), ("-n", "2", "--eval-concurrency", "1")],
    ids=["serial", "calls-ahead", "xdist"],
)
def test_a_failed_save_stops_the_run_and_loses_nothing(pytester, server, args) -> None:
    # A real failed save, no mock: a folder stands where q-2's cassette must be renamed to.
    add_eval_module(pytester)
    bank(pytester)
    folder = pytester.path / "cassettes" / "fake" / SUITE
    (folder / "q-2.yaml").mkdir(parents=True)
    result = pytester.runpytest_subprocess(
        *eval_args(pytester, server.openai_base, "--eval-record-mode", "once", "-p", "no:randomly", *args)
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    stop = f"cannot save cassettes in {folder}: Is a directory; the run stopped, incomplete"
    assert f"Interrupted: {stop}" in out and "Traceback" not in out and "INTERNALERROR" not in out
    done = records(pytester)
    assert done["q-2"]["error"] is None and done["q-2"]["cassette"] is None, "the answered item keeps its record"
    summary = read_summary(pytester, "fake")  # written, and says why the run is incomplete
    assert summary["complete"] is False and summary["incomplete_reason"] == stop
    asked = [re.search(r"system (q-\d)", text)[1] for text in sent_texts(server)]
    for item in asked:  # every paid answer is kept: in the run's records, or in a cassette
        assert item in done or (folder / f"{item}.yaml").is_file(), item
    if args == ("--eval-concurrency", "1"):
        assert asked == ["q-0", "q-1", "q-2"], "nothing was asked after the failed save"
        assert sorted(done) == ["q-0", "q-1", "q-2"]


# ---------------------------------------------------------------------------------------------
# (7) refresh: re-record what changed, and advice that records each kind of miss
# ---------------------------------------------------------------------------------------------


def test_refresh_records_only_the_items_that_changed_and_keeps_the_other_cassettes_bytes(server, tmp_path) -> None:
    recorder = client(tmp_path, "once", server.openai_base)
    for item in ("q-1", "q-2"):
        assert recorder.complete(ask(f"question {item}", item)).error is None
    kept = path_of(tmp_path, "q-2").read_bytes()
    server.reply_text = "FALSE"
    # a replay: the changed request of q-1 is a miss
    assert client(tmp_path, "none", server.openai_base).complete(ask("question q-1, reworded")).error.startswith(MISS)
    refresh = client(tmp_path, "refresh", server.openai_base)
    assert refresh.complete(ask("question q-1, reworded")).text == "FALSE"
    assert refresh.complete(ask("question q-2", "q-2")).text == "TRUE"
    assert sent_texts(server)[2:] == ["question q-1, reworded"], "only the changed item was asked"
    # issue 39: the earlier request's answer stays beside the new one (going back replays it)
    assert answers_in(path_of(tmp_path)) == ["TRUE", "FALSE"], "the cassette keeps every request's answer"
    assert path_of(tmp_path, "q-2").read_bytes() == kept
    replay = client(tmp_path, "none", CLOSED_PORT_URL)
    asked = (ask("question q-1, reworded"), ask("question q-2", "q-2"), ask("question q-1"))
    assert [replay.complete(r).text for r in asked] == ["FALSE", "TRUE", "TRUE"]


def _only_a_500(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    data["interactions"][0]["response"]["status"] = {"code": 500, "message": "Internal Server Error"}
    path.write_text(yaml.safe_dump(data))


def _cut_in_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("damage", [_only_a_500, _cut_in_half], ids=["non-2xx-only", "unreadable"])
def test_refresh_records_a_cassette_with_no_usable_answer(server, tmp_path, damage) -> None:
    client(tmp_path, "once", server.openai_base).complete(ask("question"))
    damage(path_of(tmp_path))
    miss = client(tmp_path, "none", CLOSED_PORT_URL).complete(ask("question")).error
    assert miss.startswith(MISS) and cassettes.rerecord_mode([miss]) == "refresh"
    server.reply_text = "FALSE"
    assert client(tmp_path, "refresh", server.openai_base).complete(ask("question")).text == "FALSE"
    assert answers_in(path_of(tmp_path)) == ["FALSE"]
    assert client(tmp_path, "none", CLOSED_PORT_URL).complete(ask("question")).text == "FALSE"


def test_refresh_of_a_dialogue_keeps_the_turns_that_match_and_records_the_rest(server, tmp_path) -> None:
    def dialogue(model: CassetteClient, second: str) -> list[str]:
        history: tuple[dict, ...] = ()
        texts = []
        with model.conversation(SUITE, "dlg-1"):
            for text in ("turn 1", second, "turn 3"):
                request = Request(
                    item_id="dlg-1", cassette_folder=SUITE, messages=(*history, {"role": "user", "content": text})
                )
                completion = model.complete(request)
                texts.append(completion.text)
                history = (*request.messages, {"role": "assistant", "content": completion.text})
        return texts

    assert dialogue(client(tmp_path, "once", server.openai_base), "turn 2") == ["TRUE"] * 3
    server.reply_text = "FALSE"
    assert dialogue(client(tmp_path, "refresh", server.openai_base), "turn 2, reworded") == ["TRUE", "FALSE", "FALSE"]
    assert sent_texts(server)[3:] == ["turn 2, reworded", "turn 3"]
    # issue 39: the earlier wording's turns stay beside the new ones, and still replay
    assert answers_in(path_of(tmp_path, "dlg-1")) == ["TRUE", "TRUE", "TRUE", "FALSE", "FALSE"]
    assert dialogue(client(tmp_path, "none", CLOSED_PORT_URL), "turn 2, reworded") == ["TRUE", "FALSE", "FALSE"]
    assert dialogue(client(tmp_path, "none", CLOSED_PORT_URL), "turn 2") == ["TRUE"] * 3


def test_the_advice_names_once_for_missing_files_and_refresh_for_everything_else() -> None:
    no_file = f"{MISS} for item 'q-1': no cassette file: /c/q-1.yaml"
    changed = f"{MISS} for item 'q-2': the cassette has no matching request (differs in: body): /c/q-2.yaml"
    unreadable = f"{MISS} for item 'q-3': unreadable cassette (empty file): /c/q-3.yaml; --eval-record-mode=refresh records it anew"
    assert cassettes.rerecord_mode([no_file, "provider error: HTTP 500"]) == "once"
    assert cassettes.rerecord_mode([no_file, changed]) == cassettes.rerecord_mode([unreadable]) == "refresh"


@pytest.mark.slow
def test_whole_run_after_a_prompt_change_the_printed_command_records_exactly_the_changed_items(
    pytester, server
) -> None:
    add_eval_module(pytester)
    bank(pytester)
    assert (
        pytester.runpytest_subprocess(*eval_args(pytester, server.openai_base, "--eval-record-mode", "once")).ret == 0
    )
    folder = pytester.path / "cassettes" / "fake" / SUITE
    before = {path.name: path.read_bytes() for path in folder.glob("*.yaml")}
    assert len(before) == 6

    bank(pytester, changed=("q-1", "q-4"))
    server.clear()
    replay = pytester.runpytest_subprocess(*eval_args(pytester, CLOSED_PORT_URL, "-p", "no:randomly"))
    out = replay.stdout.str()
    assert replay.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "CASSETTE MISSES: 2 items" in out and "--eval-record-mode=refresh" in out, out

    command = printed_command(out)
    assert command[-1] == "--eval-record-mode=refresh"
    models = pytester.path / "models.yaml"  # the same command, with the provider up again
    models.write_text(fake_models(server.openai_base))
    rerecorded = pytester.runpytest_subprocess(*command)
    assert rerecorded.ret == 0, rerecorded.stdout.str()
    assert sorted(re.search(r"system (q-\d)", text)[1] for text in sent_texts(server)) == ["q-1", "q-4"]
    after = {path.name: path.read_bytes() for path in folder.glob("*.yaml")}
    assert {name for name in after if after[name] != before[name]} == {"q-1.yaml", "q-4.yaml"}
    # the earlier prompt's interaction stays beside the new one (issue 39)
    assert all(len(yaml.safe_load(after[name])["interactions"]) == 2 for name in ("q-1.yaml", "q-4.yaml"))

    server.close()
    again = pytester.runpytest_subprocess(*eval_args(pytester, CLOSED_PORT_URL))
    assert again.ret == 0, again.stdout.str()
    assert "CASSETTE MISSES" not in again.stdout.str()
    # the changed bank is another dataset: its runs have a folder of their own
    summary = json.loads(
        (cases_run(pytester.path / "results", "fake", pytester.path / "bank.jsonl") / "summary.json").read_text()
    )
    assert summary["errors_by_kind"] == {"cassette_miss": 0, "provider": 0, "harness": 0}


@pytest.mark.slow
def test_whole_run_missing_cassettes_are_still_recorded_with_once(pytester, server) -> None:
    add_eval_module(pytester)
    bank(pytester)
    replay = pytester.runpytest_subprocess(*eval_args(pytester, server.openai_base, "--eval-record-mode", "none"))
    assert printed_command(replay.stdout.str())[-1] == "--eval-record-mode=once"


@pytest.mark.slow
def test_whole_run_dialectic_refresh_records_the_changed_case_only(pytester, server) -> None:
    from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file, run

    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED, "b2": STRUCTURED})
    args = ("--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "1")
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    assert run(pytester, server, cases, *args).ret == 0
    files = {path: path.read_bytes() for path in (pytester.path / "cassettes").rglob("*.yaml")}
    unchanged = {path: data for path, data in files.items() if path.name.startswith("a__")}
    assert len(files) == 6 and len(unchanged) == 3  # a response, a judgement and a resolution turn per case

    # case b is asked in other words
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b2", "dialectic"))
    cases.write_text(cases.read_text().replace("id: b2", "id: b"))
    server.clear()
    replay = run(pytester, server, cases, *args, "--eval-record-mode", "none")
    out = replay.stdout.str()
    assert "CASSETTE MISSES" in out and printed_command(out)[-1] == "--eval-record-mode=refresh", out
    assert server.requests == []

    refreshed = run(pytester, server, cases, *args, "--eval-record-mode", "refresh")
    assert refreshed.ret == 0, refreshed.stdout.str()
    assert server.requests and all("about a?" not in json.dumps(r["body"]) for r in server.requests), "case a replayed"
    assert {path: path.read_bytes() for path in unchanged} == unchanged
    assert all(path.read_bytes() != data for path, data in files.items() if path not in unchanged), "b's were refreshed"
    server.clear()
    again = run(pytester, server, cases, *args, "--eval-record-mode", "none")
    assert again.ret == 0 and "CASSETTE MISSES" not in again.stdout.str(), again.stdout.str()
    assert server.requests == []


# ---------------------------------------------------------------------------------------------
# (L1) temp files of killed runs
# ---------------------------------------------------------------------------------------------


def test_a_recording_removes_the_temp_files_killed_runs_left_and_keeps_live_ones(server, tmp_path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    folder = path_of(tmp_path).parent
    folder.mkdir(parents=True)
    stale = folder / f"q-9.yaml.{dead}.0a1b2c3d.tmp"
    live = folder / f"q-8.yaml.{os.getppid()}.0a1b2c3d.tmp"  # a running process's save in progress
    other = folder / "notes.tmp"
    for path in (stale, live, other):
        path.write_text("half a cassette")
    assert client(tmp_path, "once", server.openai_base).complete(ask("question")).error is None
    assert sorted(p.name for p in folder.iterdir()) == sorted(["q-1.yaml", live.name, other.name])


# ---------------------------------------------------------------------------------------------
# (L2) the index and an edit in place
# ---------------------------------------------------------------------------------------------


def test_the_index_sees_an_edit_in_place_that_keeps_size_and_mtime(server, tmp_path) -> None:
    client(tmp_path, "once", server.openai_base).complete(ask("question"))
    path = path_of(tmp_path)
    (tmp_path / "cache").mkdir()
    index = CassetteIndex(tmp_path / "cache")
    assert (index.hits, index.parsed) == (0, 0)
    assert client(tmp_path, "none", CLOSED_PORT_URL, index).complete(ask("question")).text == "TRUE"
    assert (index.hits, index.parsed) == (0, 1)
    index.close()
    before = os.stat(path)
    with open(path, "r+b") as handle:  # the same inode, the same size
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b'"TRUE"}', b'"NOPE"}'))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    index = CassetteIndex(tmp_path / "cache")
    assert client(tmp_path, "none", CLOSED_PORT_URL, index).complete(ask("question")).text == "NOPE"
    assert (index.hits, index.parsed) == (0, 1)
    index.close()
    index = CassetteIndex(tmp_path / "cache")  # and the warm run after it reads the row, not the file
    assert client(tmp_path, "none", CLOSED_PORT_URL, index).complete(ask("question")).text == "NOPE"
    assert (index.hits, index.parsed) == (1, 0)


# ---------------------------------------------------------------------------------------------
# (L4) cassettes that are not regular files, or too large
# ---------------------------------------------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _too_large(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: no disk is used


def _in_time(call, seconds: float = 20.0):
    """call() in a daemon thread: a hang fails the test instead of blocking it."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"still running after {seconds} s"
    return result[0]


@pytest.mark.parametrize(
    ("plant", "reason"),
    [(_fifo, "not a regular file"), (_dev_zero, "not a regular file"), (_too_large, "larger than 64 MiB")],
    ids=["fifo", "dev-zero", "too-large"],
)
@pytest.mark.parametrize("indexed", [False, True], ids=["file", "index"])
def test_a_cassette_that_is_not_a_small_regular_file_is_unreadable_without_a_hang(
    tmp_path, plant, reason, indexed
) -> None:
    path = path_of(tmp_path)
    path.parent.mkdir(parents=True)
    plant(path)
    (tmp_path / "cache").mkdir()
    index = CassetteIndex(tmp_path / "cache") if indexed else None
    error = _in_time(lambda: client(tmp_path, "none", CLOSED_PORT_URL, index).complete(ask("question")).error)
    assert (
        error
        == f"{MISS} for item 'q-1': unreadable cassette ({reason}): {path}; --eval-record-mode=refresh records it anew"
    )


def test_the_warmer_skips_a_fifo_and_a_link_to_dev_zero(tmp_path, server) -> None:
    client(tmp_path, "once", server.openai_base).complete(ask("question"))
    fifo, zero = path_of(tmp_path, "q-2"), path_of(tmp_path, "q-3")
    _fifo(fifo)
    _dev_zero(zero)
    (tmp_path / "cache").mkdir()
    assert _in_time(lambda: warm(tmp_path / "cache", "openai", [str(fifo), str(zero), str(path_of(tmp_path))])) == 1
    with pytest.raises(cassettes.UnreadableCassette, match="not a regular file"):
        read_cassette(fifo, None, None)
    assert cassette_index._read(zero) is None


# ---------------------------------------------------------------------------------------------
# (a) dialectic: a judge's or a resolution turn's cassette miss is counted and told how to record
# ---------------------------------------------------------------------------------------------


def _delete(path: Path) -> None:
    path.unlink()


def _ask_other_words(path: Path) -> None:
    """The recorded request no longer matches (what a changed judge or resolution prompt does)."""
    data = yaml.safe_load(path.read_text())
    request = data["interactions"][0]["request"]
    request["body"] = request["body"].replace("What should I do about b?", "What should I do about b, now?")
    path.write_text(yaml.safe_dump(data))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "damage", "mode", "missed"),
    [
        ("dialectic-judge", _delete, "once", "1 judge call has"),
        ("dialectic-judge", _ask_other_words, "refresh", "1 judge call has"),
        # turn 1's judge misses: the conversation goes on to a follow-up that was never recorded, and a
        # reply that was not answered ends it (no judge is asked about it)
        ("dialectic-resolution", _ask_other_words, "refresh", "2 resolution calls have"),
    ],
    ids=["judge-missing", "judge-changed", "resolution-changed"],
)
def test_whole_run_dialectic_judge_and_resolution_misses_print_the_record_command(
    pytester, server, folder, damage, mode, missed
) -> None:
    from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file, run

    server.responder = Scripted({"a": STRUCTURED, "b": STRUCTURED})
    args = ("--model", "fake", "--eval-variant", "dialectic", "--eval-n-judges", "1")
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"), ("b", "dialectic"))
    assert run(pytester, server, cases, *args).ret == 0
    (damaged,) = (pytester.path / "cassettes" / "fake" / folder).glob("b__*.yaml")
    damage(damaged)
    kept = {path: path.read_bytes() for path in (pytester.path / "cassettes").rglob("*.yaml") if path != damaged}

    server.clear()
    replay = run(pytester, server, cases, *args, "--eval-record-mode", "none")
    out = replay.stdout.str()
    assert "judge call failed: cassette miss" in out and server.requests == [], out
    # a judge that judged nothing is no pass
    assert replay.ret == 1 and "gate dialectic-judge-failed-calls: FAILED" in out, out
    assert f"CASSETTE MISSES: {missed} no matching cassette" in out, out
    command = printed_command(out)
    assert command[-1] == f"--eval-record-mode={mode}"

    recorded = pytester.runpytest_subprocess(*command)
    assert recorded.ret == 0, recorded.stdout.str()
    assert len(server.requests) == 1, "only the call that missed was asked"
    assert {path: path.read_bytes() for path in kept} == kept, "every other cassette is kept as it was"

    server.clear()
    again = run(pytester, server, cases, *args, "--eval-record-mode", "none")
    assert again.ret == 0 and "CASSETTE MISSES" not in again.stdout.str(), again.stdout.str()
    assert server.requests == []


# ---------------------------------------------------------------------------------------------
# (b) a session that runs no eval item changes no run directory and leaves no new folder
# ---------------------------------------------------------------------------------------------


def oracle_args(pytester, *args: str) -> list[str]:
    add_eval_module(pytester)
    bank(pytester)
    return ["--model", "oracle", "--eval-cases", str(pytester.path / "bank.jsonl"), "-p", "no:cacheprovider", *args]


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under `folder` (the lock's name aside) with the bytes of the files."""
    return {
        str(path.relative_to(folder)): (path.read_bytes() if path.is_file() else None)
        for path in sorted(folder.rglob("*"))
        if path.name != ".lock"
    }


@pytest.mark.parametrize(
    ("selection", "subset"),
    [(("--collect-only",), False), (("-k", "no-such-item"), True)],
    ids=["collect-only", "k-nothing"],
)
def test_a_session_that_asks_nothing_keeps_the_budget_marker_and_every_file(pytester, selection, subset) -> None:
    earlier = ("-k", "q-1") if subset else ()
    assert pytester.runpytest(*oracle_args(pytester, *earlier)).ret == 0
    folder = run_dir(pytester, "oracle", subset=subset)
    (folder / "checkpoints").mkdir(exist_ok=True)
    # the earlier run spent its budget
    (pytester.path / "results" / ".eval-budget-spent-0123456789abcdef").write_text("")
    before = tree(pytester.path / "results")
    result = pytester.runpytest(*oracle_args(pytester, *selection, "--eval-max-cost", "1"))
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), result.stdout.str()
    assert tree(pytester.path / "results") == before


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_budget_spent_by_an_earlier_run_does_not_stop_the_next_one(pytester, workers) -> None:
    results = pytester.path / "results"
    results.mkdir()
    earlier = results / ".eval-budget-spent-0123456789abcdef"  # left by an earlier run that spent its budget
    earlier.write_text("")
    result = pytester.runpytest_subprocess(*oracle_args(pytester, "--eval-max-cost", "1", "-n", workers))
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=6)
    assert read_summary(pytester, "oracle")["not_asked"]["count"] == 0
    assert list(results.glob(".eval-budget-spent-*")) == [earlier], "this run's budget is not spent"


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("budget", [(), ("--eval-max-cost", "1")], ids=["", "max-cost"])
def test_k_matching_no_item_leaves_no_new_folder(pytester, workers, budget) -> None:
    result = pytester.runpytest_subprocess(*oracle_args(pytester, "-k", "no-such-item", "-n", workers, *budget))
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert not (pytester.path / "results").exists()

    assert pytester.runpytest_subprocess(*oracle_args(pytester)).ret == 0  # beside a full run: no -subset folder
    before = tree(pytester.path / "results")
    result = pytester.runpytest_subprocess(*oracle_args(pytester, "-k", "no-such-item", "-n", workers, *budget))
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert tree(pytester.path / "results") == before


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_k_matching_no_dialectic_item_leaves_no_new_folder(pytester, server, workers) -> None:
    from integration.test_dialectic_run import cases_file, run

    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    result = run(
        pytester, server, cases, "--model", "fake", "--eval-n-judges", "1", "-k", "no-such-item", "-n", workers
    )
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert not (pytester.path / "results").exists() and server.requests == []


def test_the_last_process_of_a_run_that_wrote_nothing_removes_the_folders_it_made(tmp_path) -> None:
    (tmp_path / "kept").mkdir()  # an output folder that existed before the run stays, even empty
    for out, gone in ((tmp_path / "new" / "results", tmp_path / "new"), (tmp_path / "kept", tmp_path / "kept" / "run")):
        first = results.RunDirLock(out / "run", 4242, "pytest")  # what was new when the run started
        assert first.try_hold()
        # a later worker is told
        second = results.RunDirLock(out / "run", 4242, "pytest", new_folders=first.new_folders)
        assert second.try_hold()
        first.release()  # not the last: the run still holds its folder
        assert (out / "run" / ".lock").is_file()
        second.release()
        assert not gone.exists() and tmp_path.is_dir()
    assert (tmp_path / "kept").is_dir()


# ---------------------------------------------------------------------------------------------
# (c) a team's own questions asked with the shipped prompt (written for dynamical systems)
# ---------------------------------------------------------------------------------------------

SHIPPED_PROMPT_NOTICE = "NOTE: these questions are not the ChaosBench bank (families: billing, refunds)"


def own_bank(pytester) -> Path:
    items = [question(f"q-{i}", "TRUE", family=("billing", "refunds")[i % 2], split="core") for i in range(4)]
    return write_jsonl(pytester.path / "own.jsonl", items)


def manifest_prompt(pytester) -> dict:
    """The last run's (each bank has a run directory of its own)."""
    last = max((pytester.path / "results").glob("oracle_zeroshot*"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads((last / "run_manifest.json").read_text())["prompt"]


def test_own_questions_with_the_shipped_prompt_get_a_notice_and_a_manifest_flag(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--model", "oracle", "--eval-cases", str(own_bank(pytester)), "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert out.count(SHIPPED_PROMPT_NOTICE) == 1, out
    notice = (
        f"{SHIPPED_PROMPT_NOTICE} but are asked with the shipped zeroshot prompt, which says they are about "
        "dynamical systems; give your own prompt with --eval-prompts (ini eval_prompts)"
    )
    result.stdout.fnmatch_lines([notice])
    assert manifest_prompt(pytester)["shipped_default"] is True


def test_own_questions_with_their_own_prompt_and_the_bank_with_the_shipped_one_get_no_notice(pytester) -> None:
    add_eval_module(pytester)
    prompts = pytester.path / "prompts"
    prompts.mkdir()
    (prompts / "zeroshot.txt").write_text("Answer TRUE or FALSE about our billing.\n\n{question}\n")
    args = ("--model", "oracle", "-p", "no:cacheprovider")
    result = pytester.runpytest(*args, "--eval-cases", str(own_bank(pytester)), "--eval-prompts", str(prompts))
    assert result.ret == 0 and "NOTE: these questions" not in result.stdout.str(), result.stdout.str()
    assert manifest_prompt(pytester)["shipped_default"] is False

    bank(pytester)  # ChaosBench families: the shipped prompt is the right one
    result = pytester.runpytest(*args, "--eval-cases", str(pytester.path / "bank.jsonl"))
    assert result.ret == 0 and "NOTE: these questions" not in result.stdout.str(), result.stdout.str()
    assert manifest_prompt(pytester)["shipped_default"] is True
