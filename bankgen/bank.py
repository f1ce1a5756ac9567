"""The ChaosBench-Logic bank generator: ontology + systems catalog + computed indicators -> questions.

`python -m bankgen build-bank --seed 42 [--scale default|full]` writes one JSONL file per family,
dialogues.jsonl and manifest.json. Everything is deterministic: inputs are committed files
(catalogs, indicator and sweep caches), iteration is in sorted order, randomness comes from
one seeded generator, and numbers in question text are formatted with fixed precision.

Truth never comes from the generator's own opinion: atomic facts come from the curated truth
assignments (checked against the axioms), implications and exclusions from the axiom closures,
indicator and regime facts from the project's own simulations.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bankgen.systems import System, load_all
from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "chaosbench"
INDICATORS = CASES_DIR / "indicators.json"
SWEEPS = CASES_DIR / "sweeps.json"
SCALES = {"default": 100, "full": None}  # questions per family (balanced); None: every balanced draft
DIALOGUES = {"default": 60, "full": 600}
BUILD_VERSION = 1
# Chaos thresholds on the computed indicators; values in between give no question.
LLE_EPS = 0.01
K_CHAOTIC, K_REGULAR = 0.8, 0.2
PE_GAP = 0.1  # permutation entropies compared only when this far apart

# The template of each family that is held out of every other split (heldout_templates).
HELDOUT_TEMPLATES = {
    "atomic": "atomic.would_you_say.v1",
    "multi_hop": "multi_hop.chain_stated.v1",
    "indicator_diagnostics": "indicator.lle_reading.v1",
    "regime_transition": "regime.settles_periodic.v1",
    "fol_inference": "fol.contrapositive.v1",
}
DISTRACTORS = (
    "Numerical studies of this system usually use double-precision arithmetic.",
    "Such systems are often discussed in undergraduate courses on nonlinear dynamics.",
    "Plots of its trajectories appear in many textbooks.",
    "Researchers have simulated it with several different integration schemes.",
)


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def pred(name: str, polarity: str = "positive") -> dict:
    return {"name": name, "polarity": polarity}


def known(truth: dict, *names: str) -> bool:
    """Every named predicate has a catalog value (null = unknown, never asked)."""
    return all(truth[n] is not None for n in names)


def known_preds(s: System, value: bool) -> list[str]:
    return sorted(p for p in ontology.PREDICATES if s.truth[p] is value)


@dataclass
class Draft:
    """A question before sampling, id and split assignment."""

    question: str
    truth: bool
    family: str
    system_id: str
    template: str
    predicates: list[dict]
    extra: dict = field(default_factory=dict)

    def key(self) -> str:
        return " ".join(self.question.lower().split())


@dataclass(frozen=True)
class Inputs:
    core: tuple[System, ...]
    extended: tuple[System, ...]
    indicators: dict
    sweeps: dict


def load_inputs() -> Inputs:
    systems = load_all()
    indicators = json.loads(INDICATORS.read_text(encoding="utf-8"))["systems"]
    sweeps = json.loads(SWEEPS.read_text(encoding="utf-8"))["sweeps"]
    return Inputs(
        core=tuple(s for s in systems if s.origin == "core"),
        extended=tuple(s for s in systems if s.origin == "dysts"),
        indicators=indicators,
        sweeps=sweeps,
    )


# --- phrasing -----------------------------------------------------------------------------


def ask(p: str, system: str) -> str:
    return ontology.PREDICATES[p].question.format(system=system)


def claim(p: str, value: bool = True) -> str:
    spec = ontology.PREDICATES[p]
    return spec.claim if value else spec.negated


def direct_claims(s: System, family: str, templates: tuple[str, ...]) -> list[Draft]:
    """One fact (system, predicate) asked in several shapes; the truth comes from the catalog."""
    drafts = []
    for p in ontology.PREDICATES:
        value = s.truth[p]
        if value is None:
            continue
        shapes = {
            f"{family}.question.v1": (ask(p, s.name), value, "positive"),
            f"{family}.is_it_true.v1": (f"Is it true that {s.name} {claim(p)}?", value, "positive"),
            f"{family}.negated.v1": (f"Is it true that {s.name} {claim(p, False)}?", not value, "negative"),
            f"{family}.does_it_hold.v1": (f"Does it hold that {s.name} {claim(p)}?", value, "positive"),
            f"{family}.is_it_the_case_not.v1": (
                f"Is it the case that {s.name} {claim(p, False)}?",
                not value,
                "negative",
            ),
            f"{family}.would_you_say.v1": (f"Would you say that {s.name} {claim(p)}?", value, "positive"),
        }
        for template in templates:
            text, truth, polarity = shapes[template]
            drafts.append(Draft(text, truth, family, s.id, template, [pred(p, polarity)]))
    return drafts


# --- families -----------------------------------------------------------------------------


def atomic(inputs: Inputs) -> list[Draft]:
    templates = (
        "atomic.question.v1",
        "atomic.is_it_true.v1",
        "atomic.negated.v1",
        "atomic.does_it_hold.v1",
        "atomic.is_it_the_case_not.v1",
        "atomic.would_you_say.v1",
    )
    return [d for s in inputs.core for d in direct_claims(s, "atomic", templates)]


def extended_systems(inputs: Inputs) -> list[Draft]:
    templates = (
        "extended_systems.question.v1",
        "extended_systems.is_it_true.v1",
        "extended_systems.negated.v1",
        "extended_systems.does_it_hold.v1",
        "extended_systems.is_it_the_case_not.v1",
        "extended_systems.would_you_say.v1",
    )
    return [d for s in inputs.extended for d in direct_claims(s, "extended_systems", templates)]


def multi_hop(inputs: Inputs) -> list[Draft]:
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    drafts = []
    for chain in ontology.requires_chains(min_len=3, max_len=4):
        first, last = chain[0], chain[-1]
        steps = ", which in turn means it ".join(claim(p) for p in chain[1:-1])
        for s in inputs.core:
            if s.truth[first] is not True:
                continue
            preds = [pred(p) for p in chain]
            negated_last = [*preds[:-1], pred(last, "negative")]
            drafts.append(
                Draft(
                    f"Given that {s.name} {claim(first)}, must it also be the case that it {claim(last)}?",
                    True,
                    "multi_hop",
                    s.id,
                    "multi_hop.must_follow.v1",
                    preds,
                )
            )
            stated = f"{cap(s.name)} {claim(first)}, which means it {steps}. Does it therefore follow that it"
            drafts.append(
                Draft(f"{stated} {claim(last)}?", True, "multi_hop", s.id, "multi_hop.chain_stated.v1", preds)
            )
            drafts.append(
                Draft(
                    f"{stated} {claim(last, False)}?",
                    False,
                    "multi_hop",
                    s.id,
                    "multi_hop.chain_stated.v1",
                    negated_last,
                )
            )
            drafts.append(
                Draft(
                    f"Given that {s.name} {claim(first)}, is it possible that it {claim(last, False)}?",
                    False,
                    "multi_hop",
                    s.id,
                    "multi_hop.possible_not.v1",
                    negated_last,
                )
            )
    for s in inputs.core:
        # the TRUE side of possible_not: a property the premise does not require and that the
        # system in fact lacks, so logic and the catalog agree that its absence is possible
        for first in known_preds(s, True):
            for other in known_preds(s, False):
                if other in requires[first] or len(requires[first] - {first}) < 2:
                    continue
                drafts.append(
                    Draft(
                        f"Given that {s.name} {claim(first)}, is it possible that it {claim(other, False)}?",
                        True,
                        "multi_hop",
                        s.id,
                        "multi_hop.possible_not.v1",
                        [pred(first), pred(other, "negative")],
                    )
                )
    for s in inputs.core:
        for first in known_preds(s, True):
            for other in sorted(excludes[first]):
                via = derived_exclusion_step(first, other)
                if via is None:
                    continue  # a direct axiom: one hop, that is fol_inference's business
                preds = [pred(first), pred(via), pred(other)]
                drafts.append(
                    Draft(
                        f"Given that {s.name} {claim(first)}, is it possible that it {claim(other)} as well?",
                        False,
                        "multi_hop",
                        s.id,
                        "multi_hop.possible_as_well.v1",
                        preds,
                    )
                )
                drafts.append(
                    Draft(
                        f"Given that {s.name} {claim(first)}, must it also be the case that it {claim(other)}?",
                        False,
                        "multi_hop",
                        s.id,
                        "multi_hop.must_follow.v1",
                        preds,
                    )
                )
            for other in sorted(requires[first] - {first} - set(ontology.REQUIRES.get(first, ()))):
                drafts.append(
                    Draft(
                        f"Given that {s.name} {claim(first)}, is it possible that it {claim(other)} as well?",
                        True,
                        "multi_hop",
                        s.id,
                        "multi_hop.possible_as_well.v1",
                        [pred(first), pred(other)],
                    )
                )
    return drafts


def _directly_exclusive(a: str, b: str) -> bool:
    return (a, b) in ontology.EXCLUDES or (b, a) in ontology.EXCLUDES


@functools.cache
def derived_exclusion_step(first: str, other: str) -> str | None:
    """The predicate that `first` requires and that directly excludes `other` (a two-hop
    exclusion), or None when the exclusion is a direct axiom."""
    if _directly_exclusive(first, other):
        return None
    for via in sorted(ontology.requires_closure()[first] - {first}):
        if _directly_exclusive(via, other):
            return via
    return None


def _fmt(x: float) -> str:
    text = f"{x:.2f}" if abs(x) >= 0.005 else f"{x:.3f}"
    return _unsigned_zero(text)


def _fmt_k(k: float) -> str:
    return _unsigned_zero(f"{k:.2f}")


def _unsigned_zero(text: str) -> str:
    """A value printed as zero reads "0.00", never "-0.00"."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def _lle_says(lle: float) -> bool | None:
    return lle > LLE_EPS if abs(lle) > LLE_EPS else None


