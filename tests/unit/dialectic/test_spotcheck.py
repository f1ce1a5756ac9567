"""dialectic/spotcheck.py: the seeded blinded queue and the spotcheck-import command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_reasoning_evals.dialectic import judge, spotcheck

# --- spot-check ---


def spot_response(i: int, **flags) -> dict:
    """A per-response row as summary.responses() writes it: the medians are judge_scores."""
    return {
        "query_id": f"q{i}",
        "variant": "v",
        "model": "m",
        "query": "q",
        "text": "t",
        "metrics": {"pcc_valid": flags.get("pcc", True), "mode_correct": flags.get("mode", True)},
        "judge_scores": {d: 5.0 for d in judge.DIMENSIONS},
        "judge": {"agreement": True, "errors": []},
    }


def import_one_review(tmp_path, response: dict) -> subprocess.CompletedProcess:
    """Queue one response, review it with 5 on every dimension, run spotcheck-import."""
    entries, key = spotcheck.queue([response], seed=1)
    (tmp_path / "spotcheck_key.json").write_text(json.dumps(key))
    filled = tmp_path / "filled.jsonl"
    filled.write_text(json.dumps({**entries[0], **{d: 5 for d in judge.DIMENSIONS}}) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "spotcheck-import", str(filled), "--results", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_spotcheck_queue_is_a_seeded_blinded_sample_plus_every_flagged_response(tmp_path) -> None:
    responses = [spot_response(i) for i in range(20)] + [spot_response(20, pcc=False), spot_response(21, mode=False)]
    entries, key = spotcheck.queue(responses, seed=42)
    again, _ = spotcheck.queue(list(reversed(responses)), seed=42)
    assert entries == again, "reproducible, whatever the order"
    sampled = [e for e in entries if e["reasons"] == ["sample"]]
    assert len(sampled) == round(0.2 * 22) - sum(
        "sample" in e["reasons"] for e in entries if e["reasons"] != ["sample"]
    )
    flagged = {key[e["review_id"]]["query_id"] for e in entries if set(e["reasons"]) - {"sample"}}
    assert flagged == {"q20", "q21"}
    assert all(set(e) == {"review_id", "reasons", "query", "response", *judge.DIMENSIONS, "rationale"} for e in entries)
    assert spotcheck.queue(responses, seed=7)[0] != entries

    filled = tmp_path / "filled.jsonl"
    rows = []
    for i, entry in enumerate(entries):
        scores = {d: (6 if i % 2 else 9) for d in judge.DIMENSIONS}  # 1 or 4 points from the judges' 5
        rows.append(json.dumps({**entry, **scores}))
    filled.write_text("\n".join(rows) + "\n")
    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps(key))
    result = spotcheck.import_reviews(filled, key_file)
    within = sum(1 for i in range(len(entries)) if i % 2)
    assert result["reviewed"] == len(entries)
    assert result["agreement"] == pytest.approx(within / len(entries))


def test_spotcheck_import_command(tmp_path) -> None:
    result = import_one_review(tmp_path, spot_response(0, pcc=False))
    assert "1 reviewed, human-judge agreement 100%" in result.stdout
    assert json.loads((tmp_path / "spotcheck_agreement.json").read_text())["agreement"] == 1.0


def test_spotcheck_import_says_which_reviews_had_no_judge_score_to_compare(tmp_path) -> None:
    # a response whose judges all errored has null medians; a review of it was skipped silently
    result = import_one_review(tmp_path, {**spot_response(0, pcc=False), "judge_scores": None})
    assert "0 reviewed, human-judge agreement n/a" in result.stdout
    assert "1 reviewed response(s) left out: every judge reply for them was a judge error" in result.stdout
    assert json.loads((tmp_path / "spotcheck_agreement.json").read_text())["reviewed_without_judge_scores"] == 1
