"""The cassette index (cassette_index.py): a replay reads each cassette's parsed content from
.pytest_cache while the file is unchanged, and the file again as soon as it changes."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
import yaml

from pytest_reasoning_evals import cassette_index, index_warmer
from pytest_reasoning_evals.budget import Budget
from pytest_reasoning_evals.cassette_index import FILE_NAME, CassetteIndex
from pytest_reasoning_evals.cassettes import UnreadableCassette, read_cassette
from pytest_reasoning_evals.index_warmer import IndexWarmer
from pytest_reasoning_evals.models import Models
from pytest_reasoning_evals.providers.http import HttpModel
from pytest_reasoning_evals.registry import ModelSpec

SPEC = ModelSpec(
    alias="fake", provider="openai", model_id="fake-model", api_key_env=None, base_url="http://127.0.0.1:9/v1"
)


def cassette(answer: str) -> dict:
    reply = {
        "id": "x",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    return {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "http://127.0.0.1:9/v1/chat/completions",
                    "body": '{"a": 1}',
                    "headers": {"Content-Type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "body": {"string": json.dumps(reply)},
                    "headers": {"content-type": ["application/json"]},
                },
            }
        ],
    }


class CountingParser:
    def __init__(self):
        self.calls = 0
        self.parse = HttpModel(SPEC).parse

    def __call__(self, path, data=None):
        self.calls += 1
        from vcr.serializers import yamlserializer

        return read_cassette(path, yamlserializer, self.parse, data)


def answer(parsed) -> str:
    return json.loads(parsed[1][0]["body"]["string"])["choices"][0]["message"]["content"]


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "cassettes" / "q-1.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(cassette("TRUE")))
    return path


def _many(folder, count: int) -> list:
    """`count` cassette files, each with its own answer (its index), in the order of their names."""
    paths = []
    for n in range(count):
        path = folder / f"q-{n:03d}.yaml"
        path.write_text(yaml.safe_dump(cassette(f"answer {n}")))
        paths.append(path)
    return paths


def _indexed(folder, paths: list) -> tuple[list, CountingParser]:
    """The files read once through an index in `folder` (an earlier run): (paths, their parser)."""
    parser = CountingParser()
    first = CassetteIndex(folder)
    for path in paths:
        first.read(path, "openai", parser)
    first.close()
    return paths, parser


def _statements(index: CassetteIndex) -> list[str]:
    """The SQL the index runs from now on."""
    statements: list[str] = []
    index._connect().set_trace_callback(statements.append)
    return statements


def test_a_later_run_reads_an_unchanged_file_from_the_index(tmp_path, file) -> None:
    parser = CountingParser()
    first = CassetteIndex(tmp_path)
    parsed = first.read(file, "openai", parser)
    first.close()
    later = CassetteIndex(tmp_path)  # a new process: only the SQLite file carries over
    again = later.read(file, "openai", parser)
    assert parser.calls == 1 and (later.hits, later.parsed) == (1, 0)
    assert again == parsed and again[0][0]["body"] == b'{"a": 1}'  # vcrpy's request dict, the body bytes
    assert answer(again) == "TRUE"


def test_a_changed_file_is_read_again_even_at_the_same_size_and_mtime(tmp_path, file) -> None:
    parser = CountingParser()
    index = CassetteIndex(tmp_path)
    index.read(file, "openai", parser)
    index.close()
    before = os.stat(file)
    # A save is a rename (a new inode); the same size and mtime must not hide the new content.
    replacement = file.with_suffix(".tmp")
    replacement.write_text(yaml.safe_dump(cassette("FAKE")))  # as long as "TRUE"
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, file)
    assert (os.stat(file).st_size, os.stat(file).st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert answer(CassetteIndex(tmp_path).read(file, "openai", parser)) == "FAKE" and parser.calls == 2
    # An edit in place: a new mtime.
    file.write_text(yaml.safe_dump(cassette("FALSE")))
    assert answer(CassetteIndex(tmp_path).read(file, "openai", parser)) == "FALSE" and parser.calls == 3


def test_a_checkout_of_the_same_bytes_is_read_from_the_index_by_their_digest(tmp_path, file, monkeypatch) -> None:
    """A fresh clone, or a CI job that restored .pytest_cache, has new mtimes and inodes for
    unchanged cassettes: the row is used when the bytes' digest is its own, and updated."""
    parser = CountingParser()
    index = CassetteIndex(tmp_path)
    index.read(file, "openai", parser)
    index.close()
    text = file.read_text()
    file.unlink()
    file.write_text(text)  # what a checkout does: the same bytes in a new file
    os.utime(file, ns=(10**18, 10**18))
    later = CassetteIndex(tmp_path)
    assert answer(later.read(file, "openai", parser)) == "TRUE" and parser.calls == 1 and later.hits == 1
    later.close()
    read = []
    real_read = cassette_index._read
    monkeypatch.setattr(cassette_index, "_read", lambda path: read.append(path) or real_read(path))
    assert answer(CassetteIndex(tmp_path).read(file, "openai", parser)) == "TRUE" and parser.calls == 1
    assert read == []  # the row's stat was brought up to date: matched on stat alone, the file not read
    file.write_text(text.replace("TRUE", "FAKE"))  # other bytes of the same size: parsed
    assert answer(CassetteIndex(tmp_path).read(file, "openai", parser)) == "FAKE" and parser.calls == 2