def _k_says(k: float) -> bool | None:
    return k >= K_CHAOTIC if (k >= K_CHAOTIC or k <= K_REGULAR) else None


def _simulated_deterministic(inputs: Inputs):
    for s in inputs.core:
        values = inputs.indicators.get(s.id)
        if values and s.truth["Stochastic"] is False:
            yield s, values


def indicator_diagnostics(inputs: Inputs) -> list[Draft]:
    drafts = []
    systems = list(_simulated_deterministic(inputs))
    for s, values in systems:
        lle, k = values["lle"], values["k01"]
        if _lle_says(lle) is not None:
            chaotic_sign = lle > 0
            drafts.append(
                Draft(
                    f"A simulation of {s.name} gives a largest Lyapunov exponent of about {_fmt(lle)}. "
                    "Does this value indicate sensitive dependence on initial conditions?",
                    chaotic_sign,
                    "indicator_diagnostics",
                    s.id,
                    "indicator.lle_sensitive.v1",
                    [pred("PosLyap"), pred("Sensitive")],
                    {"indicator": {"lle": lle}},
                )
            )
            drafts.append(
                Draft(
                    f"The largest Lyapunov exponent of {s.name} is estimated at {_fmt(lle)}. "
                    "Do nearby trajectories of this system converge rather than separate exponentially?",
                    not chaotic_sign,
                    "indicator_diagnostics",
                    s.id,
                    "indicator.lle_converge.v1",
                    [pred("PosLyap", "negative")],
                    {"indicator": {"lle": lle}},
                )
            )
            drafts.append(
                Draft(
                    f"Reading a computed largest Lyapunov exponent of {_fmt(lle)} for {s.name}, "
                    "should one conclude that its trajectories are sensitive to initial conditions?",
                    chaotic_sign,
                    "indicator_diagnostics",
                    s.id,
                    "indicator.lle_reading.v1",
                    [pred("PosLyap"), pred("Sensitive")],
                    {"indicator": {"lle": lle}},
                )
            )
        if _k_says(k) is not None:
            drafts.append(
                Draft(
                    f"The 0-1 test for chaos, applied to a coarsely sampled time series of {s.name}, returns "
                    f"K = {_fmt_k(k)}. Is this result consistent with chaotic dynamics?",
                    k >= K_CHAOTIC,
                    "indicator_diagnostics",
                    s.id,
                    "indicator.k01_consistent.v1",
                    [pred("Chaotic")],
                    {"indicator": {"k01": k}},
                )
            )
    # Permutation entropy is read comparatively: on its own scale almost every deterministic
    # series is "more regular than noise", which a template could answer without the number.
    for (a, va), (b, vb) in itertools.permutations(systems, 2):
        pa, pb = va["perm_entropy"], vb["perm_entropy"]
        if abs(pa - pb) < PE_GAP:
            continue
        drafts.append(
            Draft(
                f"Time series of {a.name} and of {b.name} have normalised permutation entropies of {pa:.2f} and "
                f"{pb:.2f} respectively, where 1 means that all ordinal patterns are equally likely. "
                f"Is the series of {a.name} the more regular of the two?",
                pa < pb,
                "indicator_diagnostics",
                a.id,
                "indicator.perm_entropy_compare.v1",
                [],
                {"indicator": {"perm_entropy": pa}, "compared_with": {"system_id": b.id, "perm_entropy": pb}},
            )
        )
    return drafts


