"""ChaosBench-Logic dialogues: asking the turns as one conversation, and reading the claims the
answers make.

A dialogue is one pytest item. Its turns go to the model as a real conversation: turn n is sent
with the user turns and the model's replies 1..n-1 as history, so "Given your previous answer,
..." means what it says. All calls of a dialogue share one cassette.

An UNKNOWN turn is not asked again (--eval-reprompt is for questions): a reprompt would become
part of the history every later turn is asked with, so the conversation (and each later turn's
request and cassette) would depend on the option and no longer be the bank's dialogue. An UNKNOWN
turn claims nothing and counts in unknown_turns.

Claims: each turn names the predicates it asks about with a polarity ("is it chaotic?" ->
Chaotic positive; "is it true that it is not chaotic?" -> Chaotic negative). Answering TRUE to a
positive question claims the predicate holds, FALSE claims it does not; a negative question
flips both. UNKNOWN answers claim nothing. Nothing is guessed from the wording.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.normalize import ENGLISH, AnswerWords, normalize_answer
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Dialogue
from pytest_reasoning_evals.chaosbench.records import DialogueRecord, TurnRecord
from pytest_reasoning_evals.chaosbench.rows import DialogueRow
from pytest_reasoning_evals.chaosbench.scoring import SUITE, score
from pytest_reasoning_evals.epochs import cassette_id, record_fields, seed_of
from pytest_reasoning_evals.models import complete_after
from pytest_reasoning_evals.providers.base import Completion, Model

NOT_ASKED = "not asked: an earlier turn of this dialogue failed"


def run_dialogue(
    dialogue: Dialogue, prompt: PromptTemplate, model: Model, words: AnswerWords = ENGLISH
) -> DialogueRecord:
    """Ask every turn with the history so far; -> the dialogue's record (turn records inside).
    `words` are the team's own answer words (eval_answer_words)."""
    history: tuple[dict, ...] = ()
    turns: list[TurnRecord] = []
    failed: str | None = None
    with model.conversation(prompt.cassette_folder, cassette_id(dialogue)):
        for question in dialogue.turns:
            if failed is not None:
                completion = Completion(provider="", model="", text="", error=NOT_ASKED)
            else:
                request = prompt.request(
                    question, item_id=cassette_id(dialogue), history=history, seed=seed_of(dialogue)
                )
                # after a turn was asked, a refused key keeps the turns already answered and paid
                completion = complete_after(model, request) if turns else model.complete(request)
                if completion.error:
                    failed = completion.error
                else:
                    history = request.messages + ({"role": "assistant", "content": completion.text},)
            record = score(
                question, completion, prompt.sha256, words=words, parse=getattr(prompt, "label", normalize_answer)
            )
            record.update(dialogue_id=dialogue.id, turn=question.turn)
            turns.append(record)
    return dialogue_record(dialogue, turns, prompt.sha256)


def _status(turns: list[TurnRecord]) -> tuple[str, bool | None]:
    statuses = {t["status"] for t in turns}
    for status, correct in (("wrong", False), ("unknown", False), ("no_gold", None)):
        if status in statuses:
            return status, correct
    return "correct", True


def dialogue_record(dialogue: Dialogue, turns: list[TurnRecord], prompt_sha256: str) -> DialogueRecord:
    """A dialogue is correct when every turn is; an UNKNOWN turn makes it not correct."""
    status, correct = _status(turns)
    asked = [t for t in turns if t["provider"]]
    errors = [t["error"] for t in turns if t["error"] and t["error"] != NOT_ASKED]
    return {
        "suite": SUITE,
        "kind": "dialogue",
        "id": dialogue.id,
        "family": dialogue.family,
        "split": dialogue.split,
        "system_id": dialogue.turns[0].system_id,
        "prompt_sha256": prompt_sha256,
        "provider": asked[0]["provider"] if asked else None,
        "model": asked[0]["model"] if asked else None,
        "num_turns": len(turns),
        "num_correct_turns": sum(t["correct"] is True for t in turns),
        "correct": correct,
        "status": status,
        "input_tokens": sum(t["input_tokens"] for t in turns),
        "output_tokens": sum(t["output_tokens"] for t in turns),
        "thinking_tokens": sum(t["thinking_tokens"] for t in turns),
        "latency_ms": round(sum(t["latency_ms"] for t in turns), 3),
        "cost_usd": sum(t["cost_usd"] for t in turns),
        "error": errors[0] if errors else None,
        "cassette": next((t["cassette"] for t in turns if t["cassette"]), None),
        "cassette_hit": all(t["cassette_hit"] for t in asked)
        if asked and asked[0]["cassette_hit"] is not None
        else None,
        "turns": turns,
        **record_fields(dialogue),
    }


# --- claims and the two consistency metrics ------------------------------------------------


@dataclass(frozen=True)
class Claim:
    system_id: str
    predicate: str
    value: bool
    turn: int


def claims(dialogue: DialogueRow) -> list[Claim]:
    """What the model's answers in one dialogue assert, from the turns' own predicates."""
    out = []
    for turn in dialogue.turns:
        if turn.label is None:
            continue
        said_true = turn.label == "TRUE"
        for pred in turn.predicates:
            positive = pred.polarity == "positive"
            out.append(Claim(turn.system_id, pred.name, said_true == positive, turn.turn))
    return out


def contradictions(found: list[Claim]) -> list[str]:
    """(system, predicate) pairs the model asserted both ways, e.g. Chaotic at turn 1 and
    'not Chaotic' at turn 5."""
    values: dict[tuple[str, str], dict[bool, int]] = {}
    for c in found:
        values.setdefault((c.system_id, c.predicate), {}).setdefault(c.value, c.turn)
    return [
        f"{system}: {predicate} asserted at turn {seen[True]} and denied at turn {seen[False]}"
        for (system, predicate), seen in values.items()
        if len(seen) == 2
    ]


def fol_violations(found: list[Claim]) -> list[str]:
    """Axioms (requires / excludes, transitively closed) that the asserted assignment breaks,
    per system. A predicate asserted both ways is a contradiction, counted there, and left out
    here so one slip is not counted twice."""
    by_system: dict[str, dict[str, set[bool]]] = {}
    for c in found:
        by_system.setdefault(c.system_id, {}).setdefault(c.predicate, set()).add(c.value)
    out = []
    for system, values in by_system.items():
        assignment = {p: next(iter(v)) for p, v in values.items() if len(v) == 1}
        out += [f"{system}: {message}" for message in ontology.violations(assignment)]
    return out
