"""progress.py: the progress line reads rate, time left, calls and budget."""

from __future__ import annotations

from pytest_reasoning_evals.progress import Progress, Tally


def test_the_line_reads_rate_time_left_calls_and_budget() -> None:
    now = [100.0]
    progress = Progress(None, 2.0, clock=lambda: now[0])
    for _ in range(30):
        now[0] += 0.5
        progress.add(Tally(live=2, errors=0, spent=0.01), total=120)
    progress.add(Tally(cassette=1, errors=1), total=120)
    assert progress.live and progress.done == 31
    assert progress.line(now[0]) == (
        "eval progress: 31/120 items (26%), 2.1/s, ETA 0m43s, calls 60 live / 1 cassette, 1 failed, $0.3000 of $2 spent"
    )
    replay = Progress(None, None, clock=lambda: now[0])
    replay.add(Tally(cassette=1), total=3)
    assert not replay.live  # a replay never shows the line
