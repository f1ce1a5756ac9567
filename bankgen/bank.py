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
from pytest_reasoning_evals.chaosbench.shortcut import majority_values

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "chaosbench"
INDICATORS = CASES_DIR / "indicators.json"
SWEEPS = CASES_DIR / "sweeps.json"
SCALES = {"default": 100, "full": None}  # questions per family (balanced); None: every balanced draft
# Logic families at full scale: a share of their pools, so that the sampler can still balance
# the properties they mention (all of a pool would let a word model learn them).
FULL_LOGIC_CAP = 1000
DIALOGUES = {"default": 60, "full": 400}  # more at full scale would repeat the systems' usual facts
BUILD_VERSION = 1
# Thresholds on the computed indicators; values in between give no question. An exponent is
# printed with its resolution eps (the system's classification threshold): it is clearly
# positive or negative beyond 2 eps, and "zero within resolution" below eps.
K_CHAOTIC, K_REGULAR = 0.8, 0.2
CLEAR, WITHIN = 2.0, 1.0
LOGIC_FAMILIES = ("multi_hop", "fol_inference")
NEIGHBOURS = 3  # two sweep points are compared when at most this many points apart
# Sweep points not asked although their runs agreed: a wider check found them multistable.
MULTISTABLE_POINTS = {
    # 43 of 48 starts go chaotic, 5 settle on a period-3 cycle (independent audit, 48 starts)
    ("duffing_gamma", 0.54),
}

