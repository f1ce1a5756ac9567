"""upstream_metrics.json (issue 28 item 7): a ChaosBench run over upstream's own v2 questions writes
upstream's metrics.json, equal to upstream's formulas computed here from the file and the replies."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict

import pytest
from fakeprovider import FakeProvider
from helpers import FAKE_KEY_VAR, REFERENCE, fake_run_args, read_summary, run_dir

UPSTREAM_V2 = REFERENCE / "chaosbench" / "upstream_v2_sample.jsonl"
ROWS = [json.loads(line) for line in UPSTREAM_V2.read_text(encoding="utf-8").splitlines()]
UNREADABLE = "It depends on the parameters."


def expected_metrics(replies: dict[str, str | None], splits: dict[str, str]) -> dict:
    """Upstream's compute_metrics (chaosbench/eval/run.py) written out again: `replies` maps an id
    to its parsed label (None: invalid); families are the file's `type`, splits the run's."""
    total = len(ROWS)
    valid = [r for r in ROWS if replies[r["id"]] is not None]
    correct = [r for r in valid if replies[r["id"]] == r["ground_truth"]]
    cells = defaultdict(int)
    for r in valid:
        cells[(r["ground_truth"], replies[r["id"]])] += 1
    tp, fn = cells[("TRUE", "TRUE")], cells[("TRUE", "FALSE")]
    tn, fp = cells[("FALSE", "FALSE")], cells[("FALSE", "TRUE")]
    accuracy = len(correct) / len(valid) if valid else 0.0
    tpr = tp / (tp + fn) if tp + fn else 0.0
    tnr = tn / (tn + fp) if tn + fp else 0.0
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))

    def groups(key) -> dict[str, list]:
        out = defaultdict(list)
        for r in ROWS:
            out[key(r)].append(r)
        return out

    def counts(rows: list) -> tuple[int, int, int]:
        ok = [r for r in rows if replies[r["id"]] is not None]
        return len(rows), len(ok), sum(replies[r["id"]] == r["ground_truth"] for r in ok)

    per_family = {}
    for name, rows in groups(lambda r: r["type"]).items():
        n, ok, right = counts(rows)
        per_family[name] = {
            "total": n,
            "valid": ok,
            "correct": right,
            "coverage": ok / n,
            "accuracy_valid": right / ok if ok else 0.0,
        }
    per_split = {}
    for name, rows in groups(lambda r: splits[r["id"]]).items():
        n, ok, right = counts(rows)
        per_split[name] = {"total": n, "valid": ok, "accuracy_valid": right / ok if ok else 0.0}
    return {
        "total": total,
        "valid": len(valid),
        "invalid": total - len(valid),
        "correct": len(correct),
        "coverage": round(len(valid) / total, 4),
        "invalid_rate": round((total - len(valid)) / total, 4),
        "accuracy_valid": round(accuracy, 4),
        "effective_accuracy": round(len(valid) / total * accuracy, 4),
        "balanced_accuracy": round((tpr + tnr) / 2, 4),
        "mcc": round((tp * tn - fp * fn) / denominator if denominator else 0.0, 4),
        "per_family": per_family,
        "per_split": per_split,
    }


def written(directory) -> tuple[dict, dict[str, str]]:
    """The run's upstream_metrics.json, and each question's split as the run recorded it."""
    records = [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]
    return json.loads((directory / "upstream_metrics.json").read_text()), {r["id"]: r["split"] for r in records}


def test_always_true_on_upstreams_sample_is_upstreams_metrics_json(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", f"--eval-cases={UPSTREAM_V2}")
    assert result.ret == 0, result.stdout.str()
    metrics, splits = written(run_dir(evals, "always-true"))
    assert metrics == expected_metrics({r["id"]: "TRUE" for r in ROWS}, splits)
    # the file's own promise (its README): always TRUE is exactly half
    assert (metrics["accuracy_valid"], metrics["balanced_accuracy"], metrics["mcc"]) == (0.5, 0.5, 0.0)
    assert metrics["per_split"].keys() == set(splits.values())
    assert {"adversarial_misleading", "indicator_diagnostic", "perturbation"} <= metrics["per_family"].keys()


def test_a_seeded_mix_with_unknowns_over_http_is_upstreams_metrics_json(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(28)
    # a tenth unreadable, the rest TRUE or FALSE at random; keyed by the question, so a reprompt
    # in the same conversation gets the same reply
    replies = {r["question"]: rng.choices(["TRUE", "FALSE", UNREADABLE], weights=[9, 9, 2])[0] for r in ROWS}
    labels = {r["id"]: None if replies[r["question"]] == UNREADABLE else replies[r["question"]] for r in ROWS}
    unknown = sum(label is None for label in labels.values())
    assert 0 < unknown < 40  # coverage above any default floor: the run itself passes

    def reply(body: dict) -> str:
        first = body["messages"][0]["content"]
        return next(text for question, text in replies.items() if question in first)

    with FakeProvider() as server:
        server.responder = reply
        monkeypatch.setenv(FAKE_KEY_VAR, "sk-test")
        result = evals.runpytest(*fake_run_args(evals, server.openai_base, UPSTREAM_V2))
    assert result.ret == 0, result.stdout.str()
    metrics, splits = written(run_dir(evals, "fake"))
    assert metrics == expected_metrics(labels, splits)
    assert metrics["invalid"] == unknown
    summary = read_summary(evals, "fake")
    right = sum(labels[r["id"]] == r["ground_truth"] for r in ROWS)
    assert summary["effective_accuracy"] == right / len(ROWS)
    assert summary["invalid_rate"] == unknown / len(ROWS)
    assert summary["per_class"]["TRUE"]["support"] + summary["per_class"]["FALSE"]["support"] == len(ROWS) - unknown
