"""Asking a question with reprompts (scoring.ask) and the record it makes (scoring.score)."""

from __future__ import annotations

import contextlib

from pytest_reasoning_evals.chaosbench.prompts import REPROMPT, PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.scoring import ask, failure_reason, score
from pytest_reasoning_evals.providers.base import CallOutcome, Completion

PROMPT = PromptTemplate(mode="zeroshot", path=None, text="Q: {question}\nA:")
QUESTION = Question(
    id="q-1",
    question="Is it chaotic?",
    ground_truth="TRUE",
    family="atomic",
    split="core",
    system_id="lorenz63",
    template="atomic.v1",
)


class Scripted:
    """Replies in turn; records each request and whether it came inside conversation()."""

    def __init__(self, *replies, hit=True):
        self.replies = list(replies)
        self.hit = hit
        self.requests = []
        self.inside = False

    @contextlib.contextmanager
    def conversation(self, folder, item_id):
        assert (folder, item_id) == ("chaosbench-zeroshot", "q-1")
        self.inside = True
        yield
        self.inside = False

    def complete(self, request):
        self.requests.append((request, self.inside))
        reply = self.replies.pop(0)
        if isinstance(reply, Completion):
            return reply
        return Completion(
            "fake", "m", reply, input_tokens=10, output_tokens=2, cost_usd=0.5, outcome=CallOutcome(hit=self.hit)
        )


def test_a_labelled_first_reply_is_not_asked_again() -> None:
    model = Scripted("TRUE")
    record = ask(QUESTION, PROMPT, model, reprompt=1)
    assert len(model.requests) == 1
    assert (record["label"], record["label_from"], record["reprompts"], record["reprompt_replies"]) == (
        "TRUE",
        0,
        0,
        [],
    )


def test_an_unknown_reply_is_asked_again_in_the_same_conversation() -> None:
    model = Scripted("Hmm, let me see.", "TRUE")
    record = ask(QUESTION, PROMPT, model, reprompt=1)
    (first, outside), (again, inside) = model.requests
    assert (outside, inside) == (False, True), "the reprompt inside the item's conversation (one cassette)"
    assert again.messages == (
        *first.messages,
        {"role": "assistant", "content": "Hmm, let me see."},
        {"role": "user", "content": REPROMPT},
    )
    assert (again.item_id, again.cassette_folder, again.max_tokens) == (
        first.item_id,
        first.cassette_folder,
        first.max_tokens,
    )
    assert (record["raw_text"], record["reprompt_replies"], record["label_from"], record["label"]) == (
        "Hmm, let me see.",
        ["TRUE"],
        1,
        "TRUE",
    )
    assert (record["status"], record["input_tokens"], record["output_tokens"], record["cost_usd"]) == (
        "correct",
        20,
        4,
        1.0,
    )


def test_at_most_n_reprompts_and_the_reply_shown_is_the_last() -> None:
    model = Scripted("hmm", "well", "so", "TRUE")
    record = ask(QUESTION, PROMPT, model, reprompt=2)
    assert len(model.requests) == 3
    assert (record["label"], record["label_from"], record["reprompt_replies"]) == (None, None, ["well", "so"])
    assert failure_reason(record) == "UNKNOWN (expected TRUE): no TRUE/FALSE in reply (asked 3 times) 'so'"


def test_zero_turns_it_off() -> None:
    model = Scripted("hmm")
    assert ask(QUESTION, PROMPT, model, reprompt=0)["reprompts"] == 0
    assert len(model.requests) == 1


def test_a_failed_call_is_not_reprompted_and_a_failed_reprompt_is_the_error() -> None:
    failed = Completion("fake", "m", "", error="cassette miss for item 'q-1': ...")
    assert len(ask(QUESTION, PROMPT, Scripted(failed), reprompt=1)["reprompt_replies"]) == 0
    record = ask(QUESTION, PROMPT, Scripted("hmm", failed), reprompt=1)
    assert (record["status"], record["error"], record["label"]) == ("unknown", failed.error, None)


def test_a_reprompt_made_now_makes_the_record_live() -> None:
    replayed = Completion("fake", "m", "hmm", outcome=CallOutcome(hit=True))
    live = Completion("fake", "m", "FALSE", cost_usd=0.25, outcome=CallOutcome(hit=False))
    record = score(QUESTION, replayed, "sha", [live])
    assert (record["cassette_hit"], record["cost_usd"], record["label"]) == (False, 0.25, "FALSE")
    assert failure_reason(record) == "expected TRUE, got FALSE: 'FALSE'"


def test_a_replayed_question_reprompted_now_counts_one_call_replayed_and_one_live() -> None:
    from pytest_reasoning_evals.chaosbench.metrics import call_counts
    from pytest_reasoning_evals.chaosbench.rows import compact

    replayed = Completion("fake", "m", "hmm", outcome=CallOutcome(hit=True))
    live = Completion("fake", "m", "FALSE", cost_usd=0.25, outcome=CallOutcome(hit=False))
    mixed = score(QUESTION, replayed, "sha", [live])
    assert mixed["cassette_hits"] == 1  # of its two calls: said only when the calls differ
    assert call_counts([compact(mixed)]) == {"total": 2, "cassette_hits": 1, "live": 1}
    both_live = score(QUESTION, live, "sha", [live])
    assert "cassette_hits" not in both_live
    assert call_counts([compact(both_live)]) == {"total": 2, "cassette_hits": 0, "live": 2}
    both_replayed = score(QUESTION, replayed, "sha", [replayed])
    assert call_counts([compact(both_replayed)]) == {"total": 2, "cassette_hits": 2, "live": 0}
