"""The shortcut baseline (`--model=shortcut`): the floor a model must beat. It knows no system and
answers each question from its surface alone, by the first rule that applies:

1. **Entropy comparison.** Two printed permutation entropies ("... have normalised permutation
   entropies of 0.23 and 0.68 respectively ... Is the series of A the more regular of the two?"):
   the lower entropy is the more regular series.
2. **Thresholds on printed numbers.** A printed largest Lyapunov exponent above 0 says chaotic; a
   0-1 test K above 0.5 says chaotic. The question asks whether the indicators agree (they say the
   same), whether they rule chaos out, or whether trajectories converge or are regular (neither
   says chaotic), or else whether the motion is chaotic or sensitive (all say chaotic).
3. **The most common value of the asked property.** The asked predicate is the ontology's phrase
   for it (its claim, its negated claim, the end of its question) that ends last in the question,
   the conclusion; the answer is the value most systems of the shipped catalog
   (`cases/chaosbench/systems/*.yaml`, counted at first use) have for it, ties TRUE.
4. **Negation polarity.** That answer is turned over when the matched phrase is the negated claim
   ("is not chaotic", "is linear", "can be predicted ...") and again for "Is it false that ...".
5. Nothing recognised: TRUE.

The question is the text after the last "Question:" of the last user message (the shipped prompts
put it there), else that whole message.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import NamedTuple

import yaml

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.shipped import shipped

SHORTCUT = "shortcut"  # its registry alias and baseline model_id
NUMBER = r"([-\u2212]?\d+(?:\.\d+)?)"
ENTROPIES = re.compile(rf"entropies of {NUMBER} and {NUMBER}", re.IGNORECASE)
SERIES = re.compile(r"time series of (.+?) and of (.+?) have", re.IGNORECASE)
ASKED_SERIES = re.compile(r"is the series of (.+?) the (more|less) (regular|irregular)", re.IGNORECASE)
LYAPUNOV = re.compile(rf"lyapunov exponent (?:of (?:about )?{NUMBER}|of .+? is estimated at {NUMBER})", re.IGNORECASE)
ZERO_ONE = re.compile(rf"0-1 test.+?\bK = {NUMBER}", re.IGNORECASE)
NOT_CHAOTIC = ("rule out", "converge", "regular")
IS_IT_FALSE = re.compile(r"\bis it false that\b", re.IGNORECASE)
VERBS = ("is", "has", "does", "shows")  # a claim's verb, left out of its phrase


class Decision(NamedTuple):
    label: str  # "TRUE" | "FALSE"
    rule: str  # "entropy" | "threshold" | "property" | "default"


def _label(value: bool) -> str:
    return "TRUE" if value else "FALSE"


def _number(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def question_text(request: Request) -> str:
    """The question of a request: what follows the last "Question:" of the last user message, up
    to a blank line, else the message."""
    text = next((m["content"] for m in reversed(request.messages) if m.get("role") == "user"), "")
    if "Question:" in text:
        text = text.rsplit("Question:", 1)[1].split("\n\n", 1)[0]
    return " ".join(text.split())


def _asked(question: str) -> str:
    """The last sentence: what is asked, after any statement of numbers."""
    return re.split(r"(?<=[.!])\s+(?=[A-Z])", question)[-1].lower()


def _entropy(question: str) -> bool | None:
    values, names, asked = ENTROPIES.search(question), SERIES.search(question), ASKED_SERIES.search(question)
    if not (values and asked):
        return None
    first, second = _number(values[1]), _number(values[2])
    # the series asked about is the second one when its name is the second name
    mine, other = (second, first) if names and asked[1].strip() == names[2].strip() else (first, second)
    more_regular = mine < other
    return (
        more_regular
        if (asked[2].lower(), asked[3].lower()) in (("more", "regular"), ("less", "irregular"))
        else not more_regular
    )


def _threshold(question: str) -> bool | None:
    evidence = []
    lyapunov = LYAPUNOV.search(question)
    if lyapunov:
        evidence.append(_number(lyapunov[1] or lyapunov[2]) > 0)
    zero_one = ZERO_ONE.search(question)
    if zero_one:
        evidence.append(_number(zero_one[1]) > 0.5)
    if not evidence:
        return None
    asked = _asked(question)
    if "agree" in asked:
        return len(set(evidence)) == 1
    if any(word in asked for word in NOT_CHAOTIC):
        return not any(evidence)
    return all(evidence)


def _phrase(text: str) -> str:
    first, _, rest = text.partition(" ")
    return rest if first in VERBS and rest else text


@functools.cache
def _cues() -> tuple[tuple[re.Pattern, str, bool], ...]:
    """(pattern, predicate, negated) for each phrase of each predicate: its claim and negated claim
    without their verb, and the end of its question ("... of {system} periodic?" -> "periodic")."""
    cues = []
    for name, predicate in ontology.PREDICATES.items():
        tail = predicate.question.partition("{system}")[2].strip(" ?")
        phrases = {(_phrase(predicate.claim), False), (_phrase(predicate.negated), True), (tail, False)}
        for phrase, negated in phrases:
            # whole words: "periodic" is not in "quasi-periodic", "linear" not in "nonlinear"
            pattern = re.compile(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", re.IGNORECASE)
            cues.append((pattern, name, negated))
    return tuple(cues)


@functools.cache
def majority_values() -> dict[str, bool]:
    """Each predicate's most common known value over the shipped catalog's systems (ties: True)."""
    counts: dict[str, Counter] = {name: Counter() for name in ontology.PREDICATES}
    for path in sorted(shipped("chaosbench", "systems").glob("*.yaml")):
        for system in yaml.safe_load(path.read_text(encoding="utf-8"))["systems"]:
            for name, value in system["truth"].items():
                if value is not None and name in counts:
                    counts[name][value] += 1
    return {name: count[True] >= count[False] for name, count in counts.items()}


def asked_predicate(question: str) -> tuple[str, bool] | None:
    """(predicate, negated) of the phrase that ends last (the longest of those), or None."""
    best = None
    for pattern, name, negated in _cues():
        for match in pattern.finditer(question):
            key = (match.end(), match.end() - match.start())
            if best is None or key > best[0]:
                best = (key, name, negated)
    return None if best is None else (best[1], best[2])


def decide(question: str) -> Decision:
    for rule, check in (("entropy", _entropy), ("threshold", _threshold)):
        value = check(question)
        if value is not None:
            return Decision(_label(value), rule)
    asked = asked_predicate(question)
    if asked is None:
        return Decision("TRUE", "default")
    name, negated = asked
    value = majority_values()[name] != negated
    return Decision(_label(value != bool(IS_IT_FALSE.search(question))), "property")


def answer(request: Request) -> str:
    """The shortcut's reply to a request (fixed.FixedAnswerModel calls it for `model_id: shortcut`)."""
    return decide(question_text(request)).label
