"""spend.py: each call is recorded once, where it returns; the controller's ledger answers what the
run, each protocol's items (with a record or not) and the calls made ahead paid."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.providers.base import CallOutcome, Completion
from pytest_reasoning_evals.spend import SpendLedger, no_calls


def completion(hit: bool | None, cost: float, error: str | None = None) -> Completion:
    return Completion(provider="p", model="m", text="", cost_usd=cost, error=error, outcome=CallOutcome(hit=hit))


def test_a_process_pays_its_live_calls_and_counts_every_call_on_its_item() -> None:
    ledger = SpendLedger()
    item = no_calls()
    ledger.paid(completion(True, 0.5), item)  # replayed: a call, not paid
    ledger.paid(completion(False, 0.25), item)
    ledger.paid(completion(False, 0.125, error="HTTP 500"), item)
    ledger.paid(completion(False, 1.0), None)  # no item runs (a session-scoped call): this process paid it
    assert ledger.process == pytest.approx(1.375)
    assert item == {"live": 2, "cassette": 1, "errors": 1, "spent": pytest.approx(0.375)}


def test_the_run_is_its_items_and_the_calls_made_ahead_each_once() -> None:
    ledger = SpendLedger()
    ledger.add_item("chaosbench", {"live": 1, "cassette": 2, "errors": 0, "spent": 0.5}, answered=True)
    ledger.add_item("chaosbench", {"live": 1, "cassette": 0, "errors": 1, "spent": 0.25}, answered=False)
    ledger.add_item("dialectic", {"live": 3, "cassette": 0, "errors": 0, "spent": 1.0}, answered=True)
    ledger.claim({"fake": 0.125})
    ledger.claim({"fake": 0.125, "judge": 2.0})
    assert (ledger.live, ledger.cassette, ledger.errors) == (5, 2, 1)
    assert ledger.spent("chaosbench") == pytest.approx(0.75)
    assert ledger.spent("chaosbench", answered=False) == pytest.approx(0.25)
    assert ledger.spent("dialectic") == pytest.approx(1.0) and ledger.spent("nothing") == 0.0
    assert ledger.unclaimed == {"fake": 0.25, "judge": 2.0}
    assert ledger.run_spent() == pytest.approx(4.0)
    assert ledger.process == 0.0, "what the controller adds is the run's, not its own calls"
