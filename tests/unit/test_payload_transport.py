"""protocol.serialized_payload: a payload crosses from an xdist worker to the controller as JSON
text when that reads back equal, else as the dict itself (what execnet carries as it is)."""

from __future__ import annotations

import math

from pytest_reasoning_evals.stash import SERIALIZED_KEY, SERIALIZED_TEXT_KEY, deserialized_payload, serialized_payload

RECORD = {"id": "q-1", "label": "TRUE", "cost_usd": 0.25, "correct": True, "error": None, "predicates": [{"name": "x"}]}


def carried(payload: dict) -> tuple[str, dict]:
    key, value = serialized_payload(payload)
    data = {"nodeid": "test_x.py::test_q", key: value}  # a serialized report's fields beside it
    back = deserialized_payload(data)
    assert data == {"nodeid": "test_x.py::test_q"}, "the payload's key is taken out of the report's fields"
    return key, back


def test_a_plain_payload_travels_as_json_text_and_arrives_equal() -> None:
    payload = {"protocol": "chaosbench", "record": RECORD, "calls": {"live": 0, "cassette": 1, "spent": 0.0}}
    key, back = carried(payload)
    assert key == SERIALIZED_TEXT_KEY and back == payload


def test_a_payload_json_would_change_travels_as_the_dict() -> None:
    for odd in ((1, 2), {1: "a"}, math.nan):  # a tuple, a key that is not text, a NaN
        payload = {"protocol": "chaosbench", "record": {**RECORD, "odd": odd}}
        key, back = carried(payload)
        assert key == SERIALIZED_KEY and back is payload
    payload = {"protocol": "chaosbench", "record": {**RECORD, "odd": object()}}  # not JSON at all
    assert serialized_payload(payload) == (SERIALIZED_KEY, payload)


def test_a_report_without_a_payload_gives_none() -> None:
    assert deserialized_payload({"nodeid": "x"}) is None
