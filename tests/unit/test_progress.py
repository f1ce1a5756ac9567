"""progress.py: the progress line reads rate, time left, calls and budget (from the spend ledger)."""

from __future__ import annotations

from pytest_reasoning_evals.progress import Progress
from pytest_reasoning_evals.spend import SpendLedger


def calls(live: int = 0, cassette: int = 0, errors: int = 0, spent: float = 0.0) -> dict:
    return {"live": live, "cassette": cassette, "errors": errors, "spent": spent}


def test_the_line_reads_rate_time_left_calls_and_budget() -> None:
    now = [100.0]
    ledger = SpendLedger()
    progress = Progress(None, 2.0, ledger, clock=lambda: now[0])
    for _ in range(30):
        now[0] += 0.5
        ledger.add_item("chaosbench", calls(live=2, spent=0.01), answered=True)
        progress.add(total=120)
    ledger.add_item("chaosbench", calls(cassette=1, errors=1), answered=True)
    progress.add(total=120)
    assert progress.live and progress.done == 31
    assert progress.line(now[0]) == (
        "eval progress: 31/120 items (26%), 2.1/s, ETA 0m43s, calls 60 live / 1 cassette, 1 failed, $0.3000 of $2 spent"
    )
    ledger.claim({"m": 0.05})  # calls made ahead for items that never ran: the last line says them too
    assert progress.line(now[0]).endswith("$0.3500 of $2 spent")
    replay_ledger = SpendLedger()
    replay = Progress(None, None, replay_ledger, clock=lambda: now[0])
    replay_ledger.add_item("chaosbench", calls(cassette=1), answered=True)
    replay.add(total=3)
    assert not replay.live  # a replay never shows the line
