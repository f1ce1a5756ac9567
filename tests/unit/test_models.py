"""models.py: the requests of the items run next, for the calls that run ahead."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_reasoning_evals.budget import Budget
from pytest_reasoning_evals.models import Models
from pytest_reasoning_evals.providers.base import Request


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
