"""budget.Budget under xdist with --eval-batch: the controller's batches, cut to the budget before any
item is scheduled, tell the workers what they left out and what they paid (a file by run token)."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.budget import Budget
from pytest_reasoning_evals.providers.base import Request


def request(item: str) -> Request:
    return Request(item_id=item, cassette_folder="bank-zeroshot", messages=({"role": "user", "content": item},))


def test_a_worker_skips_what_the_controllers_batch_left_out_and_spends_a_share_of_what_is_left(tmp_path) -> None:
    controller = Budget(10.0, tmp_path, run_token="t1")
    controller.leave_out([request("q-2"), request("q-3")])
    controller.tell_workers(spent=8.0)
    worker = Budget(10.0, tmp_path, workers=2, run_token="t1", worker=True)
    assert worker.refuses(request("q-3")) and not worker.refuses(request("q-1"))
    assert worker.share == pytest.approx((10.0 - 8.0) / 2)  # each of two workers: half of what is left
    other_run = Budget(10.0, tmp_path, workers=2, run_token="t2", worker=True)
    assert not other_run.refuses(request("q-3")) and other_run.share == 5.0  # another run's batches are not its own
    controller.close()
    assert not controller.batched.exists()


def test_without_a_batch_a_worker_keeps_its_share_and_the_controller_never_reads_its_own_note(tmp_path) -> None:
    worker = Budget(10.0, tmp_path, workers=2, run_token="t1", worker=True)
    assert not worker.exhausted() and worker.share == 5.0
    controller = Budget(10.0, tmp_path, run_token="t2")
    controller.leave_out([request("q-9")])
    controller.tell_workers(spent=4.0)
    assert controller.share == 10.0  # its batches' spend is in its ledger already, not taken twice
    assert not Budget(None, tmp_path, run_token="t3").refuses(request("q-9"))


def test_a_batch_sent_beside_others_is_cut_to_what_they_left_of_the_budget(tmp_path) -> None:
    """The batches of one step go out before any is paid: each is cut against the budget less what
    the ones sent before it will cost (`reserved`), so together they stay within it."""
    from types import SimpleNamespace

    from pytest_reasoning_evals.batch.run import within_budget
    from pytest_reasoning_evals.estimate import CallEstimate, Recorded, chars_of, cost
    from pytest_reasoning_evals.registry import ModelSpec

    spec = ModelSpec("m", "openai", "m-1", price_in=2.0, price_out=8.0)
    asks = [request(f"q-{i:02d}") for i in range(12)]
    one = cost(
        CallEstimate("m", "", "bank-zeroshot", chars_of(asks[0].messages), asks[0].max_tokens, True), spec, Recorded()
    )
    budget = Budget(10.5 * one, tmp_path)
    models = SimpleNamespace(budget=budget, settings=SimpleNamespace(cassette_dir=tmp_path))
    said: list[str] = []
    kept, estimated = within_budget(models, spec, asks, said.append)
    assert len(kept) == 10 and estimated == pytest.approx(10 * one) and budget.refuses(asks[10])
    kept, estimated = within_budget(models, spec, asks, said.append, reserved=4 * one)
    assert len(kept) == 6 and estimated == pytest.approx(6 * one)
    assert said[-1].startswith("batch: 6 of 12 requests fit the --eval-max-cost budget")
    assert within_budget(SimpleNamespace(budget=Budget(None, tmp_path)), spec, asks, said.append) == (asks, 0.0)
