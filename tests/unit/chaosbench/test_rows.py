"""chaosbench/rows.py: the records the controller keeps share their keys and repeated words."""

from __future__ import annotations

import json

import pytest

from pytest_reasoning_evals.chaosbench.rows import compact


def test_the_records_the_controller_keeps_share_their_keys_and_repeated_words() -> None:
    """Under xdist each record arrives as new strings; the compact ones kept share them."""
    record = {
        "id": "q1",
        "family": "atomic",
        "split": "core",
        "status": "wrong",
        "raw_text": "TRUE",
        "error": None,
        "predicates": [{"name": "chaotic", "polarity": True}],
        "turns": [{"status": "correct", "family": "atomic", "question": "Is it?", "predicates": []}],
    }
    first, second = (compact(json.loads(json.dumps(record))) for _ in range(2))
    assert first == {k: v for k, v in record.items() if k not in ("raw_text", "turns", "predicates")} | {
        "predicates": ({"name": "chaotic", "polarity": True},),
        "turns": [{"status": "correct", "family": "atomic", "predicates": ()}],
    }
    assert first["family"] is second["family"] and first["turns"][0]["status"] is second["turns"][0]["status"]
    assert first["predicates"][0]["name"] is second["predicates"][0]["name"]
    assert first.get("kind", "question") == "question" and "bias" not in first and "turns" in first
    with pytest.raises(KeyError):
        first["raw_text"]  # noqa: B018 - not kept: completions.jsonl has it
