"""batch.json (plugin/batch/ledger.py): recorded at once, read back by a rerun, written atomically."""

import json
import os

import pytest

from pytest_reasoning_evals.batch import LEDGER_FILE, BatchError, BatchHandle, BatchLedger


def handle(batch_id="batch_1", provider="openai", ids=("a", "b")):
    return BatchHandle(provider, batch_id, ids, "2026-01-01T00:00:00+00:00", "file-1" if provider == "openai" else None)


def test_an_empty_folder_has_nothing_pending(tmp_path):
    assert BatchLedger(tmp_path / "not-yet").pending() == []


def test_record_then_a_new_ledger_finds_the_batch(tmp_path):
    BatchLedger(tmp_path / "run").record(handle())
    assert BatchLedger(tmp_path / "run").pending() == [handle()]
    data = json.loads((tmp_path / "run" / LEDGER_FILE).read_text())
    assert data == {
        "version": 1,
        "batches": [
            {
                "provider": "openai",
                "batch_id": "batch_1",
                "custom_ids": ["a", "b"],
                "created": "2026-01-01T00:00:00+00:00",
                "input_file_id": "file-1",
                "model": None,
            }
        ],
    }


def test_a_ledger_written_before_models_were_recorded_reads_with_no_model(tmp_path):
    BatchLedger(tmp_path).record(handle())
    data = json.loads((tmp_path / LEDGER_FILE).read_text())
    del data["batches"][0]["model"]
    (tmp_path / LEDGER_FILE).write_text(json.dumps(data))
    assert BatchLedger(tmp_path).pending() == [handle()]
    data["batches"][0]["model"] = 3
    (tmp_path / LEDGER_FILE).write_text(json.dumps(data))
    with pytest.raises(BatchError, match="model are strings"):
        BatchLedger(tmp_path).pending()


def test_batches_are_kept_in_order_recorded_once_and_forgotten_one_by_one(tmp_path):
    ledger = BatchLedger(tmp_path)
    first, second = handle("batch_1"), handle("msgbatch_2", "anthropic", ("c",))
    ledger.record(first)
    ledger.record(second)
    ledger.record(first)  # again: still once, now last
    assert ledger.pending() == [second, first]
    ledger.forget(second)
    assert ledger.pending() == [first]
    ledger.forget(second)  # already gone: nothing changes
    assert ledger.pending() == [first]


def test_a_write_goes_through_a_temp_file_and_a_rename(tmp_path, monkeypatch):
    ledger = BatchLedger(tmp_path)
    ledger.record(handle("batch_1"))
    renames = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((str(a), str(b))), real(a, b)))
    ledger.record(handle("batch_2"))
    assert len(renames) == 1 and renames[0][1] == str(tmp_path / LEDGER_FILE) and renames[0][0].endswith(".tmp")


def test_a_kill_during_a_write_keeps_the_last_whole_file(tmp_path, monkeypatch):
    ledger = BatchLedger(tmp_path)
    ledger.record(handle("batch_1"))

    def killed(a, b):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ledger.record(handle("batch_2"))
    monkeypatch.undo()
    assert ledger.pending() == [handle("batch_1")]
    assert [p.name for p in tmp_path.iterdir()] == [LEDGER_FILE]  # no temp file left


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        '{"version": 2, "batches": []}',
        '{"version": 1, "batches": [{"provider": "openai"}]}',
        '{"version": 1, "batches": [{"provider": "openai", "batch_id": 1, "custom_ids": [], "created": "x"}]}',
    ],
)
def test_a_damaged_ledger_is_an_error_not_an_empty_one(tmp_path, text):
    (tmp_path / LEDGER_FILE).write_text(text)
    with pytest.raises(BatchError, match="is not a batch ledger"):
        BatchLedger(tmp_path).pending()
