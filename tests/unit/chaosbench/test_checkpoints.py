"""chaosbench/checkpoints.py: a checkpoint every 50 records, at most once a second."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints, ResumeError


def test_a_checkpoint_comes_every_50_records_but_at_most_once_a_second(tmp_path) -> None:
    clock = [100.0]
    points = Checkpoints(tmp_path, clock=lambda: clock[0])
    due = [n for n in range(1, 201) if points.record_added()]
    assert due == []  # 200 records within the same instant (a replay): no fsync yet
    clock[0] += 1.0
    assert [n for n in range(1, 50) if points.record_added()] == [1]  # 50 since the last one, and a second
    clock[0] += 0.5
    assert [n for n in range(1, 101) if points.record_added()] == []  # 100 more, within half a second
    clock[0] += 0.5
    assert [n for n in range(1, 51) if points.record_added()] == [1]  # the second has passed
    points, live = Checkpoints(tmp_path, clock=lambda: clock[0]), []
    for n in range(1, 101):  # live answers, 0.1 s apart: every 50 records
        clock[0] += 0.1
        if points.record_added():
            live.append(n)
    assert live == [50, 100]


CONFIG = {
    "model": {"alias": "fake", "provider": "openai", "model_id": "m-1", "base_url": "http://127.0.0.1:1/v1"},
    "mode": "zeroshot",
    "prompt_sha256": "a" * 64,
    "dataset_sha256": "b" * 64,
    "max_items": None,
    "seed": 42,
}


def test_a_run_directory_of_another_model_under_the_alias_is_refused_naming_both(tmp_path) -> None:
    points = Checkpoints(tmp_path)
    points.check_identity(CONFIG)  # nothing there yet
    points.write_config(CONFIG)
    # another port, seed or selection overwrites as before; another prompt or data is no objection
    # (issue 39: it has a run directory of its own, Settings.run_dir)
    points.check_identity({**CONFIG, "model": {**CONFIG["model"], "base_url": "http://127.0.0.1:2/v1"}, "seed": 1})
    points.check_identity({**CONFIG, "prompt_sha256": "c" * 64, "dataset_sha256": "d" * 64})
    with pytest.raises(ResumeError) as refused:
        points.check_identity({**CONFIG, "prompt_sha256": "c" * 64, "model": {**CONFIG["model"], "model_id": "m-2"}})
    message = str(refused.value)
    assert f"{tmp_path} holds the run of another configuration" in message
    assert "model: fake/openai/m-1 there, fake/openai/m-2 now" in message and "prompt_sha256" not in message
    assert "Move or delete that folder, or give another --eval-out-dir" in message


def test_a_config_file_that_cannot_be_read_is_no_objection(tmp_path) -> None:
    points = Checkpoints(tmp_path)
    points.folder.mkdir()
    points.config_file.write_text("{cut short")
    points.check_identity(CONFIG)
    points.config_file.write_text("[]")
    points.check_identity(CONFIG)
