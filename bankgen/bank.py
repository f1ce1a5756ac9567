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

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS
from bankgen.systems import System, load_all

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "chaosbench"
INDICATORS = CASES_DIR / "indicators.json"
SWEEPS = CASES_DIR / "sweeps.json"
SCALES = {"default": 100, "full": None}  # questions per family (balanced); None: every balanced draft
DIALOGUES = {"default": 60, "full": 600}
BUILD_VERSION = 1
# Chaos thresholds on the computed indicators; values in between give no question.
LLE_EPS = 0.01
K_CHAOTIC, K_REGULAR = 0.8, 0.2

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
        shapes = {
            f"{family}.question.v1": (ask(p, s.name), value, "positive"),
            f"{family}.is_it_true.v1": (f"Is it true that {s.name} {claim(p)}?", value, "positive"),
            f"{family}.negated.v1": (f"Is it true that {s.name} {claim(p, False)}?", not value, "negative"),
            f"{family}.does_it_hold.v1": (f"Does it hold that {s.name} {claim(p)}?", value, "positive"),
            f"{family}.is_it_the_case_not.v1": (f"Is it the case that {s.name} {claim(p, False)}?", not value, "negative"),
            f"{family}.would_you_say.v1": (f"Would you say that {s.name} {claim(p)}?", value, "positive"),
        }
        for template in templates:
            text, truth, polarity = shapes[template]
            drafts.append(Draft(text, truth, family, s.id, template, [pred(p, polarity)]))
    return drafts


# --- families -----------------------------------------------------------------------------


def atomic(inputs: Inputs) -> list[Draft]:
    templates = ("atomic.question.v1", "atomic.is_it_true.v1", "atomic.negated.v1", "atomic.does_it_hold.v1",
                 "atomic.is_it_the_case_not.v1", "atomic.would_you_say.v1")
    return [d for s in inputs.core for d in direct_claims(s, "atomic", templates)]


def extended_systems(inputs: Inputs) -> list[Draft]:
    templates = ("extended_systems.question.v1", "extended_systems.is_it_true.v1", "extended_systems.negated.v1",
                 "extended_systems.does_it_hold.v1", "extended_systems.is_it_the_case_not.v1",
                 "extended_systems.would_you_say.v1")
    return [d for s in inputs.extended for d in direct_claims(s, "extended_systems", templates)]


def multi_hop(inputs: Inputs) -> list[Draft]:
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    drafts = []
    for chain in ontology.requires_chains(min_len=3, max_len=4):
        first, last = chain[0], chain[-1]
        steps = ", which in turn means it ".join(claim(p) for p in chain[1:-1])
        for s in inputs.core:
            if not s.truth[first]:
                continue
            preds = [pred(p) for p in chain]
            drafts.append(Draft(
                f"Given that {s.name} {claim(first)}, must it also be the case that it {claim(last)}?",
                True, "multi_hop", s.id, "multi_hop.must_follow.v1", preds))
            drafts.append(Draft(
                f"{cap(s.name)} {claim(first)}, which means it {steps}. Does it therefore follow that it {claim(last)}?",
                True, "multi_hop", s.id, "multi_hop.chain_stated.v1", preds))
            drafts.append(Draft(
                f"Given that {s.name} {claim(first)}, is it possible that it {claim(last, False)}?",
                False, "multi_hop", s.id, "multi_hop.possible_not.v1", [*preds[:-1], pred(last, "negative")]))
    for s in inputs.core:
        for first in sorted(p for p in ontology.PREDICATES if s.truth[p]):
            for other in sorted(excludes[first]):
                via = derived_exclusion_step(first, other)
                if via is None:
                    continue  # a direct axiom: one hop, that is fol_inference's business
                preds = [pred(first), pred(via), pred(other)]
                drafts.append(Draft(
                    f"Given that {s.name} {claim(first)}, is it possible that it {claim(other)} as well?",
                    False, "multi_hop", s.id, "multi_hop.possible_as_well.v1", preds))
                drafts.append(Draft(
                    f"Given that {s.name} {claim(first)}, must it also be the case that it {claim(other)}?",
                    False, "multi_hop", s.id, "multi_hop.must_follow.v1", preds))
            for other in sorted(requires[first] - {first} - set(ontology.REQUIRES.get(first, ()))):
                drafts.append(Draft(
                    f"Given that {s.name} {claim(first)}, is it possible that it {claim(other)} as well?",
                    True, "multi_hop", s.id, "multi_hop.possible_as_well.v1", [pred(first), pred(other)]))
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
    return f"{x:.2f}" if abs(x) >= 0.005 else f"{x:.3f}"


