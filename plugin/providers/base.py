"""What every provider takes and returns: one request in, one normalised completion out."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from typing import Protocol


MISS = "cassette miss"  # how the error of a replay that found no recording starts (cassettes.py)


@dataclass(frozen=True)
class Request:
    """One model call for one item. `item_id` and `suite` name the item (and, later, its cassette)."""

    item_id: str
    suite: str
    messages: tuple[dict, ...]
    gold: str | None = None  # read only by the oracle baseline; never sent over HTTP
    temperature: float = 0.0
    max_tokens: int = 512
    json_schema: dict | None = None  # ask for JSON of this shape where the provider can constrain it


@dataclass
class Completion:
    """The normalised completion record (SPEC 3); plain JSON-able values only."""

    provider: str
    model: str
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0  # informational: already part of output_tokens where billed
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    finish_reason: str | None = None
    error: str | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


class Model(Protocol):
    def complete(self, request: Request) -> Completion: ...

    def conversation(self, suite: str, item_id: str) -> AbstractContextManager[None]:
        """The calls made inside belong to one item (a dialogue): one cassette for all of them."""
        ...
