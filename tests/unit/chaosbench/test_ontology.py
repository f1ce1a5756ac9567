"""chaosbench/ontology.py: the predicates, axioms, closures and violations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pytest

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.ontology import (
    EXCLUDES,
    PREDICATES,
    REQUIRES,
    excludes_closure,
    requires_chains,
    requires_closure,
    violations,
)

EXPECTED_ORDER = [
    "Chaotic", "Deterministic", "Stochastic", "PosLyap", "Sensitive", "StrangeAttr", "Periodic",
    "QuasiPeriodic", "FixedPointAttr", "Dissipative", "Conservative", "Bounded", "Mixing",
    "Ergodic", "ContinuousTime", "DiscreteTime", "Autonomous", "Invertible", "DelaySystem", "PDE",
    "Nonlinear", "Hyperchaotic", "PointUnpredictable", "StatPredictable", "Hamiltonian",
    "Integrable", "FiniteDimensional",
]  # fmt: skip


def _raw_tokens() -> list[str]:
    # CamelCase names and the acronym are never English; single words are, except when
    # capitalised mid-sentence ("Hamiltonian" is a proper adjective and stays allowed).
    return [name for name in PREDICATES if name != "Hamiltonian"]


# ----------------------------------------------------------------------------- violations


def _clean_assignment() -> dict[str, bool]:
    truth = {p: False for p in PREDICATES}
    truth.update({p: True for p in ("Chaotic", "Deterministic", "PosLyap", "Sensitive",
                                    "StrangeAttr", "Dissipative", "Bounded", "Mixing", "Ergodic",
                                    "ContinuousTime", "Autonomous", "Invertible", "Nonlinear",
                                    "PointUnpredictable", "StatPredictable",
                                    "FiniteDimensional")})  # fmt: skip
    return truth


# ----------------------------------------------------------------------------- broken axiom sets


def _check_names(requires: Mapping[str, Iterable[str]], excludes: Iterable[tuple[str, str]]) -> list[str]:
    problems = []
    for a, bs in requires.items():
        for name in (a, *bs):
            if name not in PREDICATES:
                problems.append(f"unknown predicate {name!r} in requires axiom for {a!r}")
    for pair in excludes:
        for name in pair:
            if name not in PREDICATES:
                problems.append(f"unknown predicate {name!r} in excludes axiom {pair!r}")
    return problems


def check_consistency(
    requires: Mapping[str, Iterable[str]] | None = None,
    excludes: Iterable[tuple[str, str]] | None = None,
) -> list[str]:
    """Return human-readable problems with the axioms ([] when consistent); only these tests use it.

    Every predicate p must be satisfiable: the assignment making {p} and everything p requires
    true (and all else false) satisfies every requires axiom by construction, so p is satisfiable
    exactly when that set contains no excluded pair. Also reported: unknown names, a predicate
    excluding itself, duplicate exclusion pairs and a predicate requiring one it excludes.
    """
    requires = REQUIRES if requires is None else requires
    excludes = tuple(EXCLUDES if excludes is None else excludes)
    problems = _check_names(requires, excludes)
    seen_pairs: set[frozenset[str]] = set()
    for a, b in excludes:
        if a == b:
            problems.append(f"{a} excludes itself")
        key = frozenset((a, b))
        if key in seen_pairs:
            problems.append(f"exclusion {a} x {b} is listed more than once")
        seen_pairs.add(key)
    closure = requires_closure(requires)
    direct = ontology._symmetric(excludes)
    for p in PREDICATES:
        for q in sorted(closure[p] & direct.get(p, set()), key=ontology._order):
            problems.append(f"{p} requires {q} but also excludes it")
        members = sorted(closure[p] | {p}, key=ontology._order)
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if b in direct.get(a, set()) and p not in (a, b):
                    problems.append(f"{p} can never be true: it requires {a} and {b}, which are exclusive")
    return problems


# ----------------------------------------------------------------------------- predicates


def test_exactly_27_predicates_in_fixed_order():
    assert list(PREDICATES) == EXPECTED_ORDER
    assert len(PREDICATES) == 27
    for name, pred in PREDICATES.items():
        assert pred.name == name


@pytest.mark.parametrize("name", EXPECTED_ORDER)
def test_phrasing_is_natural(name):
    pred = PREDICATES[name]
    for field in ("definition", "claim", "negated", "question"):
        text = getattr(pred, field)
        assert isinstance(text, str) and text.strip(), (name, field)
    for field in ("claim", "negated", "question"):
        text = getattr(pred, field)
        for token in _raw_tokens():
            assert not re.search(rf"\b{token}\b", text), (name, field, token)
        for token in ("PosLyap", "StrangeAttr", "FixedPointAttr", "QuasiPeriodic",
                      "ContinuousTime", "DiscreteTime", "DelaySystem", "PointUnpredictable",
                      "StatPredictable", "FiniteDimensional", "PDE"):  # fmt: skip
            assert token not in text, (name, field, token)
    assert pred.claim != pred.negated
    assert pred.question.count("{system}") == 1
    assert pred.question.endswith("?")
    assert pred.question[0].isupper()
    rendered = pred.question.format(system="the Lorenz-63 system")
    assert "the Lorenz-63 system" in rendered and "{" not in rendered


# ----------------------------------------------------------------------------- axioms


def test_axioms_name_only_known_predicates():
    assert set(REQUIRES) == set(PREDICATES)
    for a, bs in REQUIRES.items():
        assert set(bs) <= set(PREDICATES), a
        assert a not in bs
    pairs = [frozenset(pair) for pair in EXCLUDES]
    assert len(pairs) == len(set(pairs)), "each exclusion pair is listed once"
    for a, b in EXCLUDES:
        assert a in PREDICATES and b in PREDICATES and a != b


def test_core_axioms_present():
    for b in ("Deterministic", "PosLyap", "Sensitive", "Bounded", "Nonlinear",
              "PointUnpredictable", "StatPredictable"):  # fmt: skip
        assert b in REQUIRES["Chaotic"]
    assert "Chaotic" in REQUIRES["Hyperchaotic"]
    assert {"Dissipative", "Bounded"} <= set(REQUIRES["StrangeAttr"])
    assert "Conservative" in REQUIRES["Hamiltonian"]
    assert "Ergodic" in REQUIRES["Mixing"]
    pairs = {frozenset(p) for p in EXCLUDES}
    for pair in [("Chaotic", "Periodic"), ("Chaotic", "Stochastic"),
                 ("Stochastic", "Deterministic"), ("Conservative", "Dissipative"),
                 ("ContinuousTime", "DiscreteTime"), ("PDE", "FiniteDimensional"),
                 ("Integrable", "Mixing")]:  # fmt: skip
        assert frozenset(pair) in pairs


def test_axioms_are_consistent():
    assert check_consistency() == []


def test_requires_closure_is_transitive():
    closure = requires_closure()
    assert set(closure) >= set(PREDICATES)
    assert "Sensitive" in closure["Hyperchaotic"]  # Hyperchaotic -> Chaotic -> Sensitive
    assert "PointUnpredictable" in closure["Hyperchaotic"]
    assert "Conservative" in closure["Integrable"]
    for a, reach in closure.items():
        for b in reach:
            assert closure[b] <= reach | {b}, (a, b)


def test_excludes_closure_derived_and_symmetric():
    excl = excludes_closure()
    # derived: Hyperchaotic requires Chaotic, Chaotic excludes Periodic
    assert "Periodic" in excl["Hyperchaotic"]
    assert frozenset(("Hyperchaotic", "Periodic")) not in {frozenset(p) for p in EXCLUDES}
    assert "Stochastic" in excl["Hyperchaotic"]  # through Deterministic
    for a, others in excl.items():
        assert a not in others
        for b in others:
            assert a in excl[b], (a, b)
    for a, b in EXCLUDES:
        assert b in excl[a] and a in excl[b]


def test_violations_clean_assignment():
    assert violations(_clean_assignment()) == []
    assert violations({}) == []


def test_violation_chaotic_not_deterministic():
    truth = _clean_assignment()
    truth["Deterministic"] = False
    assert violations(truth) == ["Chaotic=True requires Deterministic, but Deterministic=False"]


def test_violation_chaotic_and_periodic():
    truth = _clean_assignment()
    truth["Periodic"] = True
    found = violations(truth)
    assert "Chaotic and Periodic are exclusive, both True" in found
    assert all("Periodic" in message for message in found)


def test_violations_partial_assignment_with_unknowns():
    # unknown predicates are ignored ...
    assert violations({"Chaotic": True}) == []
    assert violations({"Chaotic": True, "Deterministic": None, "Periodic": False}) == []
    # ... but a chain through unknown predicates still binds
    assert violations({"Hyperchaotic": True, "Sensitive": False}) == [
        "Hyperchaotic=True requires Sensitive, but Sensitive=False"
    ]
    # pairs are named in predicate order
    assert violations({"Hyperchaotic": True, "Periodic": True}) == [
        "Periodic and Hyperchaotic are exclusive, both True"
    ]
    # false antecedents constrain nothing
    assert violations({"Chaotic": False, "Deterministic": False, "Periodic": True}) == []


def test_planted_inconsistent_axioms_detected():
    broken = dict(REQUIRES)
    broken["Periodic"] = REQUIRES["Periodic"] + ("Chaotic",)
    problems = check_consistency(requires=broken)
    assert any("Periodic requires Chaotic but also excludes it" in p for p in problems)

    broken = dict(REQUIRES)
    broken["Ergodic"] = ("Mixing", "Integrable")
    problems = check_consistency(requires=broken)
    assert any(p.startswith("Ergodic can never be true") for p in problems), problems

    problems = check_consistency(excludes=EXCLUDES + (("Chaotic", "Nonlinear"),))
    assert any("Chaotic requires Nonlinear but also excludes it" in p for p in problems)
    # a derived conflict two steps away: Hyperchaotic -> Chaotic -> Bounded
    problems = check_consistency(excludes=EXCLUDES + (("Hyperchaotic", "Bounded"),))
    assert any(p.startswith("Hyperchaotic requires Bounded") for p in problems), problems

    problems = check_consistency(requires={"Chaotic": ("Random",)})
    assert any("unknown predicate" in p for p in problems)
    # the module's own axioms are untouched by the planted sets
    assert check_consistency() == []


# ----------------------------------------------------------------------------- chains


def test_requires_chains_follow_direct_edges():
    chains = requires_chains()
    assert chains, "there are multi-hop chains"
    assert chains == sorted(chains)
    assert chains == requires_chains()
    for chain in chains:
        assert 2 <= len(chain) <= 4
        assert len(set(chain)) == len(chain)
        for a, b in zip(chain, chain[1:]):
            assert b in REQUIRES[a], chain
    assert ("Hyperchaotic", "Chaotic", "PosLyap", "Sensitive") in chains
    edges = {(a, b) for a, bs in REQUIRES.items() for b in bs}
    assert set(requires_chains(2, 2)) == edges
    long_chains = requires_chains(3, 4)
    assert long_chains and all(len(c) >= 3 for c in long_chains)
