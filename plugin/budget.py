"""The --eval-max-cost budget, in one place.

Only live calls spend (a cassette replay costs nothing). Each process counts its own live
calls against its share of the budget: all of it with -n 0, a W-th of it in each of W xdist
workers (a worker cannot see what the others are spending now, and the controller hears of it
only as items end). The controller, which sees every item's record, counts them all and drops a
marker file in the run's checkpoints/ folder once the total reaches the budget, which every
worker checks before each call. The marker names its run (a token the controller gives its
workers): one an earlier run left stops nothing, and is removed at this run's first result, so a
session that runs no item (--collect-only, a -k matching nothing) changes nothing. So a run
overshoots by at most the calls already in flight: one per process, or with --eval-concurrency N
the N requests each process has out (calls made ahead of their items count as spent the moment
they finish, see prefetch.py; their items get their answers). Items not asked are skipped and listed in summary.json as `not_asked`;
`--eval-resume` asks them later.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_reasoning_evals.prefetch import Prefetcher
from pytest_reasoning_evals.providers.base import Completion, Model, NotAdmitted, Request
from pytest_reasoning_evals.results import replacing


def live_cost(record: dict) -> float:
    """What an item's record cost in calls actually made now (not replayed)."""
    parts = record.get("turns") or [record]
    return sum(p["cost_usd"] for p in parts if p.get("cassette_hit") is False)


class Budget:
    def __init__(self, max_cost: float | None, folder: Path, workers: int = 1, run_token: str = ""):
        self.max_cost = max_cost
        self.run_token = run_token  # what this run's marker holds
        self.share = None if max_cost is None else max_cost / max(1, workers)  # what this process may spend
        self.marker = folder / "budget-spent"
        self.spent = 0.0  # this process's own live calls
        self.run_spent = 0.0  # controller: the live cost of every item reported this run
        self.unasked = 0.0  # controller: ... of it, what items the budget stopped midway had paid (a dialogue's turns)

    def start_run(self) -> None:
        """Controller, at the run's first result: the marker an earlier run left goes (it stops
        nothing: exhausted() reads only this run's)."""
        if self.max_cost is not None and self.marker.exists() and not self._marked():
            self.marker.unlink(missing_ok=True)

    def _marked(self) -> bool:
        """The controller has marked the budget spent in this run."""
        try:
            return self.marker.read_text(encoding="utf-8") == self.run_token
        except (OSError, UnicodeDecodeError):
            return False

    def exhausted(self, unclaimed: float = 0.0) -> bool:
        """Spent: this process's share, by its calls (`unclaimed`: those made ahead whose items
        have not asked yet, see prefetch.py), or the whole budget by the run (the controller's marker)."""
        return self.max_cost is not None and (self.spent + unclaimed >= self.share or self._marked())

    def charge(self, record: dict) -> None:
        """Controller: add an item's live cost; tell every worker once the budget is spent."""
        self._add(live_cost(record))

    def charge_unasked(self, paid: float) -> None:
        """Controller: what an item not asked had paid before the budget stopped it."""
        self.unasked += paid
        self._add(paid)

    def _add(self, cost: float) -> None:
        self.run_spent += cost
        if self.max_cost is not None and self.run_spent >= self.max_cost and not self._marked():
            self.marker.parent.mkdir(parents=True, exist_ok=True)
            with replacing(self.marker) as handle:  # whole, or not there: a worker never reads half a token
                handle.write(self.run_token)


class BudgetedModel:
    """The model as one item sees it: once the budget is spent the item is skipped and
    `not_asked(item_id, live calls, their cost)` lists it with what it had paid (a dialogue stopped
    after some turns); each live call adds to this process's spend. A model that runs
    calls ahead asks the budget itself (NotAdmitted), and answers an item whose call it has
    already paid for: that item is not skipped, so what was paid is reported with it."""

    def __init__(self, model: Model, budget: Budget, not_asked: Callable[[str, int, float], None]):
        self.model = model
        self.budget = budget
        self.not_asked = not_asked
        self._item: tuple[str, int, float] = ("", 0, 0.0)  # the asking item: its id, live calls and their cost so far
        self.asks_budget = not isinstance(getattr(model, "model", model), Prefetcher)  # under the key's StoppingModel

    def conversation(self, suite: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(suite, item_id)

    def complete(self, request: Request) -> Completion:
        if self._item[0] != request.item_id:
            self._item = (request.item_id, 0, 0.0)
        if self.asks_budget and getattr(self.model, "refused", None) is None and self.budget.exhausted():
            self._skip(request)
        try:
            completion = self.model.complete(request)
        except NotAdmitted:  # the calls made ahead of this item spent the budget (prefetch.py)
            self._skip(request)
        if completion.extra.get("cassette_hit") is False:
            self.budget.spent += completion.cost_usd
            self._item = (request.item_id, self._item[1] + 1, self._item[2] + completion.cost_usd)
        return completion

    def _skip(self, request: Request) -> None:
        self.not_asked(*self._item)
        pytest.skip(f"not asked: the --eval-max-cost budget of ${self.budget.max_cost:g} is spent")
