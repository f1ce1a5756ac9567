"""The rubric checks, one pytest item each, and the records they send to the controller.

Each check returns a record (plain JSON values) with `passed` and a one-line `reason`; a check
that does not pass fails its item, and the gates decide the session (as for ChaosBench).
"""

from __future__ import annotations

from pytest_reasoning_evals.dialectic.cases import BASELINE, Case, Variant
from pytest_reasoning_evals.dialectic.judge import Verdict
from pytest_reasoning_evals.dialectic.pcc import pcc_reason
from pytest_reasoning_evals.dialectic.records import (
    EPOCH_FIELDS,
    SAVING_FIELDS,
    ConversationRecord,
    CrossProviderCheckRecord,
    CrossProviderRecord,
    JudgeCheckRecord,
    PublicResponse,
    ResolutionCheckRecord,
    ResponseCheckRecord,
    ResponseRecord,
)
from pytest_reasoning_evals.dialectic.verdict import PassRule
from pytest_reasoning_evals.thinking import thinking_of

SUITE = "dialectic"


def response_key(response: ResponseRecord) -> list[str]:
    return [response["query_id"], response["variant"], response["model"]]


def public(response: ResponseRecord) -> PublicResponse:
    """The response as the controller keeps it (no extraction internals beyond the metrics); sent
    once per worker with the first check record that names it."""
    c = response["completion"]
    return (
        {
            k: response[k]
            for k in (
                "query_id",
                "variant",
                "model",
                "category",
                "query",
                "expected_mode",
                "text",
                "metrics",
                "hard_fail",
            )
        }
        | {
            "mode": response["extraction"]["mode"],
            "signals": response["extraction"]["signals"],
            "stability": response["extraction"]["stability"],
            "pcc_ceiling": response["extraction"]["pcc_ceiling"],
            "confidences": response["extraction"]["confidences"],
            "cruxes": response["extraction"]["cruxes"],
            "tokens": {
                "input": c["input_tokens"],
                "output": c["output_tokens"],
                "total": c["input_tokens"] + c["output_tokens"],
            },
            "cost_usd": c["cost_usd"],
            "latency_ms": c["latency_ms"],
            "error": c["error"],
            "cassette": c["cassette"],
            "cassette_hit": c.get("cassette_hit"),
            "thinking": {"in_answer": thinking_of(response["text"]), "from_provider": c["reasoning"]},
        }
        | {k: response[k] for k in EPOCH_FIELDS if k in response}
        | {k: c[k] for k in SAVING_FIELDS if k in c}
    )


def _record(check: str, response: ResponseRecord, passed: bool, reason: str | None, **extra) -> ResponseCheckRecord:
    return {
        "suite": SUITE,
        "check": check,
        "id": f"{response['query_id']}-{response['variant']}-{check}",
        "response_key": response_key(response),
        "passed": passed,
        "reason": reason,
        **extra,
    }


def structure(case: Case, variant: Variant, response: ResponseRecord) -> ResponseCheckRecord:
    """Under a structured prompt, a dialectic case must show hypotheses (>= 2), an oscillation
    table, typed cruxes and a numeric confidence. Elsewhere the structure is only recorded."""
    if case.expected_mode != "dialectic" or variant.name == BASELINE:
        return _record("structure", response, True, None)
    if response["completion"]["error"]:
        return _record("structure", response, False, f"no response: {response['completion']['error']}")
    e = response["extraction"]
    missing = [
        what
        for what, ok in (
            ("hypotheses (>= 2)", e["h_count"] >= 2),
            ("oscillation table", e["oscillation_table"]),
            ("cruxes", bool(e["cruxes"])),
            ("confidence", e["confidence"] is not None),
        )
        if not ok
    ]
    reason = f"structure: missing {', '.join(missing)} (found {e['h_count']} hypotheses)" if missing else None
    return _record("structure", response, not missing, reason)


def pcc(case: Case, variant: Variant, response: ResponseRecord) -> ResponseCheckRecord:
    """A confidence above the process ceiling is a hard fail; not applicable passes."""
    valid = response["metrics"]["pcc_valid"]
    reason = pcc_reason(response["extraction"]) if valid is False else None
    return _record("pcc", response, valid is not False, reason)


def mode(case: Case, variant: Variant, response: ResponseRecord) -> ResponseCheckRecord:
    e = response["extraction"]
    ok = response["metrics"]["mode_correct"]
    reason = (
        None
        if ok
        else (f"mode: expected {case.expected_mode}, got {e['mode']} (signals: {', '.join(e['signals']) or 'none'})")
    )
    return _record("mode", response, ok, reason)


def judged(
    case: Case, variant: Variant, response: ResponseRecord, verdict: Verdict, rule: PassRule
) -> JudgeCheckRecord:
    """A judged response passes at the pass rule's score (settings.PASS_RULE)."""
    score = verdict.score(response["hard_fail"])
    if verdict.not_judged is not None:
        reason = f"not judged: {verdict.not_judged}"
    elif response["hard_fail"]:
        reason = f"score 0: hard fail ({pcc_reason(response['extraction'])})"
    elif score is None:
        reason = f"no usable judgement: {'; '.join(verdict.errors)}"
    elif not rule.score_passes(score):
        reason = f"score {score:.1f} < {rule.min_score:g}" + (
            " (judges disagree: needs human review)" if verdict.agreement is False else ""
        )
    else:
        reason = None
    return _record("judge", response, reason is None, reason, score=score, judge=verdict.to_dict())


def resolution(conversation: ConversationRecord) -> ResolutionCheckRecord:
    turns = conversation["turns_to_resolution"]
    failed = [*conversation["judge_errors"], *conversation.get("reply_errors", ())]
    # not the model's doing
    if conversation.get("not_judged"):
        reason = f"not judged: {conversation['not_judged']}"
    elif turns is None:
        reason = f"not resolved after {conversation['turns']} turns" + (
            f" ({len(failed)} call{'s' if len(failed) > 1 else ''} failed; first: {failed[0]})" if failed else ""
        )
    else:
        reason = None
    return {
        "suite": SUITE,
        "check": "resolution",
        "id": f"{conversation['query_id']}-{conversation['variant']}-resolution",
        "conversation": conversation,
        "passed": turns is not None,
        "reason": reason,
    }


def cross_provider(result: CrossProviderRecord, errors: list[str]) -> CrossProviderCheckRecord:
    reason = "; ".join(errors) if errors else None
    return {
        "suite": SUITE,
        "check": "cross_provider",
        "id": f"{result['query_id']}-cross_provider",
        "comparison": result,
        "passed": not errors,
        "reason": reason,
    }
