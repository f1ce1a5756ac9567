"""Scoring one ChaosBench answer: normalise the reply, compare with gold, build the item record.

The record is what travels from a worker to the controller (plain JSON-able values only).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from pytest_reasoning_evals.chaosbench.normalize import ENGLISH, AnswerWords, normalize_answer
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.records import (
    ItemRecord,
    MixedHitFields,
    QuestionRecord,
    TurnRecord,
)
from pytest_reasoning_evals.epochs import record_fields
from pytest_reasoning_evals.models import complete_after
from pytest_reasoning_evals.providers.base import Completion, ErrorKind, Model, saving_fields

SUITE = "chaosbench"
EXCERPT_CHARS = 80


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# how a reply's label is read: the harness's normaliser, or a profile's (PromptTemplate.label)
Parse = Callable[[str, AnswerWords], "str | None"]


def _label(completion: Completion, words: AnswerWords, parse: Parse = normalize_answer) -> str | None:
    return None if completion.error else parse(completion.text, words)


def ask(
    question: Question, prompt: PromptTemplate, model: Model, reprompt: int, words: AnswerWords = ENGLISH
) -> QuestionRecord:
    """Ask a question; an UNKNOWN answer (a reply with no TRUE/FALSE, not a failed call) is asked
    again up to `reprompt` times in the same conversation, whose calls share the item's cassette.
    The first labelled reply counts; `words` are the team's own answer words (eval_answer_words)."""
    request = prompt.request(question)
    first = model.complete(request)
    retries: list[Completion] = []
    parse = getattr(prompt, "label", normalize_answer)  # a conftest's own prompt object may have none
    if reprompt and not first.error and _label(first, words, parse) is None:
        # a model of a user's own (a conftest's chaosbench_model) may have no conversation(): separate calls then
        conversation = getattr(model, "conversation", None)
        together = conversation(request.cassette_folder, request.item_id) if conversation else contextlib.nullcontext()
        with together:
            last = first
            while len(retries) < reprompt and not last.error and _label(last, words, parse) is None:
                request = prompt.reprompt(request, last.text)
                last = complete_after(model, request)  # a refused key keeps the paid first reply
                retries.append(last)
    return score(question, first, prompt.sha256, retries, words, parse)


def score(
    question: Question,
    completion: Completion,
    prompt_sha256: str,
    reprompts: Sequence[Completion] = (),
    words: AnswerWords = ENGLISH,
    parse: Parse = normalize_answer,
) -> QuestionRecord:
    """The record of `completion`, the reply to the question, and of the `reprompts` that
    followed it (ask): the label is the first reply's that has one; usage counts every call."""
    calls = [completion, *reprompts]
    labels = [_label(c, words, parse) for c in calls]
    label_from = next((n for n, label in enumerate(labels) if label is not None), None)
    label = None if label_from is None else labels[label_from]
    # a failed reprompt is the item's error (a cassette miss says what to record)
    error = next((c.error for c in calls if c.error), None)
    gold = question.ground_truth
    if gold is None:
        status, correct = "no_gold", None
    elif label is None:
        status, correct = "unknown", None
    else:
        correct = label == gold
        status = "correct" if correct else "wrong"
    return {
        "suite": SUITE,
        "id": question.id,
        "family": question.family,
        "split": question.split,
        "system_id": question.system_id,
        "template": question.template,
        "bias": question.bias,
        "question": question.question,  # the prompt is the run manifest's template around it (report.html)
        "predicates": [dict(pred) for pred in question.predicates],
        "prompt_sha256": prompt_sha256,
        "provider": completion.provider,
        "model": completion.model,
        "raw_text": completion.text,
        "reprompts": len(reprompts),
        "reprompt_replies": [c.text for c in reprompts],
        "label_from": label_from,
        "label": label,
        "gold": gold,
        "correct": correct,
        "status": status,
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "thinking_tokens": sum(c.thinking_tokens for c in calls),
        "latency_ms": round(sum(c.latency_ms for c in calls), 3) if reprompts else completion.latency_ms,
        "cost_usd": sum(c.cost_usd for c in calls),
        "finish_reason": completion.finish_reason,
        "error": error,
        "cassette": completion.outcome.cassette,
        "cassette_hit": _hit(calls),
        **_mixed_hits(calls),
        **record_fields(question),
        **saving_fields(calls),  # records.CacheFields and BatchFields, those not zero
    }


def _mixed_hits(calls: list[Completion]) -> MixedHitFields:
    hits = [c.outcome.hit for c in calls]
    return {"cassette_hits": hits.count(True)} if True in hits and False in hits else {}


def _hit(calls: list[Completion]) -> bool | None:
    """The first call's, unless a reprompt was made now (False): what was paid is counted."""
    hits = [c.outcome.hit for c in calls]
    return False if False in hits else hits[0]


def labelled_reply(record: QuestionRecord | TurnRecord) -> str:
    """The reply whose label counts; without one, the last reply."""
    replies = [record["raw_text"], *record.get("reprompt_replies", ())]
    n = record.get("label_from")
    return replies[-1 if n is None else n]


def failure_reason(record: ItemRecord | TurnRecord) -> str | None:
    """One line saying why the item did not pass, or None when it did."""
    if "turns" in record:  # a dialogue: the first turn that did not pass, and how many did not
        failing = [t for t in record["turns"] if t["status"] in ("wrong", "unknown")]
        if not failing:
            return None
        first = failing[0]
        more = f" ({len(failing)} of {len(record['turns'])} turns did not pass)" if len(failing) > 1 else ""
        return f"turn {first['turn']}: {failure_reason(first)}{more}"
    if record["status"] == "wrong":
        return f"expected {record['gold']}, got {record['label']}: {excerpt(labelled_reply(record))!r}"
    if record["status"] == "unknown":
        if record["error"]:
            error = record["error"]
            # a miss is our own one line, ending with the file to repair: never cut
            shown = " ".join(error.split()) if ErrorKind.of(error) is ErrorKind.MISS else excerpt(error)
            return f"UNKNOWN (expected {record['gold']}): model call failed: {shown}"
        asked = len(record.get("reprompt_replies", ()))
        again = f" (asked {asked + 1} times)" if asked else ""
        return f"UNKNOWN (expected {record['gold']}): no TRUE/FALSE in reply{again} {excerpt(labelled_reply(record))!r}"
    return None
