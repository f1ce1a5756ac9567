"""models.py: the requests of the items run next, for the calls that run ahead; the order of a call path's layers."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_reasoning_evals.budget import Budget
from pytest_reasoning_evals.cassettes import CassetteClient
from pytest_reasoning_evals.models import KeyRefused, Models, RunAhead, compose
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import HttpModel
from pytest_reasoning_evals.registry import ModelSpec


class Item:
    pass


def test_each_upcoming_items_request_is_built_once(tmp_path) -> None:
    # the calls running ahead look at the next items every time one of them ends
    items = [Item() for _ in range(10)]
    session = SimpleNamespace(items=items, config=SimpleNamespace())
    running = [items[0]]
    built = []

    def ahead(item) -> Request:
        built.append(item)
        n = items.index(item)
        return Request(item_id=f"q{n}", cassette_folder="s", messages=({"role": "user", "content": f"q{n}"},))

    models = Models(None, lambda: session, budget=Budget(None, tmp_path), running=lambda: running[0], ahead=ahead)
    for _ in range(3):
        assert [r.item_id for r in models._upcoming()] == [f"q{n}" for n in range(1, 10)]
    running[0] = items[4]
    assert [r.item_id for r in models._upcoming()] == [f"q{n}" for n in range(5, 10)]
    assert built == items[1:]


def layers(path) -> list[str]:
    found = []
    while path is not None:
        found.append(type(path).__name__)
        path = getattr(path, "model", None)
    return found


def http_model() -> HttpModel:
    return HttpModel(ModelSpec(alias="fake", provider="openai", model_id="m", base_url="http://127.0.0.1:9/v1"))


def test_compose_puts_the_layers_in_their_one_order(tmp_path) -> None:
    model = http_model()
    path, prefetcher = compose(
        model,
        session=lambda: None,
        budget=Budget(None, tmp_path),
        running=lambda: None,
        cassettes=lambda inner: CassetteClient(inner, tmp_path, "once"),
        run_ahead=RunAhead(4, lambda: iter(()), lambda unclaimed: True),
    )
    try:
        assert layers(path) == ["BudgetedModel", "StoppingModel", "Prefetcher", "CassetteClient", "HttpModel"]
        assert path.model.model is prefetcher and not path.asks_budget  # the run-ahead asks the budget itself
        assert model.limiter.ceiling == 4 and model.limiter.admit is not None  # the limiter it was handed
    finally:
        prefetcher.close()
    path, prefetcher = compose(
        http_model(),
        session=lambda: None,
        budget=Budget(None, tmp_path),
        running=lambda: None,
        cassettes=lambda inner: CassetteClient(inner, tmp_path, "none"),
    )
    assert layers(path) == ["BudgetedModel", "StoppingModel", "CassetteClient", "HttpModel"]
    assert prefetcher is None and path.asks_budget


def test_a_refused_key_raises_even_once_the_budget_is_spent(tmp_path) -> None:
    # the refusal reaches the budget layer from compose, not by looking into the layer below
    path, _ = compose(http_model(), session=lambda: None, budget=Budget(0.0, tmp_path), running=lambda: None)
    path.model.refused = "HTTP 401"
    try:
        path.complete(Request(item_id="q", cassette_folder="s", messages=()))
    except BaseException as exc:  # noqa: BLE001 - a skip (the budget's) would end this test as skipped
        raised = exc
    assert isinstance(raised, KeyRefused), raised
