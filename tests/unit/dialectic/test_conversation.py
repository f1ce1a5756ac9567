"""A resolution conversation (runner.Conversation) walked with the replies its cassettes hold asks
next exactly the request the live runner asks next: --eval-batch's rounds (batch_rounds.py) and the
resolution item build the same requests, byte for byte, so the batch's cassettes are the item's."""

from __future__ import annotations

import json

import pytest

from pytest_reasoning_evals.dialectic import multiturn
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.panel import seats
from pytest_reasoning_evals.dialectic.runner import Call, Conversation, DialecticRunner, completion_record
from pytest_reasoning_evals.epochs import expand
from pytest_reasoning_evals.providers.base import Completion, Request

CASE = Case("decide", "ethics", "What should I do?", "dialectic")
VARIANT = Variant("dialectic", "Think in hypotheses.")
NO, YES = (json.dumps({"resolved": r, "confidence": 0.5, "reasoning": "r"}) for r in (False, True))


class Recorded:
    """The models of a runner: each call recorded as (alias, request); the model under test answers
    `replies` in turn (its response first), the resolution judge `verdicts`."""

    def __init__(self, replies: list[str], verdicts: list[str]):
        self.replies, self.verdicts = list(replies), list(verdicts)
        self.calls: list[Call] = []
        self.completions: list[Completion] = []

    def __call__(self, alias: str):
        recorded = self

        class Answering:
            def complete(self, request: Request) -> Completion:
                text = (recorded.verdicts if alias == "judge" else recorded.replies).pop(0)
                completion = Completion(
                    provider="fake", model=alias, text=text, input_tokens=len(text), output_tokens=3
                )
                recorded.calls.append(Call(alias, request))
                recorded.completions.append(completion)
                return completion

        return Answering()


SCENARIOS = {
    "resolved at turn 3": (["first", "second", "third"], [NO, NO, YES]),
    "never resolved": (["first", "a", "b", "c"], [NO] * multiturn.MAX_TURNS),
    "an unusable verdict counts as not resolved": (["first", "second"], ["not json", YES]),
    "an empty follow-up ends it": (["first", "  "], [NO]),
    "resolved at once": (["first"], [YES]),
    "an empty response is never judged": ([""], []),
}


@pytest.mark.parametrize("case", [CASE, expand([CASE], 2)[1]], ids=["epoch 1", "epoch 2"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_call_a_replayed_conversation_lacks_is_the_one_the_live_runner_asks_next(scenario, case) -> None:
    replies, verdicts = SCENARIOS[scenario]
    models = Recorded(replies, verdicts)
    runner = DialecticRunner(models, "fake", seats(["judge"]), max_tokens=300, temperature=0.4)
    live = runner.resolution(case, VARIANT)
    (response, *asked), (first, *answers) = models.calls, models.completions
    assert response == Call("fake", runner.response_request(case, VARIANT))
    for held in range(len(asked) + 1):  # the cassettes hold the first `held` calls' replies
        conversation = Conversation(runner, case, VARIANT, completion_record(first))
        lacked = conversation.walk(lambda call: answers[asked.index(call)] if call in asked[:held] else None)  # noqa: B023
        assert lacked == (asked[held] if held < len(asked) else None)
    assert conversation.record() == live  # every reply held: the record the live runner made


def test_the_calls_alternate_the_resolution_judge_and_the_follow_up_with_the_real_history() -> None:
    models = Recorded(["first", "second"], [NO, YES])
    runner = DialecticRunner(models, "fake", seats(["judge", "other"], 2))
    record = runner.resolution(CASE, VARIANT)
    turn1, follow_up, turn2 = models.calls[1:]
    assert [c.alias for c in models.calls[1:]] == ["judge", "fake", "judge"]  # the first seat's judge model judges
    assert (turn1.request.item_id, follow_up.request.item_id, turn2.request.item_id) == (
        "decide__dialectic__fake__turn1",
        "decide__dialectic__followup2",
        "decide__dialectic__fake__turn2",
    )
    assert [m["content"] for m in follow_up.request.messages[-2:]] == ["first", multiturn.FOLLOW_UP]
    assert "ASSISTANT: first" in turn2.request.messages[1]["content"]
    assert "### Latest Response: second" in turn2.request.messages[1]["content"]
    assert (record["turns"], record["turns_to_resolution"], record["replies"]) == (2, 2, ["second"])