@pytest.mark.parametrize("order", ["in order", "random order"])
def test_rows_are_read_ahead_in_path_order_and_each_answer_is_its_own_file(tmp_path, file, order) -> None:
    paths, parser = _indexed(tmp_path, _many(file.parent, 60))
    if order == "random order":
        random.Random(7).shuffle(paths)
    later = CassetteIndex(tmp_path)
    statements = _statements(later)
    answers = [answer(later.read(path, "openai", parser)) for path in paths]
    assert answers == [f"answer {int(path.stem[2:])}" for path in paths]
    assert parser.calls == 60 and (later.hits, later.parsed) == (60, 0)
    queries = sum(s.startswith("SELECT") for s in statements)
    # in order, the read-ahead doubles (2, 4, 8, ... rows): a handful of queries for 60 files;
    # in random order it stays at one row ahead: about a query per file, never more
    assert queries <= 6 if order == "in order" else 30 < queries <= 60


def test_a_row_read_ahead_is_not_used_for_a_file_changed_since(tmp_path, file) -> None:
    paths, parser = _indexed(tmp_path, _many(file.parent, 4))
    later = CassetteIndex(tmp_path)
    later.read(paths[0], "openai", parser)
    later.read(paths[1], "openai", parser)  # read ahead with paths[0]'s row: the rows after it come with it
    paths[2].write_text(yaml.safe_dump(cassette("changed")))  # after its row was read ahead
    assert answer(later.read(paths[2], "openai", parser)) == "changed"
    assert answer(later.read(paths[3], "openai", parser)) == "answer 3"
    assert (later.hits, later.parsed) == (3, 1)


def test_the_wire_format_is_part_of_the_key(tmp_path, file) -> None:
    parser = CountingParser()
    index = CassetteIndex(tmp_path)
    index.read(file, "openai", parser)
    index.read(file, "anthropic", parser)  # another reader's checks: parsed for it too
    index.close()
    assert parser.calls == 2


def test_a_file_that_cannot_be_read_is_never_kept(tmp_path, file) -> None:
    file.write_text("interactions: [")
    parser = CountingParser()
    for _ in range(2):
        index = CassetteIndex(tmp_path)
        with pytest.raises(UnreadableCassette):
            index.read(file, "openai", parser)
        index.close()
    assert parser.calls == 2
    with pytest.raises(FileNotFoundError):
        CassetteIndex(tmp_path).read(file.with_name("gone.yaml"), "openai", parser)


def test_a_corrupt_index_only_costs_the_parse(tmp_path, file) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not a database" * 100)
    parser = CountingParser()
    index = CassetteIndex(tmp_path)
    assert answer(index.read(file, "openai", parser)) == "TRUE"
    index.close()
    assert parser.calls == 1


