"""Controller side: the dialectic item records -> the output files of SPEC 6.8 under
<out>/dialectic/, the variant pass rule, and the terminal lines per variant."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path

from pytest_reasoning_evals.dialectic import cross_provider, multiturn, spotcheck
from pytest_reasoning_evals.dialectic.agreement import judge_agreement
from pytest_reasoning_evals.dialectic.costs import answer_costs
from pytest_reasoning_evals.dialectic.epoch_summary import epoch_block, epoch_line
from pytest_reasoning_evals.dialectic.records import (
    EPOCH_FIELDS,
    SAVING_FIELDS,
    ItemRecord,
    PerResponseRecord,
    PublicResponse,
    response_of,
    saved_parts,
)
from pytest_reasoning_evals.dialectic.verdict import PassRule
from pytest_reasoning_evals.providers.base import MISS, saved_text
from pytest_reasoning_evals.results import write_json, write_lines

# what a response's entry copies from the response as sent, and from its judge item's judgement
RESPONSE_FIELDS = (
    "category",
    "expected_mode",
    "mode",
    "signals",
    "stability",
    "pcc_ceiling",
    "confidences",
    "cruxes",
    "latency_ms",
    "error",
    "query",
    "text",
    "thinking",
)
JUDGE_FIELDS = (
    "n_judges",
    "n_valid",
    "spread",
    "agreement",
    "needs_human_review",
    "errors",
    "judgements",
    "self_judged",
    "not_judged",
    "cost_usd",
)


def responses(records: list[ItemRecord], sent: dict[tuple, PublicResponse]) -> list[PerResponseRecord]:
    """One entry per (query, variant, model), merged from its check items (SPEC 6.8 fields first);
    `sent` holds each response as it was sent once, by (query, variant, model)."""
    merged: dict[tuple, PerResponseRecord] = {}
    for record in records:
        if "response_key" not in record:
            continue
        r = sent[tuple(record["response_key"])]
        entry = merged.setdefault(response_of(r), _entry(r))
        entry["checks"][record["check"]] = record["passed"]
        if record["check"] == "judge":
            entry["score"] = record["score"]
            entry["judge_scores"] = record["judge"]["medians"]
            entry["judge"] = {k: record["judge"][k] for k in JUDGE_FIELDS}
            entry["judge"] |= {k: record["judge"][k] for k in SAVING_FIELDS if k in record["judge"]}
    return [merged[k] for k in sorted(merged)]


def _entry(r: PublicResponse) -> PerResponseRecord:
    """A response's entry before its check items fill in their verdicts."""
    return {
        "query_id": r["query_id"],
        "variant": r["variant"],
        "model": r["model"],
        "hard_fail": r["hard_fail"],
        "score": None,
        "metrics": r["metrics"],
        "judge_scores": None,
        "tokens": r["tokens"],
        "cost": r["cost_usd"],
        "judge": None,
        "checks": {},
        **{k: r[k] for k in RESPONSE_FIELDS},
        **{k: r[k] for k in EPOCH_FIELDS if k in r},
        **{k: r[k] for k in SAVING_FIELDS if k in r},
    }


def cost_saved(rows: list[PerResponseRecord]) -> dict:
    """What the prompt cache and the batches saved on the rows' responses and their judges' calls
    (against the list price, as ChaosBench's summary.json says it), each part only when not zero,
    the whole only when a part is: the summaries of runs without either stay as they were."""
    return saved_parts(part for r in rows for part in (r, *([r["judge"]] if r["judge"] else [])))


