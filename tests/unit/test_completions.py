"""completions.py: the completions log ends sorted by id, live answers reach the file at once."""

from __future__ import annotations

import json

from pytest_reasoning_evals.completions import REPLAYED_BATCH, CompletionsLog


def test_the_completions_log_ends_sorted_by_id_with_the_resumed_and_the_appended_lines_whole(tmp_path) -> None:
    path = tmp_path / "run" / "completions.jsonl"
    log = CompletionsLog(path)
    log.start([{"id": "q-3", "text": "é resumed"}, {"id": "q-1", "text": "resumed"}])
    for record in ({"id": "q-4", "text": "a\nb"}, {"id": "q-0", "text": "first"}, {"id": "q-2", "text": "x" * 5000}):
        log.append(record)
    assert len(path.read_bytes().splitlines()) == 5  # every line on disk as it arrives
    log.finalize()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in lines] == ["q-0", "q-1", "q-2", "q-3", "q-4"]
    assert lines[2]["text"] == "x" * 5000 and lines[3]["text"] == "é resumed" and lines[4]["text"] == "a\nb"


def test_a_live_answer_reaches_the_file_at_once_and_replayed_ones_in_batches(tmp_path) -> None:
    """A kill must not lose a record whose call was paid for; one answered from a cassette costs
    nothing to answer again, so those are written in batches."""
    path = tmp_path / "completions.jsonl"
    log = CompletionsLog(path)
    on_disk = lambda: len(path.read_bytes().splitlines())  # noqa: E731 - what a SIGKILL now would leave
    log.append({"id": "r-0", "provider": "openai", "cassette_hit": True})
    assert on_disk() == 0
    log.append({"id": "l-0", "provider": "openai", "cassette_hit": False})  # paid for: written with what came before
    assert on_disk() == 2
    log.append({"id": "n-0", "provider": "local", "cassette_hit": None})  # no cassette at all: live
    assert on_disk() == 3
    log.append(
        {
            "id": "d-0",
            "kind": "dialogue",
            "turns": [{"provider": "openai", "cassette_hit": True}, {"provider": "openai", "cassette_hit": False}],
        }
    )
    assert on_disk() == 4
    for i in range(1, REPLAYED_BATCH + 2):  # a full batch and one more
        log.append({"id": f"r-{i}", "provider": "openai", "cassette_hit": True})
    assert on_disk() == 4 + REPLAYED_BATCH
    log.sync()
    assert on_disk() == 5 + REPLAYED_BATCH
