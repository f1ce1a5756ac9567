"""The ChaosBench ontology: 27 predicates about dynamical systems and the axioms between them.

Ground truth for the question bank comes from per-system truth assignments over these
predicates (see ``bankgen.systems``); the axioms below are used to close those
assignments, to check them, to count logical violations in a model's answers and to build
multi-hop questions.

Axioms come in two kinds:

* ``REQUIRES[a] = (b, ...)``: whenever ``a`` is true, every ``b`` is true.
* ``EXCLUDES``: pairs ``(a, b)`` that are never both true.

Only implications and exclusions are used, so the all-false assignment always satisfies the
axioms and every predicate can be false; tests/unit/chaosbench/test_ontology.py checks that every predicate can
also be true.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "Predicate",
    "PREDICATES",
    "REQUIRES",
    "EXCLUDES",
    "requires_closure",
    "excludes_closure",
    "violations",
    "requires_chains",
]


@dataclass(frozen=True)
class Predicate:
    name: str  # "PosLyap"
    definition: str  # one sentence
    claim: str  # third person, for statements: "has a positive largest Lyapunov exponent"
    negated: str  # "does not have a positive largest Lyapunov exponent"
    question: str  # "Does {system} have a positive largest Lyapunov exponent?"


def _p(name: str, definition: str, claim: str, negated: str, question: str) -> Predicate:
    return Predicate(name, definition, claim, negated, question)


_PREDICATE_LIST = (
    _p(
        "Chaotic",
        "Deterministic, bounded, aperiodic long-term behaviour with sensitive dependence on "
        "initial conditions (a positive largest Lyapunov exponent).",
        "is chaotic",
        "is not chaotic",
        "Is {system} chaotic?",
    ),
    _p(
        "Deterministic",
        "The future state is fully determined by the present state; the evolution law has no noise terms.",
        "is deterministic",
        "is not deterministic",
        "Is {system} deterministic?",
    ),
    _p(
        "Stochastic",
        "The evolution law contains random terms (noise).",
        "is stochastic",
        "is not stochastic",
        "Is {system} stochastic?",
    ),
    _p(
        "PosLyap",
        "The largest Lyapunov exponent is positive.",
        "has a positive largest Lyapunov exponent",
        "does not have a positive largest Lyapunov exponent",
        "Does {system} have a positive largest Lyapunov exponent?",
    ),
    _p(
        "Sensitive",
        "Nearby initial conditions separate (exponentially) fast: sensitive dependence on initial conditions.",
        "shows sensitive dependence on initial conditions",
        "does not show sensitive dependence on initial conditions",
        "Does {system} show sensitive dependence on initial conditions?",
    ),
    _p(
        "StrangeAttr",
        "The system has a strange attractor: an attracting set with fractal structure.",
        "has a strange attractor",
        "does not have a strange attractor",
        "Does {system} have a strange attractor?",
    ),
    _p(
        "Periodic",
        "The generic long-term behaviour is periodic (a periodic attractor, or periodic orbits filling phase space).",
        "has periodic long-term behaviour",
        "does not have periodic long-term behaviour",
        "Is the long-term behaviour of {system} periodic?",
    ),
    _p(
        "QuasiPeriodic",
        "The generic long-term behaviour is quasi-periodic: motion on a torus with incommensurate frequencies.",
        "has quasi-periodic long-term behaviour",
        "does not have quasi-periodic long-term behaviour",
        "Is the long-term behaviour of {system} quasi-periodic?",
    ),
    _p(
        "FixedPointAttr",
        "Generic trajectories converge to a stable equilibrium (an attracting fixed point).",
        "converges to a stable fixed point",
        "does not converge to a stable fixed point",
        "Does {system} converge to a stable fixed point?",
    ),
    _p(
        "Dissipative",
        "Phase-space volume contracts on average (the Lyapunov exponents sum to a negative number).",
        "is dissipative",
        "is not dissipative",
        "Is {system} dissipative?",
    ),
    _p(
        "Conservative",
        "The evolution is invertible and preserves phase-space volume or a smooth invariant "
        "measure (non-invertible maps that keep a measure only in the pull-back sense do not count).",
        "is conservative",
        "is not conservative",
        "Is {system} conservative?",
    ),
    _p(
        "Bounded",
        "Generic trajectories remain in a bounded region of state space.",
        "has bounded trajectories",
        "does not have bounded trajectories",
        "Do the trajectories of {system} stay bounded?",
    ),
    _p(
        "Mixing",
        "The natural invariant measure (physical measure of the attractor, Liouville measure on "
        "the energy surface, or stationary law) is mixing: correlations between past and future "
        "decay.",
        "is mixing",
        "is not mixing",
        "Is {system} mixing?",
    ),
    _p(
        "Ergodic",
        "The natural invariant measure (physical measure of the attractor, Liouville measure on "
        "the energy surface, or stationary law) is ergodic: time averages along generic "
        "trajectories equal its averages.",
        "is ergodic",
        "is not ergodic",
        "Is {system} ergodic?",
    ),
    _p(
        "ContinuousTime",
        "Time is continuous (flows, delay and partial differential equations).",
        "evolves in continuous time",
        "does not evolve in continuous time",
        "Does {system} evolve in continuous time?",
    ),
    _p(
        "DiscreteTime",
        "Time advances in discrete steps (iterated maps).",
        "evolves in discrete time steps",
        "does not evolve in discrete time steps",
        "Does {system} evolve in discrete time steps?",
    ),
    _p(
        "Autonomous",
        "The evolution law does not depend explicitly on time (no external forcing).",
        "is autonomous",
        "is not autonomous",
        "Is {system} autonomous?",
    ),
    _p(
        "Invertible",
        "The evolution is uniquely invertible: the past is determined by the present.",
        "is invertible",
        "is not invertible",
        "Is {system} invertible?",
    ),
    _p(
        "DelaySystem",
        "The system is a delay differential equation.",
        "is described by a delay differential equation",
        "is not described by a delay differential equation",
        "Is {system} described by a delay differential equation?",
    ),
    _p(
        "PDE",
        "The system is a partial differential equation (spatially extended).",
        "is described by a partial differential equation",
        "is not described by a partial differential equation",
        "Is {system} described by a partial differential equation?",
    ),
    _p(
        "Nonlinear",
        "The evolution law is nonlinear in the state.",
        "is nonlinear",
        "is linear",
        "Is {system} nonlinear?",
    ),
    _p(
        "Hyperchaotic",
        "At least two Lyapunov exponents are positive.",
        "is hyperchaotic",
        "is not hyperchaotic",
        "Is {system} hyperchaotic?",
    ),
    _p(
        "PointUnpredictable",
        "Long-term prediction of individual trajectories is impossible in practice.",
        "cannot be predicted trajectory by trajectory over long times",
        "can be predicted trajectory by trajectory over long times",
        "Is long-term prediction of individual trajectories of {system} impossible in practice?",
    ),
    _p(
        "StatPredictable",
        "Long-term statistical properties (averages, distributions) are predictable.",
        "has predictable long-term statistics",
        "does not have predictable long-term statistics",
        "Are the long-term statistics of {system} predictable?",
    ),
    _p(
        "Hamiltonian",
        "The dynamics derives from a Hamiltonian (symplectic) structure.",
        "is Hamiltonian",
        "is not Hamiltonian",
        "Is {system} Hamiltonian?",
    ),
    _p(
        "Integrable",
        "The system is completely integrable: it has enough conserved quantities and only regular motion.",
        "is completely integrable",
        "is not completely integrable",
        "Is {system} completely integrable?",
    ),
    _p(
        "FiniteDimensional",
        "The state space is finite-dimensional (false for delay equations and PDEs).",
        "has a finite-dimensional state space",
        "has an infinite-dimensional state space",
        "Does {system} have a finite-dimensional state space?",
    ),
)

PREDICATES: dict[str, Predicate] = {p.name: p for p in _PREDICATE_LIST}

# Direct "requires" axioms: REQUIRES[a] lists every b with a => b. Every predicate has an entry
# (possibly empty) so that REQUIRES[p] works for any p.
_REQUIRES_DIRECT: dict[str, tuple[str, ...]] = {
    "Chaotic": (
        "Deterministic",
        "PosLyap",
        "Sensitive",
        "Bounded",
        "Nonlinear",
        "PointUnpredictable",
        "StatPredictable",
    ),
    "PosLyap": ("Sensitive",),
    "Sensitive": ("PointUnpredictable",),
    "Hyperchaotic": ("Chaotic",),
    # added: linear dynamics only has points, subspaces or tori as attractors, never fractal sets
    "StrangeAttr": ("Dissipative", "Bounded", "Nonlinear"),
    # added Invertible: a Hamiltonian flow (or symplectic map) has a unique inverse (time reversal)
    "Hamiltonian": ("Conservative", "Invertible"),
    "Mixing": ("Ergodic",),
    # added: "conservative" is used for invertible evolutions only (see its definition), so that
    # expanding maps keeping a smooth measure in the pull-back sense (tent, doubling) are not
    "Conservative": ("Invertible",),
    "DelaySystem": ("ContinuousTime",),
    "PDE": ("ContinuousTime",),
    "Stochastic": ("PointUnpredictable",),
    # added: integrability is used in the Liouville-Arnold sense (of Hamiltonian systems)
    "Integrable": ("Hamiltonian",),
    # added: a trajectory converging to an equilibrium, a cycle or a torus stays bounded
    "FixedPointAttr": ("Bounded",),
    "Periodic": ("Bounded",),
    "QuasiPeriodic": ("Bounded",),
}
REQUIRES: dict[str, tuple[str, ...]] = {name: _REQUIRES_DIRECT.get(name, ()) for name in PREDICATES}

# Direct "excludes" axioms, each unordered pair once (the meaning is symmetric).
EXCLUDES: tuple[tuple[str, str], ...] = (
    ("Chaotic", "Periodic"),
    ("Chaotic", "QuasiPeriodic"),
    ("Chaotic", "FixedPointAttr"),
    ("Chaotic", "Stochastic"),
    ("Chaotic", "Integrable"),
    ("Stochastic", "Deterministic"),
    ("Conservative", "Dissipative"),
    ("Conservative", "StrangeAttr"),
    ("Conservative", "FixedPointAttr"),
    ("ContinuousTime", "DiscreteTime"),
    ("DelaySystem", "FiniteDimensional"),
    ("PDE", "FiniteDimensional"),
    ("Periodic", "QuasiPeriodic"),
    ("Periodic", "FixedPointAttr"),
    ("QuasiPeriodic", "FixedPointAttr"),
    ("Integrable", "Mixing"),
    # added: convergence to an equilibrium, a cycle or a torus gives non-positive exponents
    ("PosLyap", "Periodic"),
    ("PosLyap", "QuasiPeriodic"),
    ("PosLyap", "FixedPointAttr"),
    # added: regular (integrable) motion has zero Lyapunov exponents
    ("Integrable", "PosLyap"),
    # added: a measure on a periodic orbit (or a torus rotation) has no decay of correlations
    ("Mixing", "Periodic"),
    ("Mixing", "QuasiPeriodic"),
)


def _closure(requires: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    names = list(PREDICATES)
    for a, bs in requires.items():
        for name in (a, *bs):
            if name not in names:
                names.append(name)
    out: dict[str, frozenset[str]] = {}
    for start in names:
        seen: set[str] = set()
        stack = list(requires.get(start, ()))
        while stack:
            b = stack.pop()
            if b in seen:
                continue
            seen.add(b)
            stack.extend(requires.get(b, ()))
        out[start] = frozenset(seen)
    return out


def _symmetric(excludes: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, b in excludes:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def requires_closure(
    requires: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, frozenset[str]]:
    """Transitive closure of the requires axioms: p -> every predicate p implies (p excluded
    unless it lies on a cycle)."""
    return _closure(REQUIRES if requires is None else requires)


def excludes_closure(
    requires: Mapping[str, Iterable[str]] | None = None,
    excludes: Iterable[tuple[str, str]] | None = None,
) -> dict[str, frozenset[str]]:
    """Symmetric exclusions including derived ones: A requires B and B excludes C => A excludes C
    (applied on both sides, so A excludes C whenever something A implies excludes something C
    implies)."""
    closure = _closure(REQUIRES if requires is None else requires)
    direct = _symmetric(EXCLUDES if excludes is None else excludes)
    up = {p: closure[p] | {p} for p in closure}
    for p in direct:
        up.setdefault(p, frozenset({p}))
    out: dict[str, frozenset[str]] = {}
    for a in up:
        reach_a = set()
        for x in up[a]:
            reach_a |= direct.get(x, set())
        out[a] = frozenset(c for c in up if up[c] & reach_a)
    return out


def _order(name: str) -> tuple[int, str]:
    keys = list(PREDICATES)
    return (keys.index(name), name) if name in PREDICATES else (len(keys), name)


def violations(assignment: Mapping[str, bool]) -> list[str]:
    """Messages naming every axiom the (possibly partial) assignment breaks.

    Predicates missing from the assignment (or set to None) are unknown and ignored. Requires
    axioms are checked through their transitive closure, exclusions through the derived
    (closed) exclusions, so a partial assignment is flagged whenever no completion can satisfy
    the axioms through a single chain of implications.
    """
    known = {k: bool(v) for k, v in assignment.items() if v is not None and k in PREDICATES}
    closure = requires_closure()
    excl = excludes_closure()
    out: list[str] = []
    names = [p for p in PREDICATES if p in known]
    for p in names:
        if not known[p]:
            continue
        for q in sorted(closure[p], key=_order):
            if q in known and not known[q]:
                out.append(f"{p}=True requires {q}, but {q}=False")
    true_names = [p for p in names if known[p]]
    for i, a in enumerate(true_names):
        for b in true_names[i + 1 :]:
            if b in excl[a]:
                out.append(f"{a} and {b} are exclusive, both True")
    return out


def requires_chains(min_len: int = 2, max_len: int = 4) -> list[tuple[str, ...]]:
    """Simple paths P1 -> P2 -> ... -> Pk through DIRECT requires axioms, with
    min_len <= k <= max_len counted in predicates (k = 2 is a single axiom). Sorted."""
    out: list[tuple[str, ...]] = []

    def walk(path: tuple[str, ...]) -> None:
        if len(path) >= min_len:
            out.append(path)
        if len(path) >= max_len:
            return
        for nxt in REQUIRES.get(path[-1], ()):
            if nxt not in path:
                walk(path + (nxt,))

    for start in PREDICATES:
        walk((start,))
    return sorted(out)