def _cross_readings(inputs: Inputs):
    """(system_id, subject, lle, k, how K was sampled, regime) for every computed pair of
    readings: curated systems (stochastic ones included: noise makes the 0-1 test report chaos
    while the exponent is negative), finely sampled flows (the 0-1 test's oversampling failure)
    and sweep points."""
    for s in inputs.core:  # curated systems; the imported ones stay in heldout_systems
        values = inputs.indicators.get(s.id)
        if not values:
            continue
        yield s.id, s.name, values["lle"], values["k01"], "a coarsely sampled time series", None
        if values.get("k01_fine") is not None:
            yield (
                s.id,
                s.name,
                values["lle"],
                values["k01_fine"],
                f"the same orbit sampled every {values['k01_fine_dt']:g} time units",
                None,
            )
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        for point in sweep["points"]:
            if point["regime"] == "ambiguous" or point.get("k01") is None:
                continue
            subject = f"{sweep['label']} at {sweep['parameter']} = {point['value']:g}"
            yield sweep["system"], subject, point["lle"], point["k01"], "a coarsely sampled time series", name


def cross_indicator(inputs: Inputs) -> list[Draft]:
    drafts = []
    for system_id, subject, lle, k, sampling, sweep in _cross_readings(inputs):
        lle_says, k_says = _lle_says(lle), _k_says(k)
        if lle_says is None or k_says is None:
            continue
        text = (
            f"For {subject}, simulation gives a largest Lyapunov exponent of about {_fmt(lle)}, "
            f"and the 0-1 test for chaos applied to {sampling} gives K = {_fmt_k(k)}."
        )
        extra = {"indicator": {"lle": lle, "k01": k}, **({"sweep": sweep} if sweep else {})}
        drafts.append(
            Draft(
                f"{text} Do both indicators point to chaotic dynamics?",
                lle_says and k_says,
                "cross_indicator",
                system_id,
                "cross.both_chaotic.v1",
                [pred("Chaotic")],
                extra,
            )
        )
        drafts.append(
            Draft(
                f"{text} Do the two indicators agree with each other about whether the motion is chaotic?",
                lle_says == k_says,
                "cross_indicator",
                system_id,
                "cross.agree.v1",
                [pred("Chaotic")],
                extra,
            )
        )
        drafts.append(
            Draft(
                f"{text} Taken together, do these indicators rule out chaotic dynamics?",
                not lle_says and not k_says,
                "cross_indicator",
                system_id,
                "cross.rule_out.v1",
                [pred("Chaotic", "negative")],
                extra,
            )
        )
    return drafts


