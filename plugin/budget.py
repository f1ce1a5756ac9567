"""The --eval-max-cost budget for every model call of every protocol: each process spends its share,
the controller marks the budget spent for the run once the run's spend (spend.py) reaches it
(docs/design.md, "One call pipeline")."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from pytest_reasoning_evals.providers.base import Completion, Model, NotAdmitted, Request
from pytest_reasoning_evals.spend import SpendLedger, no_calls
from pytest_reasoning_evals.stash import CALLS, NOT_ASKED

TOKEN_KEY = "eval_budget_token"  # workerinput: the run's token, in its marker's name


class Budget:
    def __init__(
        self,
        max_cost: float | None,
        folder: Path,
        workers: int = 1,
        run_token: str = "",
        ledger: SpendLedger | None = None,
        stop_when_decided: bool = False,
        worker: bool = False,
    ):
        self.max_cost = max_cost
        self.stoppable = max_cost is not None or stop_when_decided  # a marker of the controller's may stop it
        self.run_token = run_token
        self.workers = max(1, workers)
        self.share = None if max_cost is None else max_cost / self.workers  # what this process may spend
        self.marker = folder / f".eval-budget-spent-{run_token}"  # only this run's marker stops this run
        # the xdist controller's batches -> its workers: what they left out and paid (tell_workers)
        self.batched = folder / f".eval-budget-batched-{run_token}.json"
        self.ledger = ledger or SpendLedger()  # what this process and (on the controller) the run paid
        self.left_out: set[tuple[str, str]] = set()  # (cassette folder, item id): requests it will not pay for
        self._heard = max_cost is None or not worker  # a worker reads the controller's batches once, at its first call

    @classmethod
    def of_process(cls, settings, config, ledger: SpendLedger | None = None) -> Budget:
        """The budget of this pytest process: all of it with -n 0, a W-th of it in each of W xdist
        workers, which stop on their controller's run token."""
        import secrets

        workerinput = getattr(config, "workerinput", None)
        if workerinput is None:
            workers, token = 1, secrets.token_hex(8)
        else:
            workers, token = workerinput.get("workercount", 1), workerinput.get(TOKEN_KEY, "")
        worker = workerinput is not None
        return cls(settings.max_cost, settings.out_dir, workers, token, ledger, settings.stop_when_decided, worker)

    def exhausted(self, unclaimed: float = 0.0) -> bool:
        """Spent: this process's share, by its calls (`unclaimed`: those made ahead whose items
        have not asked yet, see prefetch.py), or the whole budget by the run (the controller's marker)."""
        if not self.stoppable:
            return False
        if not self._heard:
            self._hear()
        spent = self.max_cost is not None and self.ledger.process + unclaimed >= self.share
        return spent or self.marker.exists()

    def leave_out(self, requests: Iterable[Request]) -> None:
        """Controller, before the items run: requests the budget cannot pay for (a batch cut to it,
        batch/run.py); their items are skipped as a spent budget skips them."""
        self.left_out |= {(r.cassette_folder, r.item_id) for r in requests}

    def refuses(self, request: Request) -> bool:
        if not self._heard:
            self._hear()
        return (request.cassette_folder, request.item_id) in self.left_out

    def tell_workers(self, spent: float) -> None:
        """The xdist controller, after its batches and before any item is scheduled: what they left
        out, and what they paid, of which each worker's share is then a W-th of the rest."""
        if self.max_cost is not None and (self.left_out or spent):
            self.batched.parent.mkdir(parents=True, exist_ok=True)
            self.batched.write_text(json.dumps({"left_out": sorted(self.left_out), "spent": spent}), encoding="utf-8")

    def _hear(self) -> None:
        """A worker, at its first call (its items are scheduled after the controller's batches)."""
        self._heard = True
        try:
            told = json.loads(self.batched.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # no batch, or -n 0 (whose own budget cut the batch)
            return
        self.left_out |= {tuple(pair) for pair in told["left_out"]}
        self.share = max(0.0, self.max_cost - told["spent"]) / self.workers

    def mark_if_spent(self) -> None:
        """Controller, after an item's calls reached the ledger: tell every worker once the run spent the budget."""
        if self.max_cost is not None and self.ledger.run_spent() >= self.max_cost:
            self.stop_asking(self._spent_line())

    def stop_asking(self, why: str) -> None:
        """Controller: every process of this run asks nothing more from now on; `why` is what each
        skipped item says (the first reason stays)."""
        if not self.marker.exists():
            self.marker.parent.mkdir(parents=True, exist_ok=True)
            self.marker.write_text(why, encoding="utf-8")

    def refusal(self) -> str:
        """Why a call is not made: the controller's reason, else this process's spent share."""
        try:
            return self.marker.read_text(encoding="utf-8").strip() or self._spent_line()
        except OSError:
            return self._spent_line()

    def _spent_line(self) -> str:
        if self.max_cost is None:
            return "not asked: the run stopped asking"
        return f"not asked: the --eval-max-cost budget of ${self.max_cost:g} is spent"

    def close(self) -> None:
        """Controller, at the end: the marker goes (the run's outputs say what was not asked)."""
        if self.stoppable:
            self.marker.unlink(missing_ok=True)
            self.batched.unlink(missing_ok=True)


class BudgetedModel:
    """An alias's model as every caller sees it: once the budget is spent the running item is
    skipped (NOT_ASKED in its stash names the refused request's item, so its protocol can list
    it); each call goes to the ledger, counted on the running item (CALLS) and, live, in this
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
        if self.budget.refuses(request) or (self.asks_budget and self.refused() is None and self.budget.exhausted()):
            self._skip(request)
        try:
            completion = self.model.complete(request)
        except NotAdmitted:  # the calls made ahead of this item spent the budget (prefetch.py)
            self._skip(request)
        item = self.running()
        self.budget.ledger.paid(completion, None if item is None else item.stash.setdefault(CALLS, no_calls()))
        return completion

    def _skip(self, request: Request) -> None:
        item = self.running()
        if item is not None:
            item.stash[NOT_ASKED] = request.item_id
        pytest.skip(self.budget.refusal())
