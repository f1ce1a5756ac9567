"""--eval-epochs K: each ChaosBench question and dialogue, and each dialectic response, asked K
times, each time its own pytest item and its own request (docs/chaosbench.md and docs/dialectic.md,
"Epochs").

Epoch e of item `q` (a question, a dialogue or a dialectic case) is the item `q-e0<e>` (ids sort
and `-k q` selects every epoch). Epoch 1 is the request a run without epochs sends, under the
item's own cassette, so recordings made before epochs keep replaying; epoch e >= 2 sends the
provider's seed e - 1 (Anthropic, which has none, a metadata tag) and records under its own id's
cassette, so every epoch is its own request on the wire and replays deterministically.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

Item = TypeVar("Item")  # a Question, a Dialogue or a dialectic Case


def epoch_id(base_id: str, epoch: int) -> str:
    return f"{base_id}-e{epoch:02d}"


def expand(items: list[Item], epochs: int) -> list[Item]:
    """Each item once per epoch, its epochs next to each other; the items themselves with one epoch."""
    if epochs <= 1:
        return items
    return [
        replace(item, id=epoch_id(item.id, e), epoch=e, base_id=item.id) for item in items for e in range(1, epochs + 1)
    ]


def cassette_id(item) -> str:
    """The id its cassette is recorded under: epoch 1 shares the cassette of a run without epochs."""
    return item.base_id if item.epoch == 1 else item.id


def seed_of(item) -> int | None:
    """The seed its requests send: None (the provider's default body) for a run without epochs and epoch 1."""
    return item.epoch - 1 if item.epoch > 1 else None


def question_of(item) -> str:
    """The id of the question (or dialogue) an item asks, whatever its epoch."""
    return item.base_id or item.id


def copies_warning(epochs: int, spec, temperature: float | None) -> str | None:
    """One line when the epochs would be copies: K > 1 at temperature 0 sent to a model that honours it
    (a baseline model answers without a request; a reasoning model that is sent no temperature varies)."""
    from pytest_reasoning_evals.providers.wire import sent_temperature

    if epochs < 2 or spec.provider == "baseline" or temperature or sent_temperature(spec, 0.0) is None:
        return None
    return (
        f"--eval-epochs {epochs} at temperature 0: a model that honours it gives every epoch the same answer "
        "(the epochs are copies); give --eval-temperature (0.7, say) for epochs that measure its noise"
    )


def record_fields(item) -> dict:
    """What a record adds under epochs: the question it asks and its epoch ({} without epochs)."""
    return {"question_id": item.base_id, "epoch": item.epoch} if item.epoch else {}
