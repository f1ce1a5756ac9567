"""chaosbench/checkpoints.py: a checkpoint every 50 records, at most once a second."""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints


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
