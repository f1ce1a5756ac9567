"""The --eval-max-cost budget for every model call of every protocol: each process spends its share,
the controller counts every item's calls and marks the budget spent for the run
(docs/design.md, "One call pipeline")."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_reasoning_evals.providers.base import Completion, Model, NotAdmitted, Request
from pytest_reasoning_evals.stash import CALLS, NOT_ASKED

TOKEN_KEY = "eval_budget_token"  # workerinput: the run's token, in its marker's name


def live_cost(record: dict) -> float:
    """What an item's record cost in calls actually made now (not replayed)."""
    parts = record.get("turns") or [record]
    return sum(p["cost_usd"] for p in parts if p.get("cassette_hit") is False)


class Budget:
    def __init__(self, max_cost: float | None, folder: Path, workers: int = 1, run_token: str = ""):
        self.max_cost = max_cost
        self.run_token = run_token
        self.share = None if max_cost is None else max_cost / max(1, workers)  # what this process may spend
        self.marker = folder / f".eval-budget-spent-{run_token}"  # only this run's marker stops this run
        self.spent = 0.0  # this process's own live calls
        self.run_spent = 0.0  # controller: the live cost of every item reported this run

    @classmethod
    def of_process(cls, settings, config) -> Budget:
        """The budget of this pytest process: all of it with -n 0, a W-th of it in each of W xdist
        workers, which stop on their controller's run token."""
        import secrets

        workerinput = getattr(config, "workerinput", None)
        if workerinput is None:
            workers, token = 1, secrets.token_hex(8)
        else:
            workers, token = workerinput.get("workercount", 1), workerinput.get(TOKEN_KEY, "")
        return cls(settings.max_cost, settings.out_dir, workers, token)

    def exhausted(self, unclaimed: float = 0.0) -> bool:
        """Spent: this process's share, by its calls (`unclaimed`: those made ahead whose items
        have not asked yet, see prefetch.py), or the whole budget by the run (the controller's marker)."""
        return self.max_cost is not None and (self.spent + unclaimed >= self.share or self.marker.exists())

    def charge(self, cost: float) -> None:
        """Controller: add an item's live cost; tell every worker once the budget is spent."""
        self.run_spent += cost
        if self.max_cost is not None and self.run_spent >= self.max_cost and not self.marker.exists():
            self.marker.parent.mkdir(parents=True, exist_ok=True)
            self.marker.touch()

    def close(self) -> None:
        """Controller, at the end: the marker goes (the run's outputs say what was not asked)."""
        if self.max_cost is not None:
            self.marker.unlink(missing_ok=True)


class BudgetedModel:
    """An alias's model as every caller sees it: once the budget is spent the running item is
    skipped (NOT_ASKED in its stash names the refused request's item, so its protocol can list
    it); each call is counted on the running item (CALLS) and each live call adds to this
    process's spend. A model that runs calls ahead asks the budget itself (NotAdmitted), and
    answers an item whose call it has already paid for: that item is not skipped, so what was
    paid is reported with it."""

    def __init__(
        self,
        model: Model,
        budget: Budget,
        running: Callable[[], pytest.Item | None],
        asks_budget: bool = True,
        refused: Callable[[], str | None] = lambda: None,
    ):
        self.model = model
        self.budget = budget
        self.running = running  # the item pytest is running in this process
        self.asks_budget = asks_budget  # False: the model runs calls ahead and asks the budget itself
        self.refused = refused  # why the key was refused (models.StoppingModel): the call raises, not skips

    def conversation(self, folder: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(folder, item_id)

    def complete(self, request: Request) -> Completion:
        if self.asks_budget and self.refused() is None and self.budget.exhausted():
            self._skip(request)
        try:
            completion = self.model.complete(request)
        except NotAdmitted:  # the calls made ahead of this item spent the budget (prefetch.py)
            self._skip(request)
        hit = completion.outcome.hit
        if hit is False:
            self.budget.spent += completion.cost_usd
        item = self.running()
        if item is not None:
            # a plain dict: it rides in the payload as it is (protocol.CallCounts)
            calls = item.stash.get(CALLS, None)
            if calls is None:
                calls = item.stash[CALLS] = {"live": 0, "cassette": 0, "errors": 0, "spent": 0.0}
            if hit is False:
                calls["live"] += 1
                calls["spent"] += completion.cost_usd
            elif hit is True:
                calls["cassette"] += 1
            if completion.error and completion.provider is not None:
                calls["errors"] += 1
        return completion

    def _skip(self, request: Request) -> None:
        item = self.running()
        if item is not None:
            item.stash[NOT_ASKED] = request.item_id
        pytest.skip(f"not asked: the --eval-max-cost budget of ${self.budget.max_cost:g} is spent")