def regime_transition(inputs: Inputs) -> list[Draft]:
    drafts = []
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        label, symbol = sweep["label"], sweep["parameter"]  # the sweep names its system and fixed parameters
        system_id = sweep["system"]
        points = [p for p in sweep["points"] if p["regime"] != "ambiguous"]
        for point in points:
            value, regime = point["value"], point["regime"]
            at = f"{symbol} = {value:g}"
            extra = {"sweep": name, "parameter": symbol, "value": value, "regime": regime}
            drafts.append(
                Draft(
                    f"Is the long-term behaviour of {label} at {at} chaotic?",
                    regime == "chaotic",
                    "regime_transition",
                    system_id,
                    "regime.is_chaotic.v1",
                    [pred("Chaotic")],
                    extra,
                )
            )
            drafts.append(
                Draft(
                    f"At {at}, do trajectories of {label} settle onto a stable periodic cycle or fixed point?",
                    regime != "chaotic",
                    "regime_transition",
                    system_id,
                    "regime.settles_periodic.v1",
                    [pred("Chaotic", "negative")],
                    extra,
                )
            )
            drafts.append(
                Draft(
                    f"Does {label} have a positive largest Lyapunov exponent at {at}?",
                    regime == "chaotic",
                    "regime_transition",
                    system_id,
                    "regime.poslyap.v1",
                    [pred("PosLyap")],
                    extra,
                )
            )
        # neighbouring points on either side of an onset or a window: the true direction of the
        # change, and the reversed one (so the template has both answers)
        for low, high in zip(points, points[1:]):
            before, after = low["regime"] == "chaotic", high["regime"] == "chaotic"
            if before == after:
                continue
            extra = {"sweep": name, "parameter": symbol, "from": low["value"], "to": high["value"]}
            for claimed_before, truth in ((before, True), (after, False)):
                claimed = ("chaotic", "regular") if claimed_before else ("regular", "chaotic")
                text = (
                    f"As {symbol} increases from {low['value']:g} to {high['value']:g}, does {label} change "
                    f"from {claimed[0]} to {claimed[1]} behaviour?"
                )
                drafts.append(
                    Draft(text, truth, "regime_transition", system_id, "regime.transition.v1", [pred("Chaotic")], extra)
                )
    return drafts


def fol_inference(inputs: Inputs) -> list[Draft]:
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    names = list(ontology.PREDICATES)
    witnesses = {(a, b) for s in inputs.core for a in names for b in names if s.truth[a] and s.truth[b]}
    drafts = []
    for a in names:
        for b in names:
            if a == b:
                continue
            ab = [pred(a), pred(b)]
            if b in requires[a]:
                drafts.append(
                    Draft(
                        f"If a system {claim(a)}, does it necessarily follow that it {claim(b)}?",
                        True,
                        "fol_inference",
                        "generic",
                        "fol.implication.v1",
                        ab,
                    )
                )
                drafts.append(
                    Draft(
                        f"If a system {claim(a)}, does it necessarily follow that it {claim(b, False)}?",
                        False,
                        "fol_inference",
                        "generic",
                        "fol.implication.v1",
                        [pred(a), pred(b, "negative")],
                    )
                )
                drafts.append(
                    Draft(
                        f"If a system {claim(b, False)}, does it follow that it {claim(a)}?",
                        False,
                        "fol_inference",
                        "generic",
                        "fol.contrapositive.v1",
                        [pred(b, "negative"), pred(a)],
                    )
                )
                drafts.append(
                    Draft(
                        f"If a system {claim(b, False)}, does it follow that it {claim(a, False)}?",
                        True,
                        "fol_inference",
                        "generic",
                        "fol.contrapositive.v1",
                        [pred(b, "negative"), pred(a, "negative")],
                    )
                )
            if b in excludes[a]:
                drafts.append(
                    Draft(
                        f"If a system {claim(a)}, does it necessarily follow that it {claim(b)}?",
                        False,
                        "fol_inference",
                        "generic",
                        "fol.implication.v1",
                        ab,
                    )
                )
                drafts.append(
                    Draft(
                        f"Can one and the same system satisfy both of these: it {claim(a)}, and it {claim(b)}?",
                        False,
                        "fol_inference",
                        "generic",
                        "fol.exclusion.v1",
                        ab,
                    )
                )
                drafts.append(
                    Draft(
                        f"If a system {claim(b)}, does it follow that it {claim(a, False)}?",
                        True,
                        "fol_inference",
                        "generic",
                        "fol.contrapositive.v1",
                        [pred(b), pred(a, "negative")],
                    )
                )
            elif (a, b) in witnesses and a < b:
                drafts.append(
                    Draft(
                        f"Can one and the same system satisfy both of these: it {claim(a)}, and it {claim(b)}?",
                        True,
                        "fol_inference",
                        "generic",
                        "fol.exclusion.v1",
                        ab,
                    )
                )
    drafts.extend(_assignment_consistency(inputs))
    return drafts


