"""Human spot-check (SPEC 6.7): a blinded review queue, and the import of the filled queue.

The queue holds a seeded, reproducible 20% sample of responses plus every response the judges
disagreed on, that broke PCC, got the mode wrong or had a judge error. Entries are blinded: an
opaque review id, the query and the response text, and the rubric fields to fill; which model
and variant wrote it is kept apart in spotcheck_key.json.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from pytest_reasoning_evals.casefiles import numbered_lines
from pytest_reasoning_evals.dialectic.judge import AGREEMENT_SPREAD, DIMENSIONS
from pytest_reasoning_evals.dialectic.records import PerResponseRecord, SpotcheckEntry, SpotcheckKey

SAMPLE_RATE = 0.20


def review_id(response: PerResponseRecord) -> str:
    key = f"{response['query_id']}\0{response['variant']}\0{response['model']}"
    return "r-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def flags(response: PerResponseRecord) -> list[str]:
    found = []
    judge = response.get("judge") or {}
    if judge.get("agreement") is False:
        found.append("judge_disagreement")
    if judge.get("errors"):
        found.append("judge_error")
    if response["metrics"]["pcc_valid"] is False:
        found.append("pcc_violation")
    if response["metrics"]["mode_correct"] is False:
        found.append("mode_mismatch")
    return found


def queue(
    responses: list[PerResponseRecord], seed: int, rate: float = SAMPLE_RATE
) -> tuple[list[SpotcheckEntry], dict[str, SpotcheckKey]]:
    """-> (blinded queue entries, review id -> who wrote it). Same responses and seed, same queue."""
    ordered = sorted(responses, key=review_id)
    rng = random.Random(f"spotcheck:{seed}")
    sampled = {review_id(r) for r in rng.sample(ordered, round(rate * len(ordered)))} if ordered else set()
    entries, key = [], {}
    for response in ordered:
        rid = review_id(response)
        why = flags(response) + (["sample"] if rid in sampled else [])
        if not why:
            continue
        entries.append(
            {
                "review_id": rid,
                "reasons": why,
                "query": response["query"],
                "response": response["text"],
                **{dim: None for dim in DIMENSIONS},
                "rationale": None,
            }
        )
        key[rid] = {
            "query_id": response["query_id"],
            "variant": response["variant"],
            "model": response["model"],
            # summary.responses() keeps the medians as judge_scores, not under "judge"
            "judge_medians": response.get("judge_scores"),
        }
    return entries, key


def import_reviews(filled: Path, key_file: Path) -> dict:
    """Agreement between the human scores in a filled queue and the judges' medians: per
    dimension the share within the agreement spread (<= 2 points) and the mean absolute gap."""
    key = json.loads(key_file.read_text(encoding="utf-8"))
    gaps: dict[str, list[float]] = {dim: [] for dim in DIMENSIONS}
    reviewed = no_judge = 0
    for where, line in numbered_lines(filled):
        entry = json.loads(line)
        if any(entry.get(dim) is None for dim in DIMENSIONS):
            continue  # not reviewed yet
        known = key.get(entry.get("review_id"))
        if known is None:
            raise ValueError(f"{where}: review id {entry.get('review_id')!r} is not in {key_file}")
        medians = known["judge_medians"]
        if medians is None:
            no_judge += 1  # every judge errored on this response: nothing to agree with
            continue
        reviewed += 1
        for dim in DIMENSIONS:
            gaps[dim].append(abs(float(entry[dim]) - medians[dim]))
    per_dimension = {
        dim: {
            "agreement": sum(g <= AGREEMENT_SPREAD for g in values) / len(values),
            "mean_abs_gap": sum(values) / len(values),
        }
        for dim, values in gaps.items()
        if values
    }
    overall = [g <= AGREEMENT_SPREAD for values in gaps.values() for g in values]
    return {
        "reviewed": reviewed,
        "reviewed_without_judge_scores": no_judge,
        "agreement": sum(overall) / len(overall) if overall else None,
        "per_dimension": per_dimension,
    }
