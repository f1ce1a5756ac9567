"""completions.py: the completions log ends sorted by id, live answers reach the file at once; a record
of another shape is not used."""

from __future__ import annotations

import json

from pytest_reasoning_evals.completions import REPLAYED_BATCH, CompletionsLog, usable


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


def test_a_record_whose_cache_or_batch_fields_are_of_another_type_is_not_used() -> None:
    """They are summed into summary.json's cost_saved_usd: a hand-edited one is skipped (its item
    asked again), never a crash of the summary; absent, the record reads as before."""
    record = {
        "id": "q-1", "family": "atomic", "split": "core", "system_id": "s", "status": "correct", "correct": True,
        "error": None, "provider": "openai", "model": "m", "input_tokens": 12, "output_tokens": 3,
        "thinking_tokens": 0, "latency_ms": 0.0, "cost_usd": 0.5, "cassette": None, "cassette_hit": True,
        "label": "TRUE", "gold": "TRUE", "raw_text": "TRUE", "bias": None, "template": "t", "finish_reason": None,
        "predicates": [],
    }  # fmt: skip
    assert usable(record)
    assert usable(record | {"batch": True, "batch_saved_usd": 0.5, "cached_tokens": 6, "cache_saved_usd": 1e-6})
    for bad in ({"batch": "yes"}, {"batch_saved_usd": "0.5"}, {"cached_tokens": 1.5}, {"cache_saved_usd": None}):
        assert not usable(record | bad), bad
