"""providers/fixed.py: a baseline a protocol answers is asked through its registered answerer."""

from __future__ import annotations

from pytest_reasoning_evals.providers import fixed
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.registry import ModelSpec

REQUEST = Request("q-1", "folder", ({"role": "user", "content": "Is it?"},))


def model(model_id: str) -> fixed.FixedAnswerModel:
    return fixed.FixedAnswerModel(ModelSpec(alias=model_id, provider="baseline", model_id=model_id), seed=0)


def test_a_registered_answerer_answers_and_an_unregistered_one_says_nothing(monkeypatch) -> None:
    monkeypatch.setattr(fixed, "ANSWERERS", {})
    assert model("shortcut").complete(REQUEST).text == ""  # scored UNKNOWN
    fixed.register_answerer("shortcut", lambda request: f"FALSE for {request.item_id}")
    assert model("shortcut").complete(REQUEST).text == "FALSE for q-1"
    assert model("random").complete(REQUEST).text in ("TRUE", "FALSE")