# The template of each family that is held out of every other split (heldout_templates).
HELDOUT_TEMPLATES = {
    "atomic": "atomic.would_you_say.v1",
    "multi_hop": "multi_hop.chain_stated.v1",
    "indicator_diagnostics": "indicator.two_points.v1",
    "regime_transition": "regime.settles_periodic.v1",
    "fol_inference": "fol.contrapositive.v1",
}
# (text, the systems it applies to)
DISTRACTORS = (
    ("Numerical studies of this system usually use double-precision arithmetic.", lambda t: True),
    ("Such systems are often discussed in undergraduate courses on nonlinear dynamics.", lambda t: True),
    ("Plots of its trajectories appear in many textbooks.", lambda t: True),
    (
        "Researchers have simulated it with several different integration schemes.",
        lambda t: t["ContinuousTime"] and t["Deterministic"],
    ),
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


def askable(s: System, p: str) -> bool:
    """A known value that rests on no convention the prompts leave unstated: the invertibility or
    dissipativity of a stochastic process, the conservativeness of a non-invertible map,
    ergodicity on a mixed phase space, and the boundedness of an imported system (not checked:
    the Blasius attractor coexists with escape to infinity) are not asked."""
    t = s.truth
    if t[p] is None:
        return False
    if t["Stochastic"] and p in ("Invertible", "Dissipative", "Bounded"):
        return False
    if p == "Conservative" and t["DiscreteTime"] and t["Invertible"] is False:
        return False
    if p in ("Ergodic", "Mixing") and t["Conservative"] and t[p] is False:
        return False
    return not (p == "Bounded" and s.origin == "dysts")


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
    form: str = ""  # which surface form of the template (sampled to both labels); not written
    cue: str = ""  # a surface feature the sampler keeps near half TRUE (as `cues`); not written

    def key(self) -> str:
        return " ".join(self.question.lower().split())

    def stratum(self) -> tuple[str, ...]:
        """Template, surface form and the asked conclusion: the sampler draws as many TRUE as
        FALSE questions from each, so that neither the wording nor "not" tells the label. For
        a fact about a system the asked property is part of it (a property is asked of systems
        that have it as often as of systems that lack it); a logic question's properties are
        balanced by `cues` instead (an implication's conclusion is seldom both required and
        excluded)."""
        last = self.predicates[-1] if self.predicates else {"name": "", "polarity": ""}
        if self.family in LOGIC_FAMILIES:
            usual = majority_values().get(last["name"]) if last["name"] else None
            return self.template, self.form, last["polarity"], str(usual)
        return self.template, self.form, last["name"], last["polarity"]

    def cues(self) -> tuple[str, ...]:
        """What a reader could learn the label from besides the wording: the system, or a logic
        question's premise and conclusion; the sampler keeps each near half TRUE."""
        if self.family in LOGIC_FAMILIES:
            return tuple(f"{p['name']}:{p['polarity']}" for p in self.predicates)
        return (self.system_id, self.cue) if self.cue else (self.system_id,)


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
        if not askable(s, p):
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
    """The imported systems' distinguishing facts: the predicates on which they differ (the
    sampler drops a property every imported system shares), their dimension and how fast their
    trajectories separate compared with another imported system."""
    templates = (
        "extended_systems.question.v1",
        "extended_systems.is_it_true.v1",
        "extended_systems.negated.v1",
        "extended_systems.does_it_hold.v1",
        "extended_systems.is_it_the_case_not.v1",
        "extended_systems.would_you_say.v1",
    )
    drafts = [d for s in inputs.extended for d in direct_claims(s, "extended_systems", templates)]
    for s in inputs.extended:
        dimension = s.equations.count("/dt")
        for form, truth in (("more than three", dimension > 3), ("exactly three", dimension == 3)):
            drafts.append(
                Draft(
                    f"Does the state of {s.name} have {form} variables?",
                    truth,
                    "extended_systems",
                    s.id,
                    "extended_systems.dimension.v1",
                    [],
                    {"dimension": dimension},
                    form,
                )
            )
    chaotic = [
        (s, inputs.indicators[s.id]["lle"])
        for s in inputs.extended
        if s.truth["Chaotic"]
        and s.id in inputs.indicators
        and _sign(inputs.indicators[s.id]["lle"], _eps(inputs.indicators[s.id])) == 1
    ]
    for (a, la), (b, lb) in itertools.permutations(chaotic, 2):
        if max(la, lb) < 2 * min(la, lb):
            continue  # only clearly different rates are compared
        drafts.append(
            Draft(
                f"In the time units of their equations, do nearby trajectories of {a.name} separate faster "
                f"than those of {b.name}?",
                la > lb,
                "extended_systems",
                a.id,
                "extended_systems.separates_faster.v1",
                [],
                {"indicator": {"lle": la}, "compared_with": {"system_id": b.id, "lle": lb}},
                cue=b.id,
            )
        )
    return drafts


def multi_hop(inputs: Inputs) -> list[Draft]:
    """Two or more hops through the axioms from a premise about a system. Every template asks
    positive and negated conclusions, each with both labels: a required property asked plainly
    (TRUE) or negated (FALSE), an excluded one asked negated (TRUE) or plainly (FALSE)."""
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    drafts = []

    def both(text: str, first: str, via: list[str], last: str, holds: bool, template: str, system: System):
        # `last` holds (required) or fails (excluded) given the premise: each polarity once
        for polarity, truth in (("positive", holds), ("negative", not holds)):
            drafts.append(
                Draft(
                    text.format(claim(last, polarity == "positive")),
                    truth,
                    "multi_hop",
                    system.id,
                    template,
                    [pred(first), *(pred(v) for v in via), pred(last, polarity)],
                )
            )

    for chain in ontology.requires_chains(min_len=3, max_len=4):
        first, last = chain[0], chain[-1]
        steps = ", which in turn means it ".join(claim(p) for p in chain[1:])
        stated = f"{{}} {claim(first)}, which means it {steps}. Does it therefore follow that it {{}}?"
        for s in inputs.core:
            if s.truth[first] is not True:
                continue
            text = stated.format(cap(s.name), "{}")
            both(text, first, list(chain[1:-1]), last, True, "multi_hop.chain_stated.v1", s)
            for other in sorted(excludes[last]):
                if _directly_exclusive(first, other):
                    continue
                # the chain's end rules `other` out (one more hop)
                both(text, first, list(chain[1:]), other, False, "multi_hop.chain_stated.v1", s)
    for s in inputs.core:
        for first in known_preds(s, True):
            text = f"Given that {s.name} {claim(first)}, must it also be the case that it {{}}?"
            for other in sorted(requires[first] - {first} - set(ontology.REQUIRES.get(first, ()))):
                both(text, first, [], other, True, "multi_hop.must_follow.v1", s)
            for other in sorted(excludes[first]):
                via = derived_exclusion_step(first, other)
                if via is not None:  # a direct axiom is one hop: fol_inference's business
                    both(text, first, [via], other, False, "multi_hop.must_follow.v1", s)
            # "is it possible that": TRUE when the premise leaves the property open and the system
            # shows it (plainly or negated), FALSE when the premise settles it the other way
            possible = f"Given that {s.name} {claim(first)}, is it possible that it {{}}?"
            for other in ontology.PREDICATES:
                if other == first or not askable(s, other):
                    continue
                if other in requires[first]:
                    if other not in ontology.REQUIRES.get(first, ()):
                        drafts.append(_possible(possible, s, first, other, "negative", False))
                elif other in excludes[first]:
                    if derived_exclusion_step(first, other) is not None:
                        drafts.append(_possible(possible, s, first, other, "positive", False))
                else:
                    drafts.append(
                        _possible(possible, s, first, other, "positive" if s.truth[other] else "negative", True)
                    )
    return drafts


def _possible(text: str, s: System, first: str, other: str, polarity: str, truth: bool) -> Draft:
    return Draft(
        text.format(claim(other, polarity == "positive")),
        truth,
        "multi_hop",
        s.id,
        "multi_hop.possible.v1",
        [pred(first), pred(other, polarity)],
    )


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
    return _unsigned_zero(f"{x:.3f}" if abs(x) < 0.1 else f"{x:.2f}")


def _fmt_k(k: float) -> str:
    return _unsigned_zero(f"{k:.2f}")


def _unsigned_zero(text: str) -> str:
    """A value printed as zero reads "0.00", never "-0.00"."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def _sign(lle: float, eps: float) -> int | None:
    """1 / -1: clearly positive / negative (beyond 2 eps); 0: zero within the resolution eps;
    None: in between, not asked."""
    if abs(lle) > CLEAR * eps:
        return 1 if lle > 0 else -1
    return 0 if abs(lle) <= WITHIN * eps else None


def _exponent(lle: float, eps: float) -> str:
    return f"{_fmt(lle)} \u00b1 {_fmt(eps)}"


def _k_says(k: float) -> bool | None:
    return k >= K_CHAOTIC if (k >= K_CHAOTIC or k <= K_REGULAR) else None


def _eps(values: dict) -> float:
    return values["settings"]["eps"]


def _readings(inputs: Inputs, systems):
    """(system_id, subject, lle, eps) of each simulated deterministic system, then of each
    unanimous sweep point."""
    for s in systems:
        values = inputs.indicators.get(s.id)
        if values and not s.truth["Stochastic"]:
            yield s.id, s.name, values["lle"], _eps(values)
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        for point in _asked_points(name, sweep):
            subject = f"{sweep['label']} at {sweep['parameter']} = {point['value']:g}"
            yield sweep["system"], subject, point["lle"], sweep["eps"]


def _asked_points(name: str, sweep: dict) -> list[dict]:
    """Sweep points whose runs all agree, off the known multistable ones."""
    return [
        p
        for p in sweep["points"]
        if p["regime"] != "ambiguous"
        and len(set(p.get("runs", "x"))) == 1
        and (name, p["value"]) not in MULTISTABLE_POINTS
    ]


def indicator_diagnostics(inputs: Inputs) -> list[Draft]:
    """Readings that take more than one threshold: an exponent against its resolution, two
    exponents of one system at two parameter values, the exponents' sum (phase-space volume) and
    the second exponent (hyperchaos)."""
    drafts = []
    for system_id, subject, lle, eps in _readings(inputs, inputs.core + inputs.extended):
        sign = _sign(lle, eps)
        if sign is None:
            continue
        reading = (
            f"A simulation of {subject} gives a largest Lyapunov exponent of {_exponent(lle, eps)} "
            "(the estimate and its resolution)."
        )
        extra = {"indicator": {"lle": lle, "eps": eps}}
        for asked, form in ((1, "positive"), (-1, "negative")):
            drafts.append(
                Draft(
                    f"{reading} Does this establish that the exponent is {form}?",
                    sign == asked,
                    "indicator_diagnostics",
                    system_id,
                    "indicator.exponent_resolution.v1",
                    [pred("PosLyap", "positive" if asked == 1 else "negative")],
                    extra,
                    form,
                )
            )
    drafts += _two_points(inputs) + _volume(inputs) + _hyperchaos(inputs)
    return drafts


def _two_points(inputs: Inputs, neighbours: int = NEIGHBOURS) -> list[Draft]:
    drafts = []
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        label, symbol, eps = sweep["label"], sweep["parameter"], sweep["eps"]
        points = [
            p
            for p in _asked_points(name, sweep)
            # the printed exponent says what the regime is: clearly positive, or zero or negative
            if (_sign(p["lle"], eps) == 1) == (p["regime"] == "chaotic") and _sign(p["lle"], eps) is not None
        ]
        for i, low in enumerate(points):
            for high in points[i + 1 : i + 1 + neighbours]:
                before, after = low["regime"] == "chaotic", high["regime"] == "chaotic"
                text = (
                    f"Simulations of {label} give a largest Lyapunov exponent of "
                    f"{_exponent(low['lle'], eps)} at {symbol} = {low['value']:g} and of "
                    f"{_exponent(high['lle'], eps)} at {symbol} = {high['value']:g}."
                )
                extra = {
                    "sweep": name,
                    "parameter": symbol,
                    "from": low["value"],
                    "to": high["value"],
                    "indicator": {"lle": [low["lle"], high["lle"]], "eps": eps},
                }
                for form, truth in (
                    ("regular to chaotic", not before and after),
                    ("chaotic to regular", before and not after),
                ):
                    drafts.append(
                        Draft(
                            f"{text} Between these two values, does the motion change from {form}?",
                            truth,
                            "indicator_diagnostics",
                            sweep["system"],
                            "indicator.two_points.v1",
                            [pred("Chaotic")],
                            extra,
                            form,
                        )
                    )
    return drafts


def _volume(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core + inputs.extended:
        values = inputs.indicators.get(s.id) or {}
        rate = values.get("volume_rate")
        if rate is None or s.truth["Stochastic"]:
            continue
        eps = _eps(values)
        # the sum must say what the catalog says: clearly negative, zero, or clearly positive
        if not (
            (s.truth["Dissipative"] and rate < -CLEAR * eps)
            or (s.truth["Conservative"] and abs(rate) <= WITHIN * eps)
            or (s.truth["Dissipative"] is False and s.truth["Conservative"] is False and rate > CLEAR * eps)
        ):
            continue
        for asked in ("Dissipative", "Conservative"):
            drafts.append(
                Draft(
                    f"The Lyapunov exponents of {s.name} sum to about {_fmt(rate)} (per unit time, or per "
                    f"iteration for a map). Is the system {ontology.PREDICATES[asked].claim.split(' ', 1)[1]}?",
                    s.truth[asked],
                    "indicator_diagnostics",
                    s.id,
                    "indicator.volume.v1",
                    [pred(asked)],
                    {"indicator": {"volume_rate": rate}},
                )
            )
    return drafts


def _hyperchaos(inputs: Inputs) -> list[Draft]:
    drafts = []
    for s in inputs.core + inputs.extended:
        values = inputs.indicators.get(s.id) or {}
        if values.get("lle2") is None or not s.truth["Chaotic"] or s.truth["Hyperchaotic"] is None:
            continue
        eps, second = _eps(values), values["lle2"]
        if s.truth["Hyperchaotic"] != (second > CLEAR * eps) or _sign(second, eps) is None:
            continue
        drafts.append(
            Draft(
                f"The two largest Lyapunov exponents of {s.name} are estimated at {_exponent(values['lle'], eps)} "
                f"and {_exponent(second, eps)}. Do they show hyperchaos?",
                s.truth["Hyperchaotic"],
                "indicator_diagnostics",
                s.id,
                "indicator.hyperchaos.v1",
                [pred("Hyperchaotic")],
                {"indicator": {"lle": values["lle"], "lle2": second, "eps": eps}},
            )
        )
    return drafts


def _cross_readings(inputs: Inputs):
    """(system, subject, lle, eps, K, how K was sampled, what explains K) for every computed pair:
    curated systems (noise makes the 0-1 test report chaos while the exponent is negative),
    finely sampled flows (the 0-1 test's oversampling failure) and sweep points. The cause is
    "sampling", "noise" or None (K reads the motion right)."""
    for s in inputs.core:  # curated systems; the imported ones stay in heldout_systems
        values = inputs.indicators.get(s.id)
        if not values:
            continue
        eps, lle = _eps(values), values["lle"]
        noisy = s.truth["Stochastic"] and values["k01"] >= K_CHAOTIC
        yield s, s.name, lle, eps, values["k01"], "a coarsely sampled time series", "noise" if noisy else None
        if values.get("k01_fine") is not None:
            fooled = s.truth["Chaotic"] and values["k01_fine"] <= K_REGULAR
            sampling = f"the same orbit sampled every {values['k01_fine_dt']:g} time units"
            yield s, s.name, lle, eps, values["k01_fine"], sampling, "sampling" if fooled else None


def cross_indicator(inputs: Inputs) -> list[Draft]:
    """Two indicators that may disagree, and why: the 0-1 test read at face value, or explained by
    the sampling of the series or by noise. The exponent alone does not answer these."""
    drafts = []
    for s, subject, lle, eps, k, sampling, cause in _cross_readings(inputs):
        if _sign(lle, eps) is None or _k_says(k) is None:
            continue
        text = (
            f"For {subject}, simulation gives a largest Lyapunov exponent of {_exponent(lle, eps)}, "
            f"and the 0-1 test for chaos applied to {sampling} gives K = {_fmt_k(k)}."
        )
        extra = {"indicator": {"lle": lle, "eps": eps, "k01": k}}
        for form, question, truth in (
            ("face value", "Can this value of K be taken at face value as a verdict on chaos?", cause is None),
            ("sampling", "Is this value of K an artefact of how the series was sampled?", cause == "sampling"),
            ("noise", "Is this value of K explained by noise in the system?", cause == "noise"),
        ):
            drafts.append(
                Draft(
                    f"{text} {question}",
                    truth,
                    "cross_indicator",
                    s.id,
                    "cross.explain_k.v1",
                    [pred("Chaotic")],
                    extra,
                    form,
                    cue=sampling.split(" ", 2)[1],
                )
            )
    return drafts


def regime_transition(inputs: Inputs) -> list[Draft]:
    drafts = []
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        label, symbol = sweep["label"], sweep["parameter"]  # the sweep names its system and fixed parameters
        system_id = sweep["system"]
        points = _asked_points(name, sweep)
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
    return drafts + _transitions(inputs)


def _transitions(inputs: Inputs, neighbours: int = 1) -> list[Draft]:
    """Points on either side of one onset or window end (at most `neighbours` apart, one change of
    regime between them): the true direction of the change, and the reversed one (so the template
    has both answers)."""
    drafts = []
    for name in sorted(inputs.sweeps):
        sweep = inputs.sweeps[name]
        label, symbol = sweep["label"], sweep["parameter"]
        points = _asked_points(name, sweep)
        chaotic = [p["regime"] == "chaotic" for p in points]
        for i, low in enumerate(points):
            for j in range(i + 1, min(i + 1 + neighbours, len(points))):
                high = points[j]
                changes = sum(chaotic[k] != chaotic[k + 1] for k in range(i, j))
                if changes != 1:
                    continue
                before, after = chaotic[i], chaotic[j]
                extra = {"sweep": name, "parameter": symbol, "from": low["value"], "to": high["value"]}
                for claimed_before, truth in ((before, True), (after, False)):
                    claimed = ("chaotic", "regular") if claimed_before else ("regular", "chaotic")
                    text = (
                        f"As {symbol} increases from {low['value']:g} to {high['value']:g}, does {label} change "
                        f"from {claimed[0]} to {claimed[1]} behaviour?"
                    )
                    drafts.append(
                        Draft(
                            text,
                            truth,
                            "regime_transition",
                            sweep["system"],
                            "regime.transition.v1",
                            [pred("Chaotic")],
                            extra,
                            " to ".join(claimed),
                        )
                    )
    return drafts


def fol_inference(inputs: Inputs) -> list[Draft]:
    """One-step inferences about "a system": implications (a required property TRUE plainly and
    FALSE negated, an excluded one the other way round), contrapositives against the inverse
    fallacy, joint satisfiability, and consistency of a description. Where two properties can
    hold together, a catalog system shows it (a witness)."""
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    names = list(ontology.PREDICATES)
    # (a, its value, b, its value) that some catalog system has together
    together = {
        (a, s.truth[a], b, s.truth[b])
        for s in inputs.core
        for a in names
        for b in names
        if s.truth[a] is not None and s.truth[b] is not None
    }
    drafts = []

    def add(text: str, truth: bool, template: str, preds: list[dict]) -> None:
        drafts.append(Draft(text, truth, "fol_inference", "generic", template, preds))

    for a in names:
        for b in names:
            if a == b:
                continue
            settled = b in requires[a] or b in excludes[a]
            if settled:
                for polarity in ("positive", "negative"):
                    add(
                        f"If a system {claim(a)}, does it necessarily follow that it {claim(b, polarity == 'positive')}?",
                        (b in requires[a]) == (polarity == "positive"),
                        "fol.implication.v1",
                        [pred(a), pred(b, polarity)],
                    )
            if b in requires[a]:
                # contrapositive (valid) ...
                add(
                    f"If a system {claim(b, False)}, does it follow that it {claim(a, False)}?",
                    True,
                    "fol.contrapositive.v1",
                    [pred(b, "negative"), pred(a, "negative")],
                )
                # ... and the inverse fallacy, where a system lacking `a` has `b`
                if (a, False, b, True) in together:
                    add(
                        f"If a system {claim(a, False)}, does it follow that it {claim(b, False)}?",
                        False,
                        "fol.contrapositive.v1",
                        [pred(a, "negative"), pred(b, "negative")],
                    )
            # "if b, then not a" and "can both hold": settled by an exclusion, or refuted by a
            # system that has both
            excluded = b in excludes[a]
            if excluded or (b not in requires[a] and (a, True, b, True) in together):
                add(
                    f"If a system {claim(b)}, does it follow that it {claim(a, False)}?",
                    excluded,
                    "fol.contrapositive.v1",
                    [pred(b), pred(a, "negative")],
                )
                if a < b:
                    add(
                        f"Can one and the same system satisfy both of these: it {claim(a)}, and it {claim(b)}?",
                        not excluded,
                        "fol.exclusion.v1",
                        [pred(a), pred(b)],
                    )
    drafts.extend(_assignment_consistency(inputs))
    return drafts


def _assignment_consistency(inputs: Inputs) -> list[Draft]:
    """ "Is this description consistent?": three facts that a catalog system has together, the
    last asked plainly or negated (consistent), or a premise and a compatible property with the
    negation of something the premise requires or a property it excludes (inconsistent)."""
    question = "A system is described as follows: {}. Is this description logically consistent?"
    requires = ontology.requires_closure()
    excludes = ontology.excludes_closure()
    drafts = []

    def add(parts: list[tuple[str, bool]], truth: bool) -> None:
        # one order for every description (by property), so that where a property stands says
        # nothing about the label
        parts = sorted(parts)
        if len({p for p, _ in parts}) < len(parts):
            return
        text = ", ".join(f"it {claim(p, v)}" for p, v in parts[:-1]) + f", and it {claim(*parts[-1])}"
        preds = [pred(p, "positive" if v else "negative") for p, v in parts]
        drafts.append(Draft(question.format(text), truth, "fol_inference", "generic", "fol.consistency.v1", preds))

    for s in inputs.core:
        true_preds = sorted(p for p in ontology.PREDICATES if s.truth[p] and askable(s, p))
        false_preds = sorted(p for p in ontology.PREDICATES if s.truth[p] is False and askable(s, p))
        for a, b in itertools.combinations(true_preds, 2):
            for c in true_preds:
                if c > b:
                    add([(a, True), (b, True), (c, True)], True)
            for c in false_preds:
                add([(a, True), (b, True), (c, False)], True)
        for first in true_preds:
            others = [p for p in true_preds if p != first and p not in requires[first]]
            for third in others:
                for needed in ontology.REQUIRES.get(first, ()):
                    add([(first, True), (third, True), (needed, False)], False)
                for excluded in sorted(excludes[first]):
                    if excluded not in excludes[third]:
                        add([(first, True), (third, True), (excluded, True)], False)
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
            if not askable(s, p):
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
            if not askable(s, asked) or not applies(s.truth):
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
            if not askable(s, p):
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
            for distractor, applies in DISTRACTORS:
                if not applies(s.truth):
                    continue
                drafts.append(
                    Draft(
                        f"{distractor} {ask(p, s.name)}",
                        value,
                        "perturbation_robustness",
                        s.id,
                        "perturb.distractor.v1",
                        [pred(p)],
                        {"perturbation": "distractor"},
                        distractor,
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
            swaps = [o for o in core[i + 1 :] + core[:i] if o.truth[p] is (not value) and askable(o, p)][:3]
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
    "Its name appears in the titles of many research papers.",
    "Some courses assign it as a homework exercise.",
    "Its parameters are usually quoted to a few significant digits.",
    "Software packages for dynamical systems often include it as an example.",
    "It has been the subject of conference talks.",
    "Its study dates back to the twentieth century.",
    "Graduate students often meet it in their first year.",
    "It appears in lecture notes from several universities.",
)


# Full-scale phrasings of one fact: (template suffix, text, the claim asked plainly?)
MORE_PHRASINGS = (
    ("is_it_correct", "Is it correct that {s} {claim}?", True),
    ("can_one_say_not", "Can one say that {s} {negated}?", False),
    ("true_or_not", "True or false, as a yes/no question: {s} {claim}. Is that so?", True),
    ("fair_to_say_not", "Is it fair to say that {s} {negated}?", False),
    ("known_that", "Is it known that {s} {claim}?", True),
    ("established_not", "Has it been established that {s} {negated}?", False),
    ("textbook", "Would a textbook on dynamical systems state that {s} {claim}?", True),
    ("agree_not", "Do you agree that {s} {negated}?", False),
    ("accurate", "Is it accurate to say that {s} {claim}?", True),
    ("mistaken_not", "Would it be a mistake to deny that {s} {negated}?", False),
    ("right_that", "Am I right that {s} {claim}?", True),
    ("hold_not", "Does it hold true that {s} {negated}?", False),
    ("expert", "Would an expert in nonlinear dynamics confirm that {s} {claim}?", True),
    ("confirm_not", "Can you confirm that {s} {negated}?", False),
    ("statement", "Here is a statement: {s} {claim}. Is it true?", True),
    ("claim_not", "Someone claims that {s} {negated}. Are they right?", False),
)


def _more_phrasings(family: str, systems) -> list[Draft]:
    drafts = []
    for s in systems:
        for p in ontology.PREDICATES:
            if not askable(s, p):
                continue
            for suffix, text, plain in MORE_PHRASINGS:
                drafts.append(
                    Draft(
                        text.format(s=s.name, claim=claim(p), negated=claim(p, False)),
                        s.truth[p] == plain,
                        family,
                        s.id,
                        f"{family}.{suffix}.v1",
                        [pred(p, "positive" if plain else "negative")],
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
            distractor,
        )
        for s in inputs.core
        for p in ontology.PREDICATES
        for distractor in FULL_DISTRACTORS
        if askable(s, p)
    ]


# Extra shapes used only at full scale, so that the committed default suite stays as it is.
FULL_SCALE_EXTRAS = {
    "atomic": lambda inputs: _more_phrasings("atomic", inputs.core),
    "extended_systems": lambda inputs: _more_phrasings("extended_systems", inputs.extended),
    "perturbation_robustness": _more_distractors,
    "indicator_diagnostics": lambda inputs: _two_points(inputs, neighbours=30),
    "regime_transition": lambda inputs: _transitions(inputs, neighbours=30),
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
    """As many TRUE as FALSE drafts within every stratum (`Draft.stratum`), each pair chosen to
    keep the draft's cues (`Draft.cues`: its system, or its premise and conclusion) as close to
    half TRUE as the pools allow (per_family in all; None: as many as the pools allow).
    Templates take turns, one TRUE and one FALSE draft each, cycling through their strata, until
    the family is full. Paraphrase groups are sampled whole."""
    if drafts and drafts[0].family == "consistency_paraphrase":
        return _sample_groups(drafts, per_family, rng)
    pools: dict[tuple, tuple[list[Draft], list[Draft]]] = {}
    for d in drafts:
        pools.setdefault(d.stratum(), ([], []))[0 if d.truth else 1].append(d)
    strata: dict[str, list[list[list[Draft]]]] = defaultdict(list)
    for key in sorted(pools):
        true, false = (rng.sample(pool, len(pool)) for pool in pools[key])
        if true and false:
            strata[key[0]].append([true, false])
    for template in strata:
        rng.shuffle(strata[template])
    total = sum(min(map(len, pools_)) for lists in strata.values() for pools_ in lists)
    budget = total if per_family is None else min(total, per_family // 2)
    balance: Counter = Counter()  # cue -> TRUE minus FALSE drafts chosen

    def pick(pool: list[Draft], sign: int) -> Draft:
        best = min(range(len(pool)), key=lambda i: sum(balance[c] for c in pool[i].cues()) * sign)
        chosen = pool.pop(best)
        for c in chosen.cues():
            balance[c] += sign
        return chosen

    chosen: list[Draft] = []
    turn = dict.fromkeys(strata, 0)
    while budget:
        for template in sorted(strata):
            lists = [pair for pair in strata[template] if pair[0] and pair[1]]
            if not budget or not lists:
                continue
            true, false = lists[turn[template] % len(lists)]
            turn[template] += 1
            chosen += [pick(true, 1), pick(false, -1)]
            budget -= 1
    return chosen


def _sample_groups(drafts: list[Draft], per_family: int | None, rng: random.Random) -> list[Draft]:
    """Whole paraphrase groups, as many TRUE as FALSE groups per asked predicate, predicates
    taking turns."""
    groups = defaultdict(list)
    for d in drafts:
        groups[d.extra["group"]].append(d)
    pools: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for name, members in sorted(groups.items()):
        pools[members[0].predicates[-1]["name"]][0 if members[0].truth else 1].append(name)
    pairs = {p: list(zip(rng.sample(t, len(t)), rng.sample(f, len(f)))) for p, (t, f) in sorted(pools.items())}
    size = len(next(iter(groups.values())))
    budget = sum(map(len, pairs.values())) if per_family is None else per_family // size // 2
    chosen: list[Draft] = []
    order = sorted(pairs, key=lambda p: rng.random())
    while budget and any(pairs.values()):
        for p in order:
            if budget and pairs[p]:
                chosen += [d for g in pairs[p].pop() for d in groups[g]]
                budget -= 1
    return chosen


class _PositionBalance:
    """Keeps every turn position near half TRUE: each turn asks for the label its position has
    seen less often so far (a coin decides ties), and the turn's wording is chosen to match."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # position -> [TRUE, FALSE]

    def wanted(self, position: int) -> bool:
        true, false = self.counts[position]
        return self.rng.random() < 0.5 if true == false else true < false

    def seen(self, position: int, truth: bool, times: int = 1) -> None:
        self.counts[position][0 if truth else 1] += times


def dialogues(inputs: Inputs, count: int, rng: random.Random, asked: set[str] = frozenset()) -> list[dict]:
    """Multi-turn dialogues about one system. Every turn stands alone: a follow-up states its
    premise ("Suppose that S is P. Does it follow that it is Q?"), so its gold never depends on the
    model's earlier answer. No predicate is asked twice in a dialogue, no text twice in the bank
    (`asked`: the families' texts), and no turn position is one-sided: the opening fact is a
    property the system has or lacks, the follow-ups are what that fact implies (asked plainly or
    negated), then unrelated properties."""
    requires = ontology.requires_closure()
    balance = _PositionBalance(rng)
    records = []
    used = {" ".join(t.lower().split()) for t in asked}
    systems = sorted(inputs.core, key=lambda s: s.id)

    def fresh(text: str) -> bool:
        return " ".join(text.lower().split()) not in used

    # a turn about a system's usual value of a property is one the shortcut baseline gets right:
    # candidates of whichever kind is behind so far come first
    usual_turns = Counter()

    def usual(q: str) -> bool:
        return majority_values()[q] == s.truth[q]

    def ordered(candidates: list[str]) -> list[str]:
        behind = usual_turns[True] < usual_turns[False]
        shuffled = rng.sample(candidates, len(candidates))
        return sorted(shuffled, key=lambda q: usual(q) != behind)

    made = 0
    for n in range(count * 2):
        if made == count:
            break
        s = systems[n % len(systems)]
        holds = balance.wanted(1)
        # what a fact about `start` settles: if it holds, everything it requires holds; if it
        # fails, everything that requires it fails
        settles = {
            p: [q for q in sorted(requires[p] - {p}) if s.truth[q] is True and askable(s, q)]
            if holds
            else [q for q in known_preds(s, False) if p in requires[q] and askable(s, q)]
            for p in known_preds(s, holds)
            if askable(s, p)
        }
        opening = {p: f"Let us discuss {s.name}. Is it true that it {claim(p)}?" for p in settles}
        starts = [p for p in sorted(settles) if fresh(opening[p])]
        if not starts:
            continue
        start = ordered([p for p in starts if settles[p]] or starts)[0]
        turns = [(opening[start], holds, pred(start), "dialogue.open.v1")]
        premise = f"Suppose that {s.name} {claim(start, holds)}."
        for q in ordered(settles[start])[: rng.randint(1, 2)]:
            positive = balance.wanted(len(turns) + 1) == holds
            text = f"{premise} Does it follow that it {claim(q, positive)}?"
            if not fresh(text):
                continue
            turns.append(
                (text, holds == positive, pred(q, "positive" if positive else "negative"), "dialogue.implication.v1")
            )
            balance.seen(len(turns), turns[-1][1])
        taken = {start, *(t[2]["name"] for t in turns)}
        others = [p for p in ontology.PREDICATES if askable(s, p) and p not in taken]
        wanted = len(turns) + min(rng.randint(1, 2), 6 - len(turns))
        for other in ordered(others):
            if len(turns) >= wanted:
                break
            value = s.truth[other]
            positive = balance.wanted(len(turns) + 1) == value
            text = f"Still about {s.name}: is it true that it {claim(other, positive)}?"
            if not fresh(text):
                continue
            turns.append(
                (text, value == positive, pred(other, "positive" if positive else "negative"), "dialogue.other.v1")
            )
            balance.seen(len(turns), turns[-1][1])
        if len(turns) < 3:
            # too short to test consistency across turns: undone, the next system's turn
            for position, turn in enumerate(turns[1:], start=2):
                balance.seen(position, turn[1], -1)
            continue
        balance.seen(1, holds)
        usual_turns.update(usual(t[2]["name"]) for t in turns)
        used.update(" ".join(t[0].lower().split()) for t in turns)
        made += 1
        dialogue_id = f"dlg-{made:04d}"
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
        cap = FULL_LOGIC_CAP if per_family is None and family in LOGIC_FAMILIES else per_family
        chosen = sample_family(drafts, cap, random.Random(f"{seed}:{family}"))
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
    return families, dialogues(inputs, DIALOGUES[scale], random.Random(f"{seed}:dialogues"), asked)


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