def _assignment_consistency(inputs: Inputs) -> list[Draft]:
    """ "Is this description consistent?": three properties that a real catalog system has
    together (consistent), or a premise, a compatible property and the negation of something
    the premise requires (breaks one direct axiom)."""
    question = "A system is described as follows: {}. Is this description logically consistent?"
    requires = ontology.requires_closure()
    drafts = []
    for s in inputs.core:
        true_preds = sorted(p for p in ontology.PREDICATES if s.truth[p])
        for a, b, c in itertools.combinations(true_preds, 3):
            text = f"it {claim(a)}, it {claim(b)}, and it {claim(c)}"
            drafts.append(
                Draft(
                    question.format(text),
                    True,
                    "fol_inference",
                    "generic",
                    "fol.consistency.v1",
                    [pred(a), pred(b), pred(c)],
                )
            )
        for first, required in sorted(ontology.REQUIRES.items()):
            if not s.truth[first]:
                continue
            others = [p for p in true_preds if p != first and p not in requires[first]]
            for needed in required:
                for third in others:
                    text = f"it {claim(first)}, it {claim(third)}, and it {claim(needed, False)}"
                    drafts.append(
                        Draft(
                            question.format(text),
                            False,
                            "fol_inference",
                            "generic",
                            "fol.consistency.v1",
                            [pred(first), pred(third), pred(needed, "negative")],
                        )
                    )
                for third, fourth in itertools.combinations(others, 2):
                    text = f"it {claim(first)}, it {claim(third)}, it {claim(fourth)}, and it {claim(needed, False)}"
                    drafts.append(
                        Draft(
                            question.format(text),
                            False,
                            "fol_inference",
                            "generic",
                            "fol.consistency.v1",
                            [pred(first), pred(third), pred(fourth), pred(needed, "negative")],
                        )
                    )
    return drafts


# Wordings of the paraphrase groups: used by no other family, so a group never repeats a
# question another family asks.
PARAPHRASES = (
    ("consistency_paraphrase.correct_to_say.v1", "Would it be correct to say that {s} {claim}?"),
    ("consistency_paraphrase.statement.v1", "Is the following statement about {s} right: it {claim}?"),
    ("consistency_paraphrase.accurate.v1", "Is it accurate to describe {s} as a system that {claim}?"),
)


def consistency_paraphrase(inputs: Inputs) -> list[Draft]:
    """Groups of three wordings of one fact; every member carries the group id."""
    drafts = []
    for s in inputs.core:
        for p in ontology.PREDICATES:
            if s.truth[p] is None:
                continue
            for template, text in PARAPHRASES:
                drafts.append(
                    Draft(
                        text.format(s=s.name, claim=claim(p)),
                        s.truth[p],
                        "consistency_paraphrase",
                        s.id,
                        template,
                        [pred(p)],
                        {"group": f"{s.id}.{p}"},
                    )
                )
    return drafts


# Misconception templates: a misleading cue, then a question whose answer depends on the system
# (never on the template): each applies to systems on both sides of the property it asks about.
# (bias, text, applies to, the predicate asked, its polarity in the question)
BIAS_TEMPLATES = (
    (
        "chaos_is_randomness",
        "Because the time series of {s} look random, is it a stochastic system?",
        lambda t: t["Chaotic"] or t["Stochastic"],
        "Stochastic",
        "positive",
    ),
    (
        "chaos_is_randomness",
        "Although the output of {s} looks irregular, is every future state fully determined by its present state?",
        lambda t: t["Chaotic"] or t["Stochastic"],
        "Deterministic",
        "positive",
    ),
    (
        "chaos_is_unbounded",
        "It is sometimes said that exponential separation of nearby trajectories sends them off to infinity. "
        "Do the trajectories of {s} stay within a bounded region?",
        lambda t: t["Chaotic"] or not t["Bounded"],
        "Bounded",
        "positive",
    ),
    (
        "chaos_is_unbounded",
        "Must the trajectories of {s} eventually leave every bounded region, as is sometimes claimed of "
        "systems with sensitive dependence on initial conditions?",
        lambda t: t["Chaotic"] or not t["Bounded"],
        "Bounded",
        "negative",
    ),
    (
        "complexity_means_chaos",
        "{S} is governed by nonlinear equations; is its long-term behaviour chaotic?",
        lambda t: t["Nonlinear"] and t["Deterministic"],
        "Chaotic",
        "positive",
    ),
    (
        "complexity_means_chaos",
        "Low-dimensional systems are often thought too simple for chaos. Is {s} chaotic?",
        lambda t: t["FiniteDimensional"] and t["Deterministic"],
        "Chaotic",
        "positive",
    ),
    (
        "sensitivity_means_noise",
        "Irregular output is often blamed on noise. Do the equations of {s} contain noise terms?",
        lambda t: t["Sensitive"] or t["Stochastic"],
        "Stochastic",
        "positive",
    ),
    (
        "sensitivity_means_noise",
        "Would two noise-free simulations of {s}, started from states 10^-10 apart, eventually give completely different trajectories?",
        lambda t: t["Deterministic"],
        "Sensitive",
        "positive",
    ),
    (
        "periodic_means_simple",
        "Simple-looking equations are often assumed to produce simple motion. Is the long-term behaviour of {s} periodic?",
        lambda t: t["Deterministic"] and t["FiniteDimensional"],
        "Periodic",
        "positive",
    ),
    (
        "periodic_means_simple",
        "Can the long-term behaviour of {s} be predicted accurately far into the future from a precisely known initial state?",
        lambda t: t["Deterministic"],
        "PointUnpredictable",
        "negative",
    ),
)


