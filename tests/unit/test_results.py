"""results.py: output files written whole through temp files, and the run directory's lock."""

from __future__ import annotations

import json
import threading

import pytest

from pytest_reasoning_evals import results
from pytest_reasoning_evals.completions import CompletionsLog
from pytest_reasoning_evals.results import write_csv, write_json


def test_concurrent_writers_of_one_output_file_never_share_a_temp_file(tmp_path) -> None:
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(150):
                write_json(tmp_path / "summary.json", {"writer": k, "i": i})
                write_csv(tmp_path / "table.csv", ["writer", "i"], [[k, i]])
                CompletionsLog(tmp_path / "completions.jsonl").finalize([{"id": f"{k}-{i}"}])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert set(json.loads((tmp_path / "summary.json").read_text())) == {"writer", "i"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["completions.jsonl", "summary.json", "table.csv"], (
        "no temp file left"
    )


def test_a_jsonl_output_cut_short_by_an_error_leaves_the_previous_file(tmp_path) -> None:
    # the dialectic per_response.jsonl and spotcheck_queue.jsonl are written this way
    target = tmp_path / "per_response.jsonl"
    results.write_lines(target, ['{"query_id": "old"}'])

    def rows():
        yield '{"query_id": "new-1"}'
        raise TypeError("a row that cannot be serialised")

    with pytest.raises(TypeError):
        results.write_lines(target, rows())
    assert target.read_text() == '{"query_id": "old"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["per_response.jsonl"], "no temp file left"


def test_the_lock_file_names_the_run_without_url_credentials(tmp_path) -> None:
    argv = ["/venv/bin/pytest", "evals", "--eval-base-url", "https://bob:sk-secret@api.example.com/v1"]
    lock = results.RunDirLock(tmp_path / "run", 4242, results.command_line(argv))
    assert lock.try_hold()
    try:
        held = json.loads((tmp_path / "run" / ".lock").read_text())
        busy = results.busy_holder(tmp_path / "run")
        (tmp_path / "run" / "summary.json").write_text("{}")  # a run that wrote something keeps its folder
    finally:
        lock.release()
    assert held["pid"] == 4242 and held["command"] == "pytest evals --eval-base-url https://***@api.example.com/v1"
    assert "sk-secret" not in busy and "pid 4242 on " in busy
    assert results.busy_holder(tmp_path / "run") is None and (tmp_path / "run" / ".lock").read_text() == ""
