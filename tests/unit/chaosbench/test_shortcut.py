"""chaosbench/shortcut.py: one test per rule of the shortcut baseline, and where it reads the question."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.shortcut import (
    Decision,
    answer,
    asked_predicate,
    decide,
    majority_values,
    question_text,
)
from pytest_reasoning_evals.shipped import shipped

ENTROPY = (
    "Time series of the logistic map at r = 3.83 and of the logistic map at r = 4 have normalised permutation "
    "entropies of {a} and {b} respectively, where 1 means that all ordinal patterns are equally likely. "
    "Is the series of {asked} the {kind} of the two?"
)


@pytest.mark.parametrize(
    ("a", "b", "asked", "kind", "label"),
    [
        ("0.23", "0.68", "the logistic map at r = 3.83", "more regular", "TRUE"),
        ("0.23", "0.68", "the logistic map at r = 4", "more regular", "FALSE"),
        ("0.98", "0.68", "the logistic map at r = 3.83", "more regular", "FALSE"),
        ("0.98", "0.68", "the logistic map at r = 3.83", "more irregular", "TRUE"),
    ],
)
def test_entropy_rule_the_lower_entropy_is_the_more_regular(a, b, asked, kind, label) -> None:
    assert decide(ENTROPY.format(a=a, b=b, asked=asked, kind=kind)) == Decision(label, "entropy")


@pytest.mark.parametrize(
    ("question", "label"),
    [
        (
            "A simulation of the Hénon map gives a largest Lyapunov exponent of about 0.42. "
            "Does this value indicate sensitive dependence on initial conditions?",
            "TRUE",
        ),
        (
            "Reading a computed largest Lyapunov exponent of -0.87 for the logistic map at r = 3.5, "
            "should one conclude that its trajectories are sensitive to initial conditions?",
            "FALSE",
        ),
        (
            "The largest Lyapunov exponent of the oscillator x'' + 0.2x' + x = 0 is estimated at -0.10. "
            "Do nearby trajectories of this system converge rather than separate exponentially?",
            "TRUE",
        ),
        (
            "The 0-1 test for chaos, applied to a coarsely sampled time series of the Brusselator, returns K = 0.06. "
            "Is this result consistent with chaotic dynamics?",
            "FALSE",
        ),
        (
            "The 0-1 test for chaos, applied to a coarsely sampled time series of the cat map, returns K = 1.00. "
            "Is this result consistent with chaotic dynamics?",
            "TRUE",
        ),
    ],
)
def test_threshold_rule_a_positive_exponent_or_k_above_half_is_chaotic(question: str, label: str) -> None:
    assert decide(question) == Decision(label, "threshold")


CROSS = (
    "For the Duffing oscillator at gamma = 0.41, simulation gives a largest Lyapunov exponent of about {lle}, "
    "and the 0-1 test for chaos applied to a coarsely sampled time series gives K = {k}. {asked}"
)


@pytest.mark.parametrize(
    ("lle", "k", "asked", "label"),
    [
        ("0.46", "-0.01", "Do the two indicators agree with each other about whether the motion is chaotic?", "FALSE"),
        ("-0.15", "0.00", "Do the two indicators agree with each other about whether the motion is chaotic?", "TRUE"),
        ("1.29", "1.00", "Do both indicators point to chaotic dynamics?", "TRUE"),
        ("1.29", "0.00", "Do both indicators point to chaotic dynamics?", "FALSE"),
        ("-0.01", "0.14", "Taken together, do these indicators rule out chaotic dynamics?", "TRUE"),
        ("0.11", "-0.01", "Taken together, do these indicators rule out chaotic dynamics?", "FALSE"),
    ],
)
def test_threshold_rule_combines_two_indicators_as_the_question_asks(lle, k, asked, label) -> None:
    assert decide(CROSS.format(lle=lle, k=k, asked=asked)) == Decision(label, "threshold")


def test_a_parameter_named_k_is_not_a_0_1_test() -> None:
    assert decide("Is the Chirikov standard map at K = 5 on the torus invertible?").rule == "property"


def catalog_majority() -> dict[str, bool]:
    """Counted here from the catalog files, apart from the module's own count."""
    values: dict[str, Counter] = {}
    for path in shipped("chaosbench", "systems").glob("*.yaml"):
        for system in yaml.safe_load(path.read_text(encoding="utf-8"))["systems"]:
            for name, value in system["truth"].items():
                values.setdefault(name, Counter())[value] += 1
    return {name: count[True] >= count[False] for name, count in values.items()}


def test_the_majority_values_are_the_catalogs() -> None:
    majority = majority_values()
    assert len(majority) == 27
    assert majority == catalog_majority()
    # the catalog's own lopsided facts: most systems are chaotic and deterministic, few hyperchaotic
    assert (majority["Chaotic"], majority["Deterministic"], majority["Hyperchaotic"]) == (True, True, False)


@pytest.mark.parametrize(
    ("question", "predicate"),
    [
        ("Is the Lorenz-63 system hyperchaotic?", ("Hyperchaotic", False)),
        ("Is the long-term behaviour of the oscillator x'' + 0.2x' + x = 0 quasi-periodic?", ("QuasiPeriodic", False)),
        ("Is the long-term behaviour of the Brusselator periodic?", ("Periodic", False)),
        ("Is it the case that the tent map is not described by a delay differential equation?", ("DelaySystem", True)),
        ("Given that the baker's map is chaotic, is it possible that it is linear?", ("Nonlinear", True)),
        (
            "Given that the cat map is Hamiltonian, must it also be the case that it cannot be predicted "
            "trajectory by trajectory over long times?",
            ("PointUnpredictable", False),
        ),
        ("Is the weather nice today?", None),
    ],
)
def test_the_asked_property_is_the_phrase_that_ends_last(question: str, predicate) -> None:
    assert asked_predicate(question) == predicate


def test_property_rule_answers_the_most_common_value() -> None:
    assert decide("Is the Sprott C system deterministic?") == Decision("TRUE", "property")
    assert decide("Is the Lorenz-63 system hyperchaotic?") == Decision("FALSE", "property")


def test_negation_polarity_turns_the_answer_over() -> None:
    assert decide("Is it the case that the Sprott C system is not chaotic?") == Decision("FALSE", "property")
    assert decide("Is it false that the Sprott C system is chaotic?") == Decision("FALSE", "property")
    assert decide("Is it false that the Sprott C system is not chaotic?") == Decision("TRUE", "property")
    assert decide("If a system is deterministic, does it follow that it is linear?") == Decision("FALSE", "property")


def test_nothing_recognised_is_true() -> None:
    assert decide("Is the weather nice today?") == Decision("TRUE", "default")


def test_the_question_is_read_from_the_prompt() -> None:
    prompt = PromptTemplate.load(shipped("chaosbench", "prompts"), "zeroshot")
    question = Question("q", "Is it false that the Lorenz-63 system is chaotic?", "FALSE", "atomic", "core", "", "")
    request = prompt.request(question)
    assert question_text(request) == question.question
    assert answer(request) == "FALSE"
