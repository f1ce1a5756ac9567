"""How an item's result rides on its report to the controller (docs/design.md, "How a result
travels"): the stash keys an item fills, `send` (from inside an item), `attach`/`payload_of` (the
report's payload), and the payload's serialized form under xdist."""

from __future__ import annotations

import json
import weakref
from typing import TypedDict

import pytest

PAYLOAD = pytest.StashKey[dict]()  # an item's payload: {"protocol": name, ...}
FAILURE = pytest.StashKey[str]()  # why the item fails (a wrong answer, an unmet check), one line
CALLS = pytest.StashKey["CallCounts"]()  # the item's model calls so far (spend.py): sent as payload["calls"]
NOT_ASKED = pytest.StashKey[str]()  # the item id of the request the spent --eval-max-cost budget refused
SERIALIZED_KEY = "pytest_reasoning_evals"  # where a serialized report carries it (a dict)
SERIALIZED_TEXT_KEY = "pytest_reasoning_evals_json"  # ... or carries it as JSON text (serialized_payload)
# pytest's report category of a wrong answer or an unmet rubric check without -v: not "failed",
# so pytest does not print a failure section each; the session lists them one line each.
WRONG = "wrong"
HARNESS = "harness error"  # how the error of an item that raised inside the harness starts (session.py)
HARNESS_ERROR = "harness_error"  # a payload's flag: the item raised before sending its record
STOPPED = "stopped"  # ... while the session was stopping (a refused key): not a bug of the harness
UNKNOWN = "unknown"  # the category of an answer with no TRUE/FALSE (or a failed call): counted apart
_payloads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CallCounts(TypedDict):
    """An item's model calls (spend.no_calls): payload["calls"], for the controller's spend ledger."""

    live: int
    cassette: int
    errors: int
    spent: float


class _NotAskedPayload(TypedDict):
    protocol: str
    # the id of the request the spent budget refused (session.py)
    not_asked: str


class NotAskedPayload(_NotAskedPayload, total=False):
    """An item the spent --eval-max-cost budget skipped; `calls`: what its calls had paid before."""

    calls: CallCounts


def send(
    item: pytest.Item, payload: dict, properties: list[tuple[str, object]] = (), failure: str | None = None
) -> None:
    """From inside an item: its result for the controller, a few scalars for junitxml, and when
    the answer is wrong, the one-line reason that fails the item (session.py sets it on the
    report: no exception, so pytest builds no traceback for an expected outcome)."""
    item.stash[PAYLOAD] = payload
    if failure is not None:
        item.stash[FAILURE] = failure
    item.user_properties.extend(properties)


def attach(report: pytest.TestReport, payload: dict) -> None:
    _payloads[report] = payload


def payload_of(report: pytest.BaseReport) -> dict | None:
    return _payloads.get(report)


def serialized_payload(payload: dict) -> tuple[str, object]:
    """(key, value) that carries `payload` in a serialized report: its JSON text when that reads
    back equal (execnet's pure-Python serializer takes ~40 us per nested record, JSON ~5), else
    the dict itself (a tuple, a NaN or a non-text key inside)."""
    try:
        text = json.dumps(payload, separators=(",", ":"))
        if json.loads(text) == payload:
            return SERIALIZED_TEXT_KEY, text
    except (TypeError, ValueError, RecursionError):
        pass
    return SERIALIZED_KEY, payload


def deserialized_payload(data: dict) -> dict | None:
    """The payload serialized_payload put in `data` (removed from it), or None."""
    text = data.pop(SERIALIZED_TEXT_KEY, None)
    if text is not None:
        return json.loads(text)
    return data.pop(SERIALIZED_KEY, None)