def test_rows_another_process_keeps_from_being_written_are_parsed_again_next_time(tmp_path, file, monkeypatch) -> None:
    monkeypatch.setattr(cassette_index, "WAIT_SECONDS", 0.2)
    monkeypatch.setattr(cassette_index, "CLOSE_WAIT_SECONDS", 0.2)
    other = file.with_name("q-2.yaml")
    other.write_text(file.read_text())
    parser = CountingParser()
    first = CassetteIndex(tmp_path)
    first.read(other, "openai", parser)
    first.close()
    holder = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another xdist worker writing, for longer than the index waits
    blocked = CassetteIndex(tmp_path)
    assert answer(blocked.read(file, "openai", parser)) == "TRUE"
    blocked.close()  # held past the last write's wait too: its row is dropped, silently
    holder.close()
    later = CassetteIndex(tmp_path)
    later.read(file, "openai", parser)
    later.read(other, "openai", parser)
    assert parser.calls == 3 and (later.hits, later.parsed) == (1, 1)


def test_rows_a_busy_file_kept_from_one_write_go_with_the_next(tmp_path, file, monkeypatch) -> None:
    """Under load another xdist worker may hold the file past WAIT_SECONDS: the rows wait for the
    next write instead of being parsed again next run."""
    monkeypatch.setattr(cassette_index, "WAIT_SECONDS", 0.2)
    seed, *others = [file.with_name(f"q-{i}.yaml") for i in range(2, 6)]
    for other in (seed, *others):
        other.write_text(file.read_text())
    first = CassetteIndex(tmp_path)
    first.read(seed, "openai", CountingParser())
    first.close()  # the table exists, with one row
    parser = CountingParser()
    index = CassetteIndex(tmp_path, batch=2)
    holder = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    index.read(file, "openai", parser)
    index.read(others[0], "openai", parser)  # the first write: the file is held
    holder.rollback()
    holder.close()
    index.read(others[1], "openai", parser)  # the second write takes the first's rows along
    db = sqlite3.connect(tmp_path / FILE_NAME)
    assert db.execute("SELECT count(*) FROM cassettes").fetchone() == (4,)
    index.read(others[2], "openai", parser)
    index.close()
    assert db.execute("SELECT count(*) FROM cassettes").fetchone() == (5,)
    db.close()


def test_the_last_write_waits_longer_for_a_busy_file(tmp_path, file, monkeypatch) -> None:
    monkeypatch.setattr(cassette_index, "WAIT_SECONDS", 0.1)
    seed = file.with_name("q-2.yaml")
    seed.write_text(file.read_text())
    first = CassetteIndex(tmp_path)
    first.read(seed, "openai", CountingParser())
    first.close()  # the table exists
    index = CassetteIndex(tmp_path)
    index.read(file, "openai", CountingParser())
    holder = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, holder.rollback).start()  # held five times WAIT_SECONDS, well within CLOSE_WAIT_SECONDS
    index.close()
    later = CassetteIndex(tmp_path)
    parser = CountingParser()
    later.read(file, "openai", parser)
    assert (parser.calls, later.hits) == (0, 1)
    later.close()
    holder.close()


OPENER = """
import sys, time
from pathlib import Path
from pytest_reasoning_evals.cassette_index import CassetteIndex
base, start = Path(sys.argv[1]), float(sys.argv[2])
refused = 0
for i in range(30):
    while time.time() < start + i * 0.05:  # both processes open the same new file at once
        pass
    index = CassetteIndex(base / str(i))
    refused += index._connect() is None
print(refused)
"""