def variant_summaries(per_response: list[PerResponseRecord], rule: PassRule) -> list[dict]:
    out = []
    for variant, model in sorted({(r["variant"], r["model"]) for r in per_response}):
        rows = [r for r in per_response if (r["variant"], r["model"]) == (variant, model)]
        scores = [r["score"] for r in rows if r["score"] is not None]
        applicable = [r for r in rows if r["metrics"]["pcc_valid"] is not None]
        hard_fails = sum(r["hard_fail"] for r in rows)
        mean_score = statistics.fmean(scores) if scores else None
        mode_accuracy = sum(r["metrics"]["mode_correct"] for r in rows) / len(rows)
        out.append(
            {
                "variant": variant,
                "model": model,
                "test_cases": len(rows),
                "hard_fails": hard_fails,
                "mean_score": mean_score,
                "mode_accuracy": mode_accuracy,
                "pcc_compliance": (sum(r["metrics"]["pcc_valid"] for r in applicable) / len(applicable))
                if applicable
                else None,
                "pcc_applicable": len(applicable),
                "judged": len(scores),
                "needs_human_review": sum(bool(r["judge"] and r["judge"]["needs_human_review"]) for r in rows),
                "judge_agreement": judge_agreement(rows)["agreement_share"],
                "tokens": sum(r["tokens"]["total"] for r in rows),
                "cost_usd": sum(r["cost"] for r in rows),
                "judge_cost_usd": sum(r["judge"]["cost_usd"] for r in rows if r["judge"]),
                **cost_saved(rows),
                "pass": rule.variant_passes(hard_fails, mean_score, mode_accuracy),
                **({"epochs": epochs} if (epochs := epoch_block(rows, rule)) else {}),
            }
        )
    return out


def write_outputs(
    directory: Path, records: list[ItemRecord], sent: dict[tuple, PublicResponse], *, seed: int, rule: PassRule
) -> dict:
    """Write every dialectic output file; -> the summaries (for gates and the terminal)."""
    directory.mkdir(parents=True, exist_ok=True)
    per_response = responses(records, sent)
    variants = variant_summaries(per_response, rule)
    conversations = sorted((r["conversation"] for r in records if r["check"] == "resolution"), key=response_of)
    comparisons = [r["comparison"] for r in records if r["check"] == "cross_provider"]
    summaries = {
        "per_response": per_response,  # also what a baseline comparison reads
        "variants": variants,
        "judge_agreement": judge_agreement(per_response),
        "multiturn": multiturn.summarize(conversations) | {"conversations_detail": conversations},
        "cross_provider": cross_provider.summarize(comparisons),
    }
    # with the query and reply: report.html shows them
    write_lines(directory / "per_response.jsonl", (json.dumps(r, sort_keys=True) for r in per_response))
    write_json(
        directory / "variant_summary.json",
        {"pass_rule": rule.__dict__, "variants": variants, "judge_agreement": summaries["judge_agreement"]},
    )
    write_json(directory / "multiturn_summary.json", summaries["multiturn"])
    write_json(directory / "cross_provider_summary.json", summaries["cross_provider"])
    queue, key = spotcheck.queue(per_response, seed)
    write_lines(directory / "spotcheck_queue.jsonl", (json.dumps(entry, sort_keys=True) for entry in queue))
    write_json(directory / "spotcheck_key.json", key)
    summaries["spotcheck_queue"] = len(queue)
    return summaries


