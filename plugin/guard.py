"""The checks in front of every model call of an item: a refused key stops the session, a spent
budget (--max-cost) stops asking.

Budget: only live calls spend (a cassette replay costs nothing). Each process counts its own
live calls; under xdist the controller, which sees every item's record, also counts them all
and drops a marker file in the run's checkpoints/ folder once the total reaches the budget,
which every worker checks before each call. So a run overshoots by at most the calls already
in flight, one per worker. Items not asked are skipped and listed in summary.json; `--resume`
asks them later.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from plugin.providers import AuthError, Model
from plugin.providers.base import Completion, Request

NOT_ASKED_KEY = "eval_not_asked"  # user_properties key: the item was not asked (budget)


def live_cost(record: dict) -> float:
    """What an item's record cost in calls actually made now (not replayed)."""
    parts = record.get("turns") or [record]
    return sum(p["cost_usd"] for p in parts if p.get("cassette_hit") is False)


class Budget:
    def __init__(self, max_cost: float | None, marker: Path):
        self.max_cost = max_cost
        self.marker = marker  # dropped by the controller once every worker's live calls reach max_cost
        self.spent = 0.0  # this process's live calls

    def add(self, cost: float) -> None:
        self.spent += cost

    def exhausted(self) -> bool:
        return self.max_cost is not None and (self.spent >= self.max_cost or self.marker.exists())


class StopOnRefusedKey:
    """The refused-key rule, once per process for every caller (ChaosBench items and the
    dialectic runner's cached calls): the first 401/403 stops the session (also under xdist:
    the worker's shouldstop reaches the controller), and later calls fail at once without a
    request; no thousands of items failing one by one."""

    def __init__(self, model: Model, session: Callable[[], pytest.Session | None]):
        self.model = model
        self.session = session
        self.refused: str | None = None

    def conversation(self, suite: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(suite, item_id)

    def complete(self, request: Request) -> Completion:
        if self.refused is None:
            try:
                return self.model.complete(request)
            except AuthError as exc:
                self.refused = str(exc)
                session = self.session()
                if session is not None:
                    session.shouldstop = f"model key refused: {exc}"
        pytest.fail(self.refused, pytrace=False)


class CallGuard:
    """Per process: the model behind the refused-key rule, and the budget."""

    def __init__(self, model: StopOnRefusedKey, budget: Budget):
        self.model = model
        self.budget = budget

    def for_item(self, node: pytest.Item) -> "GuardedModel":
        return GuardedModel(self, node)


class GuardedModel:
    """The model as one item sees it: a spent budget skips the item and lists it as not asked."""

    def __init__(self, guard: CallGuard, node: pytest.Item):
        self.guard = guard
        self.node = node

    def conversation(self, suite: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.guard.model.conversation(suite, item_id)

    def complete(self, request: Request) -> Completion:
        guard = self.guard
        if guard.model.refused is None and guard.budget.exhausted():
            self.node.user_properties.append((NOT_ASKED_KEY, request.item_id))
            pytest.skip(f"not asked: the --max-cost budget of ${guard.budget.max_cost:g} is spent")
        completion = guard.model.complete(request)
        if completion.extra.get("cassette_hit") is False:
            guard.budget.add(completion.cost_usd)
        return completion
