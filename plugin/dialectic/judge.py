"""LLM-as-judge (SPEC 6.4): the methodology's rubric prompt, n judges, per-dimension medians,
the agreement rule, judge errors, and the 0-100 score.

Judging is separate from generation: a judge call is its own request with its own cassette
(cassettes/<judge>/dialectic-judge/...), so changing the judge never re-generates an answer.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from pytest_reasoning_evals.dialectic.records import Judgement, VerdictRecord

DIMENSIONS = ("h_quality", "oscillation_depth", "crux_precision", "epistemic_calibration", "actionability")
SYSTEM = "You are an evaluation judge for dialectical reasoning. Score objectively."
MAX_TOKENS = 500
AGREEMENT_SPREAD = 2  # every dimension's max - min across judges must be <= this
TEMPLATE = """## Evaluate Dialectical Response Quality

### Response: {response}
### Query: {query}

### Scoring (0-10 each)

1. **Hypothesis Quality**: Distinct, defensible, non-strawman?
2. **Oscillation Depth**: Did stress-testing produce insights?
3. **Crux Precision**: Correctly identified and typed?
4. **Epistemic Calibration**: Confidence appropriate to evidence AND process?
5. **Actionability**: Next steps concrete and prioritized?

### Output (JSON)
{{"h_quality": <0-10>, "oscillation_depth": <0-10>, "crux_precision": <0-10>,
 "epistemic_calibration": <0-10>, "actionability": <0-10>, "rationale": "..."}}"""
# Servers that can constrain output to a schema (OpenAI, llama.cpp, Gemini) get this one.
SCHEMA = {
    "type": "object",
    "properties": {
        **{d: {"type": "integer", "minimum": 0, "maximum": 10} for d in DIMENSIONS},
        "rationale": {"type": "string"},
    },
    "required": [*DIMENSIONS, "rationale"],
    "additionalProperties": False,
}


class JudgeError(ValueError):
    """A judge reply that is not the rubric's JSON."""


def prompt(query: str, response: str) -> tuple[dict, ...]:
    return (
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEMPLATE.format(response=response, query=query)},
    )


def json_object(text: str) -> dict:
    """The first complete JSON object in a reply, bare, fenced or inside prose: decoded from each
    "{" in turn, so prose or braces after the object (or a non-JSON "{" before it) do not matter."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise JudgeError(f"no JSON object in the judge reply: {' '.join(text.split())[:120]!r}")


def parse(text: str) -> dict:
    """-> {dimension: int 0..10, ..., "rationale": str}; JudgeError otherwise."""
    data = json_object(text)
    scores = {}
    for dim in DIMENSIONS:
        value = data.get(dim)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
            raise JudgeError(f"judge reply has no 0-10 score for {dim!r} (got {value!r})")
        scores[dim] = value
    return {**scores, "rationale": str(data.get("rationale", ""))}


@dataclass(frozen=True)
class Verdict:
    """What n judges said about one response."""

    judgements: tuple[Judgement, ...]  # the parsed replies of the judges that answered properly
    errors: tuple[str, ...]  # one message per judge whose reply was unusable

    @property
    def medians(self) -> dict[str, float] | None:
        if not self.judgements:
            return None
        return {d: float(statistics.median(j[d] for j in self.judgements)) for d in DIMENSIONS}

    @property
    def spread(self) -> dict[str, float] | None:
        if not self.judgements:
            return None
        return {d: float(max(j[d] for j in self.judgements) - min(j[d] for j in self.judgements)) for d in DIMENSIONS}

    @property
    def agreement(self) -> bool | None:
        spread = self.spread
        return None if spread is None else all(s <= AGREEMENT_SPREAD for s in spread.values())

    @property
    def needs_human_review(self) -> bool:
        return bool(self.errors) or self.agreement is not True

    def score(self, hard_fail: bool) -> float | None:
        """0 on a hard fail, else 10 x the mean of the five medians (0-100); None if no judge answered."""
        if hard_fail:
            return 0.0
        medians = self.medians
        return None if medians is None else round(10 * statistics.fmean(medians.values()), 4)

    def to_dict(self) -> VerdictRecord:
        return {
            "n_judges": len(self.judgements) + len(self.errors),
            "n_valid": len(self.judgements),
            "medians": self.medians,
            "spread": self.spread,
            "agreement": self.agreement,
            "needs_human_review": self.needs_human_review,
            "errors": list(self.errors),
            "judgements": list(self.judgements),
        }
