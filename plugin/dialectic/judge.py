"""LLM-as-judge (SPEC 6.4): the methodology's rubric prompt, n judges, per-dimension medians,
the agreement rule, judge errors, and the 0-100 score.

Judging is separate from generation: a judge call is its own request with its own cassette
(cassettes/<judge>/dialectic-judge/...), so changing the judge never re-generates an answer.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field

import json5

from pytest_reasoning_evals.dialectic.records import Judgement, VerdictRecord
from pytest_reasoning_evals.thinking import strip_thinking

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


def _object_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost {...} in `text`, braces inside quoted strings aside; an
    object cut short (a truncated reply) has no span."""
    spans, depth, start, quote, escaped = [], 0, 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and depth:
            quote = ch
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _decoded(span: str) -> dict | None:
    """A span as an object: strict JSON, else JSON5 (trailing commas, single quotes, bare keys)."""
    try:
        value = json.loads(span)
    except (ValueError, RecursionError):  # nested deeper than the parser's stack: unreadable, like bad JSON
        try:
            value = json5.loads(span)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def json_object(text: str) -> dict:
    """The last complete JSON object in a reply (a final answer comes after drafts), bare, fenced
    or inside prose, once reasoning blocks are dropped; JSON5 is read too."""
    visible = strip_thinking(text)
    for start, end in reversed(_object_spans(visible)):
        value = _decoded(visible[start:end])
        if value is not None:
            return value
    raise JudgeError(f"no JSON object in the judge reply: {_excerpt(text)!r}")


def _excerpt(text: str) -> str:
    return " ".join(text.split())[:120]


_SCORE_TEXT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*10\s*)?")


def _score(value) -> int | float | None:
    """A 0-10 score written as a number, or as text: "7", "7.5", "7/10"; None otherwise."""
    if isinstance(value, str) and (m := _SCORE_TEXT.fullmatch(value)):
        value = float(m[1]) if "." in m[1] else int(m[1])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
        return None
    return value


def parse(text: str) -> dict:
    """-> {dimension: 0..10, ..., "rationale": str}, from the reply's last JSON object (its scores
    at the top or under "scores"); JudgeError naming the dimension otherwise."""
    data = json_object(text)
    nested = data.get("scores")
    scores_of = {**data, **nested} if isinstance(nested, dict) else data
    scores = {}
    for dim in DIMENSIONS:
        value = _score(scores_of.get(dim))
        if value is None:
            raise JudgeError(
                f"judge reply has no 0-10 score for {dim!r} (got {scores_of.get(dim)!r}): {_excerpt(text)[:80]!r}"
            )
        scores[dim] = value
    return {**scores, "rationale": str(data.get("rationale", scores_of.get("rationale", "")))}


@dataclass(frozen=True)
class Verdict:
    """What n judges said about one response."""

    judgements: tuple[Judgement, ...]  # the parsed replies of the judges that answered properly
    errors: tuple[str, ...]  # one message per judge whose reply was unusable
    self_judged: bool = False  # a judge of the panel is the model that wrote the response
    not_judged: str | None = None  # why no judge was asked (the response was not answered)
    cost_usd: float = 0.0  # what the panel's calls cost, usable replies or not
    saved: dict = field(default_factory=dict)  # its calls' cache and batch fields (base.saving_fields)

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
        # nothing was answered, so there is nothing for a human to review either
        return self.not_judged is None and (bool(self.errors) or self.agreement is not True)

    def score(self, hard_fail: bool) -> float | None:
        """0 on a hard fail, else 10 x the mean of the five medians (0-100); None if no judge answered."""
        if self.not_judged is not None:
            return None
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
            "self_judged": self.self_judged,
            "not_judged": self.not_judged,
            "cost_usd": self.cost_usd,
            **self.saved,
        }