def _fmt(value, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def _judge_lines(a: dict) -> list[str]:
    if not a["responses_judged"]:
        return []
    alphas = ", ".join(f"{d} {_fmt(v, '.2f')}" for d, v in a["krippendorff_alpha"].items())
    lines = [
        f"judges: agree on {a['agreeing']}/{a['responses_compared']} responses with 2+ judgements "
        f"({_fmt(a['agreement_share'], '.0%')}); Krippendorff's alpha (interval): {alphas}"
    ]
    if a["self_judged"]:
        lines.append(
            "SELF-JUDGED: a judge is the model that wrote the answers it scores; name distinct judge models "
            "with --eval-judge-model"
        )
    return lines


def cost_line(summaries: dict, paid_now: float) -> str:
    """What the run's answers cost by part, each call once (at their price, replayed or not), what
    batches and the prompt cache saved on them, and what this run's live calls paid (run_meta.json's spent_usd)."""
    conversations, comparisons = (
        summaries["multiturn"]["conversations_detail"],
        summaries["cross_provider"]["comparisons"],
    )
    parts, saved = answer_costs(summaries["per_response"], conversations, comparisons)
    shown = ", ".join(f"{name} ${value:.4f}" for name, value in parts.items())
    return f"cost ${sum(parts.values()):.4f} ({shown}){saved_text(saved)}; paid by live calls now ${paid_now:.4f}"


def terminal_lines(summaries: dict, directory: Path, paid_now: float) -> list[str]:
    lines = []
    for v in summaries["variants"]:
        lines.append(
            f"variant {v['variant']} ({v['model']}): {v['test_cases']} cases, hard fails {v['hard_fails']}, "
            f"mean score {_fmt(v['mean_score'])}, mode accuracy {_fmt(v['mode_accuracy'], '.0%')}, "
            f"PCC compliance {_fmt(v['pcc_compliance'], '.0%')} ({v['pcc_applicable']} applicable), "
            f"{'PASS' if v['pass'] else 'not passing'}"
        )
        lines += [epoch_line(v)] if "epochs" in v else []
    lines += _judge_lines(summaries["judge_agreement"])
    m = summaries["multiturn"]
    if m["conversations"] or m["not_judged"]:
        lines.append(
            f"multi-turn: {m['resolved']}/{m['conversations']} resolved, first-turn rate "
            f"{_fmt(m['first_turn_resolution_rate'], '.0%')}, mean turns {_fmt(m['mean_turns_to_resolution'], '.2f')}"
            + (f" ({m['not_judged']} not judged: the response was not answered)" if m["not_judged"] else "")
        )
    c = summaries["cross_provider"]
    if c["queries"]:
        lines.append(
            f"cross-provider: {', '.join(c['providers_compared'])}; by quality {c['rankings']['by_quality']}, "
            f"by efficiency {c['rankings']['by_efficiency'] or 'n/a (no cost)'}"
        )
    lines.append(cost_line(summaries, paid_now))
    lines.append(f"spot-check queue: {summaries['spotcheck_queue']} responses; dialectic results: {directory}")
    return lines


def cassette_misses(responses: list[PublicResponse], records: list[ItemRecord]) -> dict[str, list[str]]:
    """The cassette-miss errors of a run's calls, by kind: the responses (each once), the judge
    calls and the resolution conversations' calls (their errors quote the miss)."""

    def misses(errors) -> list[str]:
        return [error[error.index(MISS) :] for error in errors if MISS in str(error)]

    return {
        "dialectic response": misses(r.get("error") or "" for r in responses),
        "judge call": misses(e for r in records if r["check"] == "judge" for e in r["judge"]["errors"]),
        "resolution call": misses(
            e
            for r in records
            if r["check"] == "resolution"
            for e in (*r["conversation"]["judge_errors"], *r["conversation"].get("reply_errors", ()))
        ),
    }


def cassette_miss_line(missed: dict[str, list[str]], record_command: Callable[[list[str]], str]) -> str | None:
    """The terminal's line on the calls `missed` (cassette_misses) and the command that records them, or None."""
    if not any(missed.values()):
        return None
    counts = [f"{len(errors)} {noun}{'s' if len(errors) > 1 else ''}" for noun, errors in missed.items() if errors]
    total = sum(map(len, missed.values()))
    return (
        f"CASSETTE MISSES: {' and '.join([', '.join(counts[:-1]), counts[-1]] if len(counts) > 1 else counts)} "
        f"{'has' if total == 1 else 'have'} no matching cassette (a case, a variant's or the judge's prompt or "
        f"an option changed since the recording, they were never recorded, or their cassette could not be read); "
        f"record them with: {record_command([e for errors in missed.values() for e in errors])}"
    )
