"""The cassette index (cassette_index.py): a replay reads each cassette's parsed content from
.pytest_cache while the file is unchanged, and the file again as soon as it changes."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3

import pytest
from fakeprovider import FakeProvider
from helpers import add_eval_module, answer_by_text, fake_model_args, fake_models, question, the_run, write_jsonl

from pytest_reasoning_evals import index_warmer
from pytest_reasoning_evals.cassette_index import FILE_NAME
from pytest_reasoning_evals.cassettes import first_replay
from pytest_reasoning_evals.providers.wire import WIRE_FORMATS

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]


# --- in a run: the index is used, and the files stay the source of truth ---


def record_then_replay_args(pytester, server: FakeProvider, cases: str, mode: str) -> list[str]:
    args = fake_model_args(pytester, fake_models(server.openai_base), cases)
    return ["test_chaosbench.py", *args, "--eval-out-dir", str(pytester.path / "results"), "--eval-record-mode", mode]


def labels(pytester) -> dict[str, str]:
    lines = (the_run(pytester.path / "results", "fake") / "completions.jsonl").read_text().splitlines()
    return {r["id"]: r["label"] for r in map(json.loads, lines)}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_replay_reads_the_index_until_a_cassette_changes(pytester, fake_key, workers) -> None:
    add_eval_module(pytester)
    cases = str(write_jsonl(pytester.path / "bank.jsonl", [question(f"q-{i}", "TRUE") for i in range(12)]))
    with FakeProvider() as server:
        server.responder = answer_by_text
        assert pytester.runpytest_subprocess(*record_then_replay_args(pytester, server, cases, "once")).ret == 0
        replay = record_then_replay_args(pytester, server, cases, "none")
    recorded = labels(pytester)
    index = pytester.path / ".pytest_cache" / "d" / "reasoning-evals" / FILE_NAME
    assert pytester.runpytest_subprocess(*replay, "-n", workers).ret == 0
    assert labels(pytester) == recorded
    db = sqlite3.connect(index)
    assert db.execute("SELECT count(*) FROM cassettes").fetchone() == (12,)
    # Plant another answer in the index row of q-3 (the file unchanged): the next replay reads it,
    # which shows that the index, not the file, was read ...
    path = str(pytester.path / "cassettes" / "fake" / "bank-zeroshot" / "q-3.yaml")
    parsed, wire = db.execute("SELECT parsed, wire FROM cassettes WHERE path = ?", (path,)).fetchone()
    requests_, responses, _ = marshal.loads(parsed)
    flipped = "FALSE" if recorded["q-3"] == "TRUE" else "TRUE"
    body = responses[0]["body"]
    body["string"] = body["string"].replace(
        f'"content": "{recorded["q-3"]}"'.encode(), f'"content": "{flipped}"'.encode()
    )
    planted = (requests_, responses, first_replay(requests_, responses, WIRE_FORMATS[wire][1]))
    db.execute("UPDATE cassettes SET parsed = ? WHERE path = ?", (marshal.dumps(planted), path))
    db.commit()
    db.close()
    assert pytester.runpytest_subprocess(*replay, "-n", workers).ret == 0
    assert labels(pytester) == {**recorded, "q-3": flipped}
    # ... a new mtime over the same bytes (a checkout) still finds the row, by the bytes' digest ...
    os.utime(path, ns=(1, 1))
    assert pytester.runpytest_subprocess(*replay, "-n", workers).ret == 0
    assert labels(pytester) == {**recorded, "q-3": flipped}
    # ... and once the file's bytes change, the file is read again.
    with open(path, "a") as handle:
        handle.write("# edited\n")
    assert pytester.runpytest_subprocess(*replay, "-n", workers).ret == 0
    assert labels(pytester) == recorded


@pytest.mark.parametrize("cache", [True, False])
def test_a_serial_replay_warms_the_index_with_its_items_cassettes_in_run_order(
    pytester, monkeypatch, fake_key, cache
) -> None:
    add_eval_module(pytester)
    ids = [f"q-{i}" for i in (3, 1, 2, 0)]  # run order is bank order, not id order
    cases = str(write_jsonl(pytester.path / "bank.jsonl", [question(i, "TRUE") for i in ids]))
    with FakeProvider() as server:
        server.responder = answer_by_text
        assert pytester.runpytest_subprocess(*record_then_replay_args(pytester, server, cases, "once")).ret == 0
        replay = record_then_replay_args(pytester, server, cases, "none")
    recorded = labels(pytester)
    (pytester.path / "results").rename(pytester.path / "recorded")
    started = []
    real_start = index_warmer.IndexWarmer.start.__func__

    def spy(cls, folder, wire, paths):
        started.append((folder, wire, paths, real_start(cls, folder, wire, paths)))
        return started[-1][3]

    monkeypatch.setattr(index_warmer, "WARM_FROM", 1)
    monkeypatch.setattr(index_warmer, "spare_cores", lambda: 1)
    monkeypatch.setattr(index_warmer.IndexWarmer, "start", classmethod(spy))
    result = pytester.runpytest(*replay, *([] if cache else ["-p", "no:cacheprovider"]))
    assert result.ret == 0 and labels(pytester) == recorded
    if not cache:
        assert started == []  # no index to warm
        return
    [(folder, wire, paths, warmer)] = started
    assert folder == pytester.path / ".pytest_cache" / "d" / "reasoning-evals" and wire == "openai"
    assert paths == [str(pytester.path / "cassettes" / "fake" / "bank-zeroshot" / f"{i}.yaml") for i in ids]
    assert warmer.process.poll() is not None and not warmer.paths_file.exists()  # ended with the session
