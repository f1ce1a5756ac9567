"""The spend ledger: what a run paid, each live call counted once, and the one count every output
reads (the --eval-max-cost budget, the progress line, summary.json's and run_meta.json's spend,
ChaosBench's progress.json). A replayed call is counted as a call, never as paid.

Every process records its calls as they return (`paid`): its own spend, which its budget share
is checked against, and the running item's call counts (protocol.CallCounts), which ride to the
controller in the item's payload (payload["calls"]). The controller adds each item's counts once
(`add_item`), and at the end what calls made ahead paid for items that never took them
(`claim`, per alias, from every process)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_reasoning_evals.providers.base import Completion
    from pytest_reasoning_evals.stash import CallCounts


def no_calls() -> CallCounts:
    """An item's call counts before its first call (a plain dict: it rides in the payload as it is)."""
    return {"live": 0, "cassette": 0, "errors": 0, "spent": 0.0}


class SpendLedger:
    def __init__(self) -> None:
        self.process = 0.0  # this process's own live calls
        self.live = self.cassette = self.errors = 0  # controller: the reported items' calls, all together
        # controller: (protocol, whether the item's record holds the replies its calls paid for) -> their spend
        self._items: dict[tuple[str, bool], float] = {}
        self.unclaimed: dict[str, float] = {}  # per alias: calls made ahead that no item took, paid all the same

    def paid(self, completion: Completion, calls: CallCounts | None) -> None:
        """One call of this process returned; `calls`: the running item's counts (None: no item runs)."""
        hit = completion.outcome.hit
        if hit is False:
            self.process += completion.cost_usd
        if calls is not None:
            if hit is False:
                calls["live"] += 1
                calls["spent"] += completion.cost_usd
            elif hit is True:
                calls["cassette"] += 1
            if completion.error and completion.provider is not None:
                calls["errors"] += 1

    def add_item(self, protocol: str, calls: CallCounts, answered: bool) -> None:
        """Controller: one item's calls, from its report; `answered`: its record holds the replies
        they paid for (not an item the budget skipped midway, nor one that raised)."""
        self.live += calls["live"]
        self.cassette += calls["cassette"]
        self.errors += calls["errors"]
        key = (protocol, answered)
        self._items[key] = self._items.get(key, 0.0) + calls["spent"]

    def claim(self, unclaimed: dict[str, float]) -> None:
        """What calls made ahead (or an item that made no report) paid for no item, per alias."""
        for alias, cost in unclaimed.items():
            self.unclaimed[alias] = self.unclaimed.get(alias, 0.0) + cost

    def spent(self, protocol: str, answered: bool | None = None) -> float:
        """Controller: what `protocol`'s items paid (`answered`: only those whose record holds the replies, or only the others)."""
        return sum(cost for (name, done), cost in self._items.items() if name == protocol and answered in (None, done))

    def run_spent(self) -> float:
        """Controller: what the run paid, every item's calls and every call made ahead."""
        return sum(self._items.values()) + sum(self.unclaimed.values())