def indicator_diagnostics(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core:
        values = inputs.indicators.get(s.id)
        if not values or s.truth["Stochastic"]:
            continue
        lle, k, pe = values["lle"], values["k01"], values["perm_entropy"]
        if abs(lle) > LLE_EPS:
            chaotic_sign = lle > 0
            drafts.append(Draft(
                f"A simulation of {s.name} gives a largest Lyapunov exponent of about {_fmt(lle)}. "
                "Does this value indicate sensitive dependence on initial conditions?",
                chaotic_sign, "indicator_diagnostics", s.id, "indicator.lle_sensitive.v1",
                [pred("PosLyap"), pred("Sensitive")], {"indicator": {"lle": lle}}))
            drafts.append(Draft(
                f"The largest Lyapunov exponent of {s.name} is estimated at {_fmt(lle)}. "
                "Do nearby trajectories of this system converge rather than separate exponentially?",
                not chaotic_sign, "indicator_diagnostics", s.id, "indicator.lle_converge.v1",
                [pred("PosLyap", "negative")], {"indicator": {"lle": lle}}))
            drafts.append(Draft(
                f"Reading a computed largest Lyapunov exponent of {_fmt(lle)} for {s.name}, "
                "should one conclude that its trajectories are sensitive to initial conditions?",
                chaotic_sign, "indicator_diagnostics", s.id, "indicator.lle_reading.v1",
                [pred("PosLyap"), pred("Sensitive")], {"indicator": {"lle": lle}}))
        if k >= K_CHAOTIC or k <= K_REGULAR:
            drafts.append(Draft(
                f"The 0-1 test for chaos, applied to a coarsely sampled time series of {s.name}, returns "
                f"K = {k:.2f}. Is this result consistent with chaotic dynamics?",
                k >= K_CHAOTIC, "indicator_diagnostics", s.id, "indicator.k01_consistent.v1",
                [pred("Chaotic")], {"indicator": {"k01": k}}))
        if pe >= 0.98 or pe <= 0.9:
            drafts.append(Draft(
                f"The normalised permutation entropy of a time series from {s.name} is {pe:.2f}, where 1 means "
                "that all ordinal patterns are equally likely. Is the series more regular than white noise?",
                pe <= 0.9, "indicator_diagnostics", s.id, "indicator.perm_entropy_regular.v1",
                [], {"indicator": {"perm_entropy": pe}}))
    return drafts


def cross_indicator(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core:  # curated systems; the imported ones stay in heldout_systems
        values = inputs.indicators.get(s.id)
        if not values or s.truth["Stochastic"]:
            continue
        lle, k = values["lle"], values["k01"]
        lle_says = lle > LLE_EPS if abs(lle) > LLE_EPS else None
        k_says = k >= K_CHAOTIC if (k >= K_CHAOTIC or k <= K_REGULAR) else None
        if lle_says is None or k_says is None:
            continue
        both = lle_says and k_says
        text = (f"For {s.name}, simulation gives a largest Lyapunov exponent of about {_fmt(lle)} "
                f"and a 0-1 test value of K = {k:.2f}.")
        extra = {"indicator": {"lle": lle, "k01": k}}
        drafts.append(Draft(f"{text} Do both indicators point to chaotic dynamics?", both,
                            "cross_indicator", s.id, "cross.both_chaotic.v1", [pred("Chaotic")], extra))
        drafts.append(Draft(f"{text} Do the two indicators agree with each other about whether the motion is chaotic?",
                            lle_says == k_says, "cross_indicator", s.id, "cross.agree.v1", [pred("Chaotic")], extra))
        drafts.append(Draft(f"{text} Taken together, do these indicators rule out chaotic dynamics?",
                            not lle_says and not k_says, "cross_indicator", s.id, "cross.rule_out.v1",
                            [pred("Chaotic", "negative")], extra))
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
            drafts.append(Draft(f"Is the long-term behaviour of {label} at {at} chaotic?",
                                regime == "chaotic", "regime_transition", system_id, "regime.is_chaotic.v1",
                                [pred("Chaotic")], extra))
            drafts.append(Draft(f"At {at}, do trajectories of {label} settle onto a stable periodic cycle or fixed point?",
                                regime != "chaotic", "regime_transition", system_id, "regime.settles_periodic.v1",
                                [pred("Chaotic", "negative")], extra))
            drafts.append(Draft(f"Does {label} have a positive largest Lyapunov exponent at {at}?",
                                regime == "chaotic", "regime_transition", system_id, "regime.poslyap.v1",
                                [pred("PosLyap")], extra))
        for low, high in zip(points, points[1:]):
            if low["regime"] == high["regime"]:
                continue
            text = (f"As {symbol} increases from {low['value']:g} to {high['value']:g}, does {label} change "
                    f"from {'chaotic' if low['regime'] == 'chaotic' else 'regular'} to "
                    f"{'chaotic' if high['regime'] == 'chaotic' else 'regular'} behaviour?")
            drafts.append(Draft(text, (low["regime"] == "chaotic") != (high["regime"] == "chaotic"),
                                "regime_transition", system_id, "regime.transition.v1", [pred("Chaotic")],
                                {"sweep": name, "parameter": symbol, "from": low["value"], "to": high["value"]}))
    return drafts


def fol_inference(inputs: Inputs) -> list[Draft]:
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    names = list(ontology.PREDICATES)
    witnesses = {(a, b) for s in inputs.core for a in names for b in names
                 if s.truth[a] and s.truth[b]}
    drafts = []
    for a in names:
        for b in names:
            if a == b:
                continue
            ab = [pred(a), pred(b)]
            if b in requires[a]:
                drafts.append(Draft(f"If a system {claim(a)}, does it necessarily follow that it {claim(b)}?",
                                    True, "fol_inference", "generic", "fol.implication.v1", ab))
                drafts.append(Draft(f"If a system {claim(a)}, does it necessarily follow that it {claim(b, False)}?",
                                    False, "fol_inference", "generic", "fol.implication.v1",
                                    [pred(a), pred(b, "negative")]))
                drafts.append(Draft(f"If a system {claim(b, False)}, does it follow that it {claim(a)}?",
                                    False, "fol_inference", "generic", "fol.contrapositive.v1",
                                    [pred(b, "negative"), pred(a)]))
                drafts.append(Draft(f"If a system {claim(b, False)}, does it follow that it {claim(a, False)}?",
                                    True, "fol_inference", "generic", "fol.contrapositive.v1",
                                    [pred(b, "negative"), pred(a, "negative")]))
            if b in excludes[a]:
                drafts.append(Draft(f"If a system {claim(a)}, does it necessarily follow that it {claim(b)}?",
                                    False, "fol_inference", "generic", "fol.implication.v1", ab))
                drafts.append(Draft(f"Can one and the same system satisfy both of these: it {claim(a)}, and it {claim(b)}?",
                                    False, "fol_inference", "generic", "fol.exclusion.v1", ab))
                drafts.append(Draft(f"If a system {claim(b)}, does it follow that it {claim(a, False)}?",
                                    True, "fol_inference", "generic", "fol.contrapositive.v1",
                                    [pred(b), pred(a, "negative")]))
            elif (a, b) in witnesses and a < b:
                drafts.append(Draft(f"Can one and the same system satisfy both of these: it {claim(a)}, and it {claim(b)}?",
                                    True, "fol_inference", "generic", "fol.exclusion.v1", ab))
    drafts.extend(_assignment_consistency(inputs))
    return drafts


def _assignment_consistency(inputs: Inputs) -> list[Draft]:
    """"Is this description consistent?": three properties that a real catalog system has
    together (consistent), or a premise, a compatible property and the negation of something
    the premise requires (breaks one direct axiom)."""
    question = "A system is described as follows: {}. Is this description logically consistent?"
    requires = ontology.requires_closure()
    drafts = []
    for s in inputs.core:
        true_preds = sorted(p for p in ontology.PREDICATES if s.truth[p])
        for a, b, c in itertools.combinations(true_preds, 3):
            text = f"it {claim(a)}, it {claim(b)}, and it {claim(c)}"
            drafts.append(Draft(question.format(text), True, "fol_inference", "generic", "fol.consistency.v1",
                                [pred(a), pred(b), pred(c)]))
        for first, required in sorted(ontology.REQUIRES.items()):
            if not s.truth[first]:
                continue
            others = [p for p in true_preds if p != first and p not in requires[first]]
            for needed in required:
                for third in others:
                    text = f"it {claim(first)}, it {claim(third)}, and it {claim(needed, False)}"
                    drafts.append(Draft(question.format(text), False, "fol_inference", "generic",
                                        "fol.consistency.v1", [pred(first), pred(third), pred(needed, "negative")]))
                for third, fourth in itertools.combinations(others, 2):
                    text = f"it {claim(first)}, it {claim(third)}, it {claim(fourth)}, and it {claim(needed, False)}"
                    drafts.append(Draft(question.format(text), False, "fol_inference", "generic",
                                        "fol.consistency.v1",
                                        [pred(first), pred(third), pred(fourth), pred(needed, "negative")]))
    return drafts


def consistency_paraphrase(inputs: Inputs) -> list[Draft]:
    """Groups of three wordings of one fact; every member carries the group id."""
    templates = ("consistency_paraphrase.question.v1", "consistency_paraphrase.is_it_true.v1",
                 "consistency_paraphrase.would_you_say.v1")
    drafts = []
    for s in inputs.core:
        for p in ontology.PREDICATES:
            group = f"{s.id}.{p}"
            members = direct_claims_for(s, p, "consistency_paraphrase", templates)
            for d in members:
                d.extra["group"] = group
            drafts.extend(members)
    return drafts


def direct_claims_for(s: System, p: str, family: str, templates: tuple[str, ...]) -> list[Draft]:
    return [d for d in direct_claims(s, family, templates) if d.predicates[0]["name"] == p]


BIAS_TEMPLATES = (
    ("chaos_is_randomness", "Because the time series of {s} look random, is it a stochastic system?",
     lambda t: t["Chaotic"], lambda t: False, [("Stochastic", "positive")]),
    ("chaos_is_randomness", "Although the output of {s} looks random, is every future state fully determined by its present state?",
     lambda t: t["Chaotic"], lambda t: True, [("Deterministic", "positive")]),
    ("chaos_is_unbounded", "Since nearby trajectories of {s} separate exponentially fast, must its trajectories eventually escape to infinity?",
     lambda t: t["Chaotic"], lambda t: False, [("Bounded", "negative")]),
    ("chaos_is_unbounded", "Even though nearby trajectories of {s} separate exponentially, do they remain within a bounded region?",
     lambda t: t["Chaotic"], lambda t: True, [("Bounded", "positive")]),
    ("complexity_means_chaos", "{S} is governed by nonlinear equations; does that alone make its long-term behaviour chaotic?",
     lambda t: t["Nonlinear"] and not t["Chaotic"] and t["Deterministic"], lambda t: False, [("Chaotic", "positive")]),
    ("complexity_means_chaos", "Can a system as low-dimensional as {s} nonetheless be chaotic?",
     lambda t: t["Chaotic"] and t["FiniteDimensional"], lambda t: True, [("Chaotic", "positive")]),
    ("sensitivity_means_noise", "Is the sensitive dependence on initial conditions of {s} caused by noise terms in its equations?",
     lambda t: t["Chaotic"], lambda t: False, [("Stochastic", "positive")]),
    ("sensitivity_means_noise", "Would two noise-free simulations of {s}, started from states 10^-10 apart, eventually give completely different trajectories?",
     lambda t: t["Chaotic"], lambda t: True, [("Sensitive", "positive")]),
    ("periodic_means_simple", "Does the regular, repeating motion of {s} make it sensitive to initial conditions in the way chaotic systems are?",
     lambda t: (t["Periodic"] or t["FixedPointAttr"]) and t["Deterministic"], lambda t: False, [("Sensitive", "positive")]),
    ("periodic_means_simple", "Can the long-term behaviour of {s} be predicted accurately far into the future from a precisely known initial state?",
     lambda t: (t["Periodic"] or t["FixedPointAttr"]) and t["Deterministic"] and not t["Sensitive"], lambda t: True,
     [("PointUnpredictable", "negative")]),
)


def adversarial(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core:
        for index, (bias, text, applies, truth, preds) in enumerate(BIAS_TEMPLATES):
            if applies(s.truth):
                drafts.append(Draft(text.format(s=s.name, S=cap(s.name)), truth(s.truth), "adversarial", s.id,
                                    f"adversarial.{bias}.{index}.v1", [pred(n, pol) for n, pol in preds],
                                    {"bias": bias}))
    return drafts


def perturbation_robustness(inputs: Inputs) -> list[Draft]:
    drafts = []
    core = list(inputs.core)
    for i, s in enumerate(core):
        for p in ontology.PREDICATES:
            value = s.truth[p]
            drafts.append(Draft(f"Is it false that {s.name} {claim(p)}?", not value, "perturbation_robustness", s.id,
                                "perturb.negation.v1", [pred(p, "negative")], {"perturbation": "negation"}))
            for distractor in DISTRACTORS:
                drafts.append(Draft(f"{distractor} {ask(p, s.name)}", value, "perturbation_robustness", s.id,
                                    "perturb.distractor.v1", [pred(p)], {"perturbation": "distractor"}))
            drafts.append(Draft(f"Consider {s.name}. Is it correct to say that it {claim(p)}?", value,
                                "perturbation_robustness", s.id, "perturb.paraphrase.v1", [pred(p)],
                                {"perturbation": "paraphrase"}))
            # entity swap: the same question about another system whose answer differs
            swaps = [other for other in core[i + 1:] + core[:i] if other.truth[p] != value][:3]
            for other in swaps:
                drafts.append(Draft(f"Consider {other.name} instead of {s.name}: {ask(p, other.name)[:1].lower()}{ask(p, other.name)[1:]}",
                                    other.truth[p], "perturbation_robustness", other.id,
                                    "perturb.entity_swap.v1", [pred(p)],
                                    {"perturbation": "entity_swap", "swapped_from": s.id}))
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
            drafts.append(Draft(f"Is it correct that {s.name} {claim(p)}?", value, family, s.id,
                                f"{family}.is_it_correct.v1", [pred(p)]))
            drafts.append(Draft(f"Can one say that {s.name} {claim(p, False)}?", not value, family, s.id,
                                f"{family}.can_one_say_not.v1", [pred(p, "negative")]))
    return drafts


def _more_distractors(inputs: Inputs) -> list[Draft]:
    return [Draft(f"{distractor} {ask(p, s.name)}", s.truth[p], "perturbation_robustness", s.id,
                  "perturb.distractor.v1", [pred(p)], {"perturbation": "distractor"})
            for s in inputs.core for p in ontology.PREDICATES for distractor in FULL_DISTRACTORS]


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


def sample_family(drafts: list[Draft], per_family: int | None, rng: random.Random) -> list[Draft]:
    """As many TRUE as FALSE drafts (per_family in all; None: as many as the pools allow).
    Paraphrase groups are sampled whole."""
    if drafts and drafts[0].family == "consistency_paraphrase":
        return _sample_groups(drafts, per_family, rng)
    pools = [[d for d in drafts if d.truth == truth] for truth in (True, False)]
    half = min(len(pool) for pool in pools)
    if per_family is not None:
        half = min(half, per_family // 2)
    return [d for pool in pools for d in rng.sample(pool, half)]


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


def dialogues(inputs: Inputs, count: int, rng: random.Random) -> list[dict]:
    """Multi-turn dialogues about one system: each later turn refers back ("it", "that")."""
    requires = ontology.requires_closure()
    records = []
    systems = sorted(inputs.core, key=lambda s: s.id)
    for n in range(count):
        s = systems[n % len(systems)]
        true_preds = sorted(p for p in ontology.PREDICATES if s.truth[p])
        false_preds = sorted(p for p in ontology.PREDICATES if not s.truth[p])
        start = rng.choice([p for p in true_preds if requires[p] - {p}] or true_preds)
        follow = sorted(requires[start] - {start})
        turns = [(ask(start, s.name), s.truth[start], pred(start), "dialogue.open.v1")]
        for p in rng.sample(follow, min(len(follow), rng.randint(1, 2))):
            turns.append((f"Given your previous answer, does that mean it {claim(p)}?", s.truth[p], pred(p),
                          "dialogue.implication.v1"))
        other = rng.choice(false_preds + true_preds)
        turns.append((f"And is it also true that the same system {claim(other)}?", s.truth[other], pred(other),
                      "dialogue.other.v1"))
        # re-ask the opening fact negated: a model that contradicts itself is caught here
        turns.append((f"Going back to your first answer: is it true that it {claim(start, False)}?", not s.truth[start],
                      pred(start, "negative"), "dialogue.recheck.v1"))
        turns = turns[:6]
        dialogue_id = f"dlg-{n + 1:04d}"
        for turn, (text, truth, predicate, template) in enumerate(turns, start=1):
            records.append({
                "id": f"{dialogue_id}-t{turn}", "question": text, "ground_truth": "TRUE" if truth else "FALSE",
                "family": "multi_hop", "split": "core", "system_id": s.id, "predicates": [predicate],
                "template": template, "dialogue_id": dialogue_id, "turn": turn,
            })
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


def build(seed: int = 42, scale: str = "default", inputs: Inputs | None = None) -> tuple[dict[str, list[dict]], list[dict]]:
    """-> (records per family, dialogue records). Raises BankError when a computed indicator
    contradicts a catalog label: truth must not depend on which of the two one believes."""
    inputs = inputs or load_inputs()
    problems = label_problems(inputs)
    if problems:
        raise BankError("computed indicators disagree with the catalog:\n  " + "\n  ".join(problems))
    extended_ids = {s.id for s in inputs.extended}
    per_family = SCALES[scale]
    families: dict[str, list[dict]] = {}
    for family in FAMILIES:
        drafts = GENERATORS[family](inputs)
        if scale == "full" and family in FULL_SCALE_EXTRAS:
            drafts += FULL_SCALE_EXTRAS[family](inputs)
        drafts = dedupe(drafts)
        # one generator per family: a change to one family's pool leaves the others as they were
        chosen = sample_family(drafts, per_family, random.Random(f"{seed}:{family}"))
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


def manifest(files: dict[str, str], families: dict[str, list[dict]], dialogue_records: list[dict],
             seed: int, scale: str) -> dict:
    counts = {f: dict(sorted(Counter(r["split"] for r in rs).items())) for f, rs in families.items()}
    balance = {f: round(sum(r["ground_truth"] == "TRUE" for r in rs) / len(rs), 4) if rs else None
               for f, rs in families.items()}
    return {
        "version": BUILD_VERSION,
        "command": f"python -m bankgen build-bank --seed {seed} --scale {scale}",
        "seed": seed,
        "scale": scale,
        "total_questions": sum(len(rs) for rs in families.values()),
        "counts": counts,
        "split_totals": {s: sum(c.get(s, 0) for c in counts.values()) for s in SPLITS},
        "true_share": balance,
        "dialogues": len({r["dialogue_id"] for r in dialogue_records}),
        "dialogue_turns": len(dialogue_records),
        "files": {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in sorted(files.items())},
    }


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


def counts_table(data: dict) -> str:
    """The family x split table of a manifest, as Markdown (the dataset card embeds it; a test
    keeps the two in step)."""
    header = "| family | " + " | ".join(SPLITS) + " | total | TRUE share |"
    rule = "|---|" + "---:|" * (len(SPLITS) + 2)
    rows = [header, rule]
    for family in FAMILIES:
        counts = data["counts"].get(family, {})
        cells = [str(counts.get(split, 0)) for split in SPLITS]
        rows.append(f"| {family} | " + " | ".join(cells) + f" | {sum(counts.values())} | {data['true_share'][family]:.1%} |")
    totals = [str(data["split_totals"][split]) for split in SPLITS]
    rows.append("| **all** | " + " | ".join(totals) + f" | {data['total_questions']} | |")
    return "\n".join(rows)