def test_two_processes_opening_a_new_index_at_once_both_use_it(tmp_path) -> None:
    """Two xdist workers starting together: SQLite may refuse one at once while the other sets the
    file up (WAL, the table); it tries again instead of running without the index."""
    for i in range(30):
        (tmp_path / str(i)).mkdir()
    start = str(time.time() + 1)
    openers = [
        subprocess.Popen([sys.executable, "-c", OPENER, str(tmp_path), start], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    assert [opener.communicate(timeout=60)[0].strip() for opener in openers] == ["0", "0"]


def test_without_pytests_cache_there_is_no_index(tmp_path) -> None:
    no_cache = SimpleNamespace()  # -p no:cacheprovider
    assert Models(None, lambda: None, config=no_cache, budget=Budget(None, tmp_path)).cassette_index is None


def test_the_index_is_told_its_plan_and_its_warmer_by_the_models(tmp_path) -> None:
    def plan():
        return iter([("s", "q1")])

    config = SimpleNamespace(cache=SimpleNamespace(mkdir=lambda name: tmp_path / name))
    (tmp_path / "reasoning-evals").mkdir()
    index = Models(
        None, lambda: None, config=config, budget=Budget(None, tmp_path), planned_cassettes=plan
    ).cassette_index
    assert index.path.parent == tmp_path / "reasoning-evals"
    assert index.planned is plan and index.start_warmer == IndexWarmer.start


# --- a cold replay's cassettes parsed ahead on a spare core (index_warmer.py) ---


def test_the_warmer_puts_each_readable_file_into_the_index_and_skips_the_rest(tmp_path, file) -> None:
    broken = file.parent / "q-2.yaml"
    broken.write_text("interactions: [")
    paths = [str(file), str(file.parent / "missing.yaml"), str(broken)]
    assert index_warmer.warm(tmp_path, "openai", paths) == 1
    parser = CountingParser()
    later = CassetteIndex(tmp_path)
    assert answer(later.read(file, "openai", parser)) == "TRUE" and parser.calls == 0  # the warmer's row
    with pytest.raises(UnreadableCassette):
        later.read(broken, "openai", parser)  # never kept: its item reads (and reports) the file itself
    assert index_warmer.warm(tmp_path, "openai", paths) == 0  # rows already there are only looked up


def test_the_warmer_child_fills_the_index_and_removes_its_list(tmp_path, file, monkeypatch) -> None:
    monkeypatch.setattr(index_warmer, "WARM_FROM", 1)
    monkeypatch.setattr(index_warmer, "spare_cores", lambda: 1)
    warmer = index_warmer.IndexWarmer.start(tmp_path, "openai", [str(file)])
    assert warmer.process.wait(timeout=60) == 0 and not warmer.paths_file.exists()
    parser = CountingParser()
    assert answer(CassetteIndex(tmp_path).read(file, "openai", parser)) == "TRUE" and parser.calls == 0
    monkeypatch.setattr(index_warmer, "spare_cores", lambda: 0)
    assert index_warmer.IndexWarmer.start(tmp_path, "openai", [str(file)]) is None  # no core to spare: nothing starts


def test_a_cassette_with_windows_line_ends_reads_as_with_unix_ones(tmp_path, file) -> None:
    """One read serves the digest and the parse (bytes): line ends are translated as a text-mode
    read did, so a cassette saved with CRLF (an editor, git's autocrlf) replays the same."""
    crlf = file.with_name("q-crlf.yaml")
    crlf.write_bytes(file.read_bytes().replace(b"\n", b"\r\n"))
    parser = CountingParser()
    unix = parser(file)
    assert parser(crlf) == unix and CassetteIndex(tmp_path).read(crlf, "openai", parser) == unix


@pytest.mark.parametrize("limit, whole", [(1000, True), (30, False)])
def test_a_file_that_grows_while_it_is_read_is_read_whole_up_to_the_limit(tmp_path, monkeypatch, limit, whole) -> None:
    path = tmp_path / "grown.yaml"
    path.write_bytes(b"x" * 40)
    real_fstat = os.fstat
    # the stat taken at the open says 20 bytes; 40 are there when the bytes are read
    monkeypatch.setattr(
        cassette_index.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 20, *real_fstat(fd)[7:]))
    )
    monkeypatch.setattr(cassette_index, "MAX_BYTES", limit)
    if whole:
        assert cassette_index.read_bytes(path) == b"x" * 40
    else:
        with pytest.raises(cassette_index.NotACassetteFile, match="larger than"):
            cassette_index.read_bytes(path)


def test_a_process_that_found_the_index_empty_does_not_look_up_its_own_reads(tmp_path) -> None:
    # A cold run (no warmer of its own): the rows there will be are the ones its reads write.
    paths = _many(tmp_path, 5)
    index = CassetteIndex(tmp_path, batch=2)
    statements = _statements(index)
    parser = CountingParser()
    for path in paths:
        index.read(path, "openai", parser)
    assert parser.calls == 5 and not [s for s in statements if s.startswith("SELECT")]
    index.close()
    # The next run finds the rows.
    later = CassetteIndex(tmp_path)
    assert [answer(later.read(path, "openai", parser)) for path in paths] == [f"answer {n}" for n in range(5)]
    assert parser.calls == 5 and later.hits == 5
