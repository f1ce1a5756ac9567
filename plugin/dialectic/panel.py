"""Who judges: the judge panel as seats. A panel is distinct judge models, or one model asked
several times; then each repeat is an independent sample (its own seed, a temperature > 0), so no
two judge requests are identical and the panel's spread measures something."""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_TEMPERATURE = 0.7  # of a repeated judge's samples; a lone judge model stays at 0 (SPEC 6.4)


class Seat(NamedTuple):
    """One judge of the panel: seat k's reply is the cassette ...__judge<k>.yaml."""

    number: int  # 1-based
    alias: str
    temperature: float
    seed: int | None  # None: the provider's default request (a judge model asked once)


class PanelError(ValueError):
    """A panel that would send identical requests."""


DEFAULT_SIZE = 3  # SPEC 6.4's n_judges


def seats(
    aliases: list[str], n_judges: int | None = None, temperature: float = DEFAULT_TEMPERATURE
) -> tuple[Seat, ...]:
    """n_judges seats (default 3, or one per alias when more are named) taking `aliases` in turn.
    An alias that sits more than once is sampled at `temperature` with the seat's number as its
    seed (fixed, so a replay matches its recording)."""
    n_judges = n_judges or max(DEFAULT_SIZE, len(aliases))
    chosen = [aliases[k % len(aliases)] for k in range(n_judges)]
    repeated = {alias for alias in chosen if chosen.count(alias) > 1}
    if repeated and not temperature > 0:
        alias = sorted(repeated)[0]
        raise PanelError(
            f"judge {alias!r} sits {chosen.count(alias)} times at temperature {temperature}: its requests would be "
            "identical; give a judge temperature > 0, or name distinct judge models"
        )
    return tuple(
        Seat(k, alias, temperature, k) if alias in repeated else Seat(k, alias, 0.0, None)
        for k, alias in enumerate(chosen, start=1)
    )


def expand(names: tuple[str, ...], panels: dict[str, list[str]]) -> list[str]:
    """--eval-judge-model's aliases, a judge panel's name replaced by its models."""
    return [alias for name in names for alias in panels.get(name, [name])]


def self_judged(panel: tuple[Seat, ...], model: str) -> bool:
    """A judge of the panel is the model whose answers it scores."""
    return any(seat.alias == model for seat in panel)
