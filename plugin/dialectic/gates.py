"""The dialectic gates (SPEC 6.8): all of a run's verdicts. Always on: failed calls, completeness;
opt-in: maximum PCC hard fails, variants that must pass, no regression against a baseline."""

from __future__ import annotations

from collections import Counter

from pytest_reasoning_evals.dialectic.verdict import PassRule
from pytest_reasoning_evals.gates import MAX_ERROR_RATE, GateResult, failed_share, incomplete
from pytest_reasoning_evals.providers.base import ErrorKind


def dialectic_gates(
    responses: list[dict],
    records: list[dict],
    variants: list[dict],
    *,
    max_hard_fails: int | None,
    required: tuple[str, ...],
    rule: PassRule,
    harness_note: str | None = None,
    regression: tuple[str, dict | None, float] | None = None,
    max_failed_judge_share: float | None = None,
) -> list[GateResult]:
    """Every verdict of a dialectic run. `regression`: (the baseline's path, the comparison or
    None, alpha) when --eval-fail-on-regression asks."""
    gates = (
        check_failed_calls(responses)
        + check_failed_judge_calls(records, max_failed_judge_share)
        + check_dialectic_gates(variants, max_hard_fails=max_hard_fails, required=required, rule=rule)
        + incomplete("dialectic-complete", harness_note)
    )
    if regression is not None:
        gates.append(regression_gate(*regression))
    return gates


def regression_gate(baseline: str, comparison: dict | None, alpha: float) -> GateResult:
    """No variant regressed against the baseline; nothing paired (or no comparison) fails."""
    if comparison is None or not any(v["n_paired"] for v in comparison["variants"]):
        return GateResult("dialectic-no-regression", False, f"no case is paired with {baseline}: nothing to compare")
    worse = [v["variant"] for v in comparison["variants"] if v["regressed"]]
    detail = f"regressed: {', '.join(worse)}" if worse else f"no variant regressed (alpha {alpha})"
    return GateResult("dialectic-no-regression", not worse, detail)


def check_dialectic_gates(
    variants: list[dict], *, max_hard_fails: int | None, required: tuple[str, ...], rule: PassRule
) -> list[GateResult]:
    """Opt-in: at most N PCC hard fails over all responses; named variants must pass `rule` (SPEC 6.8;
    their summaries' "pass" is its verdict)."""
    results = []
    if not variants and (max_hard_fails is not None or required):
        return [GateResult("dialectic", False, "nothing evaluated: no dialectic response was judged")]
    if max_hard_fails is not None:
        hard = sum(v["hard_fails"] for v in variants)
        results.append(
            GateResult("max-hard-fails", hard <= max_hard_fails, f"{hard} PCC hard fails, allowed {max_hard_fails}")
        )
    for name in required:
        rows = [v for v in variants if v["variant"] == name]
        if not rows:
            results.append(GateResult(f"variant-pass[{name}]", False, "variant not evaluated in this run"))
            continue
        for v in rows:
            score = "n/a" if v["mean_score"] is None else f"{v['mean_score']:.1f}"
            results.append(
                GateResult(
                    f"variant-pass[{name}]",
                    v["pass"],
                    f"{v['model']}: hard fails {v['hard_fails']}, mean score {score} (>= {rule.min_score:g}), "
                    f"mode accuracy {v['mode_accuracy']:.2f} (>= {rule.min_mode_accuracy:g})",
                )
            )
    return results


def check_failed_calls(responses: list[dict]) -> list[GateResult]:
    """Always on: more than 5% of responses without an answer is an outage or a stale recording,
    not a result."""
    failed = [r for r in responses if r.get("error")]
    if not failed:
        return []
    misses = sum(ErrorKind.of(str(r["error"])) is ErrorKind.MISS for r in failed)
    how = f"failed ({len(failed) - misses} provider errors, {misses} cassette misses)"
    return failed_share("dialectic-failed-calls", len(failed), len(responses), "responses", how)


JUDGED_CHECKS = ("judge", "resolution")  # the items whose own calls go to the judge (and, resolving, the model)
# why a judge or resolution item judged nothing sure, in the order the gate's detail lists them
UNJUDGED = ("responses not answered", "with cassette misses", "with failed calls", "unreadable judge replies")


def check_failed_judge_calls(records: list[dict], allowed: float | None = None) -> list[GateResult]:
    """Always on: a judge or resolution item that got no usable judgement (its response was not
    answered, its calls failed, its judges' replies could not be read) or had a failed call;
    more than `allowed` of them (5% by default) is a stale recording, an outage or a judge that
    cannot judge, not a result."""
    judged = [r for r in records if r.get("check") in JUDGED_CHECKS]
    causes = Counter(cause for cause in map(_unjudged, judged) if cause)
    if not causes:
        return []
    listed = ", ".join(f"{causes[c]} {c}" for c in UNJUDGED if c in causes)
    how = f"got no usable judgement or had a failed call ({listed})"
    limit = MAX_ERROR_RATE if allowed is None else allowed
    noun = "judge and resolution items"
    return failed_share("dialectic-judge-failed-calls", causes.total(), len(judged), noun, how, limit)


def _unjudged(record: dict) -> str | None:
    """Why a judge or resolution item judged nothing sure (one of UNJUDGED), or None."""
    verdict = (record.get("judge") if record["check"] == "judge" else record.get("conversation")) or {}
    if verdict.get("not_judged"):
        return UNJUDGED[0]
    errors = _call_errors(record)
    if errors:
        return UNJUDGED[1] if any(ErrorKind.MISS in e for e in errors) else UNJUDGED[2]
    if record["check"] == "judge":
        usable = verdict.get("n_valid", 0)
    else:  # a turn whose verdict could not be read has an error of its own
        usable = len(verdict.get("verdicts", ())) - len(verdict.get("judge_errors", ()))
    return None if usable > 0 else UNJUDGED[3]


def _call_errors(record: dict) -> list[str]:
    """The failed calls of a judge or resolution item (an unusable judge reply is not one)."""
    if record["check"] == "judge":
        return [str(e) for e in (record.get("judge") or {}).get("errors", ()) if "call failed" in str(e)]
    conversation = record.get("conversation") or {}
    judged = [str(e) for e in conversation.get("judge_errors", ()) if "call failed" in str(e)]
    return judged + [str(e) for e in conversation.get("reply_errors", ())]  # a follow-up's error is always its call's