def adversarial(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core:
        for index, (bias, text, applies, asked, polarity) in enumerate(BIAS_TEMPLATES):
            value = s.truth[asked]
            if value is None or not applies(s.truth):
                continue
            drafts.append(
                Draft(
                    text.format(s=s.name, S=cap(s.name)),
                    value if polarity == "positive" else not value,
                    "adversarial",
                    s.id,
                    f"adversarial.{bias}.{index}.v2",
                    [pred(asked, polarity)],
                    {"bias": bias},
                )
            )
    return drafts


def perturbation_robustness(inputs: Inputs) -> list[Draft]:
    drafts = []
    core = list(inputs.core)
    for i, s in enumerate(core):
        for p in ontology.PREDICATES:
            value = s.truth[p]
            if value is None:
                continue
            drafts.append(
                Draft(
                    f"Is it false that {s.name} {claim(p)}?",
                    not value,
                    "perturbation_robustness",
                    s.id,
                    "perturb.negation.v1",
                    [pred(p, "negative")],
                    {"perturbation": "negation"},
                )
            )
            for distractor in DISTRACTORS:
                drafts.append(
                    Draft(
                        f"{distractor} {ask(p, s.name)}",
                        value,
                        "perturbation_robustness",
                        s.id,
                        "perturb.distractor.v1",
                        [pred(p)],
                        {"perturbation": "distractor"},
                    )
                )
            drafts.append(
                Draft(
                    f"Consider {s.name}. Is it correct to say that it {claim(p)}?",
                    value,
                    "perturbation_robustness",
                    s.id,
                    "perturb.paraphrase.v1",
                    [pred(p)],
                    {"perturbation": "paraphrase"},
                )
            )
            # entity swap: the same question about another system whose answer differs
            swaps = [other for other in core[i + 1 :] + core[:i] if other.truth[p] is (not value)][:3]
            for other in swaps:
                drafts.append(
                    Draft(
                        f"Consider {other.name} instead of {s.name}: {ask(p, other.name)[:1].lower()}{ask(p, other.name)[1:]}",
                        other.truth[p],
                        "perturbation_robustness",
                        other.id,
                        "perturb.entity_swap.v1",
                        [pred(p)],
                        {"perturbation": "entity_swap", "swapped_from": s.id},
                    )
                )
    return drafts


FULL_DISTRACTORS = (
    "The system has been studied for several decades.",
    "Its equations can be integrated on an ordinary laptop.",
    "Different authors use slightly different notation for its variables.",
    "It is sometimes shown in popular-science lectures.",
)


def _more_phrasings(family: str, systems) -> list[Draft]:
    drafts = []
    for s in systems:
        for p in ontology.PREDICATES:
            value = s.truth[p]
            if value is None:
                continue
            drafts.append(
                Draft(
                    f"Is it correct that {s.name} {claim(p)}?",
                    value,
                    family,
                    s.id,
                    f"{family}.is_it_correct.v1",
                    [pred(p)],
                )
            )
            drafts.append(
                Draft(
                    f"Can one say that {s.name} {claim(p, False)}?",
                    not value,
                    family,
                    s.id,
                    f"{family}.can_one_say_not.v1",
                    [pred(p, "negative")],
                )
            )
    return drafts


def _more_distractors(inputs: Inputs) -> list[Draft]:
    return [
        Draft(
            f"{distractor} {ask(p, s.name)}",
            s.truth[p],
            "perturbation_robustness",
            s.id,
            "perturb.distractor.v1",
            [pred(p)],
            {"perturbation": "distractor"},
        )
        for s in inputs.core
        for p in ontology.PREDICATES
        for distractor in FULL_DISTRACTORS
        if s.truth[p] is not None
    ]


# Extra shapes used only at full scale, so that the committed default suite stays as it is.
FULL_SCALE_EXTRAS = {
    "atomic": lambda inputs: _more_phrasings("atomic", inputs.core),
    "extended_systems": lambda inputs: _more_phrasings("extended_systems", inputs.extended),
    "perturbation_robustness": _more_distractors,
}

GENERATORS = {
    "atomic": atomic,
    "multi_hop": multi_hop,
    "indicator_diagnostics": indicator_diagnostics,
    "regime_transition": regime_transition,
    "fol_inference": fol_inference,
    "cross_indicator": cross_indicator,
    "extended_systems": extended_systems,
    "consistency_paraphrase": consistency_paraphrase,
    "adversarial": adversarial,
    "perturbation_robustness": perturbation_robustness,
}


# --- splits, sampling, dialogues ----------------------------------------------------------


def split_of(draft: Draft, extended_ids: set[str]) -> str:
    if draft.family == "extended_systems" or draft.system_id in extended_ids:
        return "heldout_systems"
    if HELDOUT_TEMPLATES.get(draft.family) == draft.template:
        return "heldout_templates"
    if draft.family in ("adversarial", "cross_indicator"):
        return "hard"
    if draft.family in ("consistency_paraphrase", "perturbation_robustness"):
        return "robustness"
    return "core"


def dedupe(drafts: list[Draft]) -> list[Draft]:
    """One draft per question text; a text with two truths would be a bank bug."""
    seen: dict[str, Draft] = {}
    for d in drafts:
        first = seen.setdefault(d.key(), d)
        if first.truth != d.truth:
            raise ValueError(f"the same question has two truths: {d.question!r}")
    return list(seen.values())


def unasked(drafts: list[Draft], asked: set[str]) -> list[Draft]:
    """Drafts whose text no earlier family asks (paraphrase groups stay whole or go)."""
    spoiled = {d.extra.get("group") for d in drafts if d.key() in asked}
    return [
        d for d in drafts if d.key() not in asked and (d.extra.get("group") is None or d.extra["group"] not in spoiled)
    ]


def sample_family(drafts: list[Draft], per_family: int | None, rng: random.Random) -> list[Draft]:
    """As many TRUE as FALSE drafts within every template, so that no template's answer can be
    guessed from its wording (per_family in all; None: as many as the pools allow). Templates
    take turns, one TRUE and one FALSE draft each, until the family is full. Paraphrase groups
    are sampled whole."""
    if drafts and drafts[0].family == "consistency_paraphrase":
        return _sample_groups(drafts, per_family, rng)
    pools: dict[str, tuple[list[Draft], list[Draft]]] = {}
    for d in drafts:
        pools.setdefault(d.template, ([], []))[0 if d.truth else 1].append(d)
    shuffled = {t: [rng.sample(pool, len(pool)) for pool in pools[t]] for t in sorted(pools)}
    pairs = {t: min(len(true), len(false)) for t, (true, false) in shuffled.items()}
    budget = sum(pairs.values()) if per_family is None else per_family // 2
    taken = dict.fromkeys(shuffled, 0)
    while budget and any(taken[t] < pairs[t] for t in taken):
        for t in sorted(taken):
            if budget and taken[t] < pairs[t]:
                taken[t] += 1
                budget -= 1
    return [d for t, (true, false) in shuffled.items() for d in true[: taken[t]] + false[: taken[t]]]


def _sample_groups(drafts: list[Draft], per_family: int | None, rng: random.Random) -> list[Draft]:
    groups = defaultdict(list)
    for d in drafts:
        groups[d.extra["group"]].append(d)
    by_truth = [sorted(g for g, members in groups.items() if members[0].truth == t) for t in (True, False)]
    size = len(next(iter(groups.values())))
    n_groups = min(len(names) for names in by_truth)
    if per_family is not None:
        n_groups = min(n_groups, per_family // size // 2)
    return [d for names in by_truth for g in rng.sample(names, n_groups) for d in groups[g]]


class _PositionBalance:
    """Keeps every turn position near half TRUE: each turn asks for the label its position has
    seen less often so far (a coin decides ties), and the turn's wording is chosen to match."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # position -> [TRUE, FALSE]

    def wanted(self, position: int) -> bool:
        true, false = self.counts[position]
        return self.rng.random() < 0.5 if true == false else true < false

    def seen(self, position: int, truth: bool) -> None:
        self.counts[position][0 if truth else 1] += 1


def dialogues(inputs: Inputs, count: int, rng: random.Random) -> list[dict]:
    """Multi-turn dialogues about one system; later turns refer back ("it", "your previous
    answer"). No predicate is asked twice in a dialogue, and no turn position is one-sided: the
    opening fact is a property the system has or lacks, the follow-ups are what that answer
    implies (asked plainly or negated), then unrelated properties."""
    requires = ontology.requires_closure()
    balance = _PositionBalance(rng)
    records = []
    systems = sorted(inputs.core, key=lambda s: s.id)
    for n in range(count):
        s = systems[n % len(systems)]
        holds = balance.wanted(1)
        # what an answer about `start` settles: if it holds, everything it requires holds; if it
        # fails, everything that requires it fails
        settles = {
            p: [q for q in sorted(requires[p] - {p}) if s.truth[q] is True]
            if holds
            else [q for q in known_preds(s, False) if p in requires[q]]
            for p in known_preds(s, holds)
        }
        start = rng.choice([p for p, qs in settles.items() if qs] or sorted(settles))
        turns = [(ask(start, s.name), holds, pred(start), "dialogue.open.v1")]
        for q in rng.sample(settles[start], min(len(settles[start]), rng.randint(1, 2))):
            positive = balance.wanted(len(turns) + 1) == holds
            text = f"Given your previous answer, does that mean it {claim(q, positive)}?"
            turns.append(
                (text, holds == positive, pred(q, "positive" if positive else "negative"), "dialogue.implication.v1")
            )
            balance.seen(len(turns), turns[-1][1])
        asked = {start, *(t[2]["name"] for t in turns)}
        others = [p for p in ontology.PREDICATES if s.truth[p] is not None and p not in asked]
        for other in rng.sample(others, min(len(others), rng.randint(1, 2), 6 - len(turns))):
            value = s.truth[other]
            positive = balance.wanted(len(turns) + 1) == value
            text = f"And is it true that the same system {claim(other, positive)}?"
            turns.append(
                (text, value == positive, pred(other, "positive" if positive else "negative"), "dialogue.other.v1")
            )
            balance.seen(len(turns), turns[-1][1])
        balance.seen(1, holds)
        dialogue_id = f"dlg-{n + 1:04d}"
        for turn, (text, truth, predicate, template) in enumerate(turns, start=1):
            records.append(
                {
                    "id": f"{dialogue_id}-t{turn}",
                    "question": text,
                    "ground_truth": "TRUE" if truth else "FALSE",
                    "family": "multi_hop",
                    "split": "core",
                    "system_id": s.id,
                    "predicates": [predicate],
                    "template": template,
                    "dialogue_id": dialogue_id,
                    "turn": turn,
                }
            )
    return records


# --- build --------------------------------------------------------------------------------


class BankError(Exception):
    """The inputs of the bank contradict each other; the message names what and where."""


def label_problems(inputs: Inputs) -> list[str]:
    """Catalog labels that the cached indicators contradict (same rule as `compute-indicators
    --verify`), and simulated systems with no cached indicators."""
    from bankgen.compute_indicators import COMMAND, Entry
    from bankgen.compute_indicators import label_problems as entry_problems

    problems: list[str] = []
    for s in inputs.core + inputs.extended:
        if s.simulate is None:
            continue
        values = inputs.indicators.get(s.id)
        if values is None:
            problems.append(f"system {s.id}: no cached indicators (run `{COMMAND} --only {s.id}`)")
            continue
        problems += entry_problems(Entry(s.id, s.name, s.simulate, dict(s.parameters), dict(s.truth), s.origin), values)
    return problems


def build(
    seed: int = 42, scale: str = "default", inputs: Inputs | None = None
) -> tuple[dict[str, list[dict]], list[dict]]:
    """-> (records per family, dialogue records). Raises BankError when a computed indicator
    contradicts a catalog label: truth must not depend on which of the two one believes."""
    inputs = inputs or load_inputs()
    problems = label_problems(inputs)
    if problems:
        raise BankError("computed indicators disagree with the catalog:\n  " + "\n  ".join(problems))
    extended_ids = {s.id for s in inputs.extended}
    per_family = SCALES[scale]
    families: dict[str, list[dict]] = {}
    asked: set[str] = set()  # question texts already in an earlier family
    for family in FAMILIES:
        drafts = GENERATORS[family](inputs)
        if scale == "full" and family in FULL_SCALE_EXTRAS:
            drafts += FULL_SCALE_EXTRAS[family](inputs)
        drafts = unasked(dedupe(drafts), asked)
        # one generator per family: a change to one family's pool leaves the others as they were
        chosen = sample_family(drafts, per_family, random.Random(f"{seed}:{family}"))
        asked.update(d.key() for d in chosen)
        chosen.sort(key=lambda d: (split_of(d, extended_ids), d.template, d.system_id, d.key()))
        families[family] = [
            {
                "id": f"{family}-{index:05d}",
                "question": d.question,
                "ground_truth": "TRUE" if d.truth else "FALSE",
                "family": family,
                "split": split_of(d, extended_ids),
                "system_id": d.system_id,
                "predicates": d.predicates,
                "template": d.template,
                **d.extra,
            }
            for index, d in enumerate(chosen, start=1)
        ]
    return families, dialogues(inputs, DIALOGUES[scale], random.Random(f"{seed}:dialogues"))


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def manifest(
    files: dict[str, str], families: dict[str, list[dict]], dialogue_records: list[dict], seed: int, scale: str
) -> dict:
    counts = {f: dict(sorted(Counter(r["split"] for r in rs).items())) for f, rs in families.items()}
    balance = {
        f: round(sum(r["ground_truth"] == "TRUE" for r in rs) / len(rs), 4) if rs else None
        for f, rs in families.items()
    }
    return {
        "version": BUILD_VERSION,
        "command": f"python -m bankgen build-bank --seed {seed} --scale {scale}",
        "seed": seed,
        "scale": scale,
        "total_questions": sum(len(rs) for rs in families.values()),
        "counts": counts,
        "split_totals": {s: sum(c.get(s, 0) for c in counts.values()) for s in SPLITS},
        "true_share": balance,
        "templates": _template_counts(families, dialogue_records),
        "dialogues": len({r["dialogue_id"] for r in dialogue_records}),
        "dialogue_turns": len(dialogue_records),
        "files": {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in sorted(files.items())},
    }


def _template_counts(families: dict[str, list[dict]], dialogue_records: list[dict]) -> dict:
    """TRUE / FALSE per template, and per dialogue turn position (as "dialogue turn N")."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in [r for rs in families.values() for r in rs]:
        counts[r["template"]][r["ground_truth"] != "TRUE"] += 1
    for r in dialogue_records:
        counts[f"dialogue turn {r['turn']}"][r["ground_truth"] != "TRUE"] += 1
    return {name: {"TRUE": t, "FALSE": f} for name, (t, f) in sorted(counts.items())}


def write_bank(out_dir: Path, seed: int = 42, scale: str = "default") -> dict:
    families, dialogue_records = build(seed, scale)
    files = {f"{family}.jsonl": jsonl(records) for family, records in families.items()}
    files["dialogues.jsonl"] = jsonl(dialogue_records)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    data = manifest(files, families, dialogue_records, seed, scale)
    (out_dir / "manifest.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data


def template_table(data: dict) -> str:
    """TRUE / FALSE counts per template and dialogue turn position, as Markdown (embedded in the
    dataset card; a test keeps the two in step)."""
    rows = ["| template | TRUE | FALSE |", "|---|---:|---:|"]
    rows += [f"| `{name}` | {c['TRUE']} | {c['FALSE']} |" for name, c in data["templates"].items()]
    return "\n".join(rows)


def counts_table(data: dict) -> str:
    """The family x split table of a manifest, as Markdown (the dataset card embeds it; a test
    keeps the two in step)."""
    header = "| family | " + " | ".join(SPLITS) + " | total | TRUE share |"
    rule = "|---|" + "---:|" * (len(SPLITS) + 2)
    rows = [header, rule]
    for family in FAMILIES:
        counts = data["counts"].get(family, {})
        cells = [str(counts.get(split, 0)) for split in SPLITS]
        rows.append(
            f"| {family} | " + " | ".join(cells) + f" | {sum(counts.values())} | {data['true_share'][family]:.1%} |"
        )
    totals = [str(data["split_totals"][split]) for split in SPLITS]
    rows.append("| **all** | " + " | ".join(totals) + f" | {data['total_questions']} | |")
    return "\n".join(rows)
