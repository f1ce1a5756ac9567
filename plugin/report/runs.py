"""A run directory -> what report.html shows: plain values only, read from the run's own files
(summary.json, run_meta.json, run_manifest.json, completions.jsonl, gates.json, comparison.json for
ChaosBench; variant_summary.json, per_response.jsonl, multiturn_summary.json,
cross_provider_summary.json, run_meta.json, gates.json, comparison.json for the dialectic)."""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import typing
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from pytest_reasoning_evals.gates import read_gates
from pytest_reasoning_evals.report import ReportError

DIMENSIONS = ("h_quality", "oscillation_depth", "crux_precision", "epistemic_calibration", "actionability")
DEFAULT_ALPHA = 0.05  # the regression test's level when the page itself compares with --baseline


def _json(path: Path, required: bool = True):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise ReportError(f"{path.parent}: no {path.name}; is this a run directory?") from None
        return None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot be read ({exc})") from None


def _json_lines(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReportError(f"{path.parent}: no {path.name}; is this a run directory?") from None
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a kill: the run's own readers skip it too
    return out


def read_run(run_dir: Path, baseline: Path | None, cleanup: contextlib.ExitStack) -> dict:
    """The run's view; what it holds open (a ChaosBench run's spooled rows) is closed with `cleanup`."""
    if (run_dir / "summary.json").exists():
        return chaosbench_run(run_dir, baseline, cleanup)
    if (run_dir / "variant_summary.json").exists():
        return dialectic_run(run_dir, baseline)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such run directory")
    raise ReportError(f"{run_dir}: neither summary.json (a ChaosBench run) nor variant_summary.json (a dialectic run)")


# --- ChaosBench ---------------------------------------------------------------------------------


def _shown_status(record: dict) -> str:
    """The table's status: a failed call is an error, not an UNKNOWN answer."""
    return "error" if record.get("error") and record["status"] == "unknown" else record["status"]


def _item_row(record: dict) -> dict:
    row = {
        "id": record["id"],
        "kind": record.get("kind", "question"),
        "family": record["family"],
        "split": record["split"],
        "system": record.get("system_id"),
        "status": _shown_status(record),
        "gold": record.get("gold"),
        "label": record.get("label"),
        "latency_ms": record.get("latency_ms"),
        "cost_usd": record.get("cost_usd"),
        "error": record.get("error"),
    }
    if "turns" in record:
        row["gold"] = f"{sum(t['correct'] is True for t in record['turns'])}/{len(record['turns'])} turns"
        row["turns"] = [
            {
                "turn": t.get("turn"),
                "question": t.get("question"),
                "gold": t.get("gold"),
                "label": t.get("label"),
                "status": _shown_status(t),
                "raw": t.get("raw_text"),
                "error": t.get("error"),
            }
            for t in record["turns"]
        ]
    else:
        row.update(question=record.get("question"), raw=record.get("raw_text"), template=record.get("template"))
    return row


def _outcomes(records: list[dict], families: list[str]) -> dict[str, dict[str, int]]:
    counts = {name: Counter() for name in families}
    for record in records:
        if record.get("kind") == "dialogue":
            continue  # a family's bar counts its questions, as its accuracy does; dialogues have their section
        counts.setdefault(record["family"], Counter())[_shown_status(record)] += 1
    return {name: dict(c) for name, c in counts.items()}


def _bias_rows(records: list[dict]) -> list[dict]:
    """Per misconception (`bias`) the questions answered and how often the answer was wrong."""
    rows: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        if record.get("bias") and record["status"] in ("correct", "wrong"):
            rows[record["bias"]]["n"] += 1
            rows[record["bias"]]["wrong"] += record["status"] == "wrong"
    return [
        {"bias": name, "n": c["n"], "wrong": c["wrong"], "rate": c["wrong"] / c["n"]}
        for name, c in sorted(rows.items())
    ]


# what the charts and a comparison read
ESSENTIAL = (
    "id",
    "kind",
    "family",
    "split",
    "status",
    "correct",
    "error",
    "bias",
)


def row_json(row: dict) -> str:
    """An item row as the page carries it: compact JSON text (page.py makes it safe in <script>)."""
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def read_records(path: Path, rows: typing.IO[str]) -> list[dict]:
    """One pass over completions.jsonl: each record reduced to what the charts and a comparison
    read, the last line of an id winning (as the run's own readers have it), and the page's item
    rows (every line, in file order: the file is sorted by id) spooled to `rows` (a temporary
    file) as JSON lines. Small in memory for a 40,000-item run too."""
    from pytest_reasoning_evals.completions import iter_completions

    latest: dict[str, dict] = {}
    for record in iter_completions(path):
        latest[record["id"]] = {k: record.get(k) for k in ESSENTIAL}
        rows.write(row_json(_item_row(record)) + "\n")
    return list(latest.values())


def _spooled(rows: typing.IO[str]) -> Iterator[str]:
    rows.seek(0)
    for line in rows:
        yield line[:-1]


def chaosbench_run(run_dir: Path, baseline: Path | None, cleanup: contextlib.ExitStack) -> dict:
    from pytest_reasoning_evals.chaosbench.compare import BaselineError, compare, load_baseline

    summary = _json(run_dir / "summary.json")
    meta = _json(run_dir / "run_meta.json", required=False) or {}
    manifest = _json(run_dir / "run_manifest.json", required=False) or {}
    rows = cleanup.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n"))
    essentials = read_records(run_dir / "completions.jsonl", rows)
    records = sorted(essentials, key=lambda r: r["id"])
    if baseline is not None:
        try:
            comparison = compare(load_baseline(baseline), records, alpha=DEFAULT_ALPHA, max_drop=None)
        except BaselineError as exc:
            raise ReportError(str(exc)) from None
    else:
        comparison = _json(run_dir / "comparison.json", required=False)
    families = [name for name, d in summary["task_details"].items() if d["total"]]
    prompt = manifest.get("prompt") or {}
    dataset = manifest.get("dataset_config") or {}
    execution = manifest.get("execution") or {}
    return {
        "kind": "chaosbench",
        "title": f"{summary['model']} ({summary['mode']})",
        "run_dir": str(run_dir),
        "header": {
            "model": summary["model"],
            "mode": summary["mode"],
            "model_id": (manifest.get("model_config") or {}).get("model_id"),
            "prompt_sha256": prompt.get("sha256"),
            "prompt_path": prompt.get("path"),
            "dataset_version": meta.get("dataset_version") or dataset.get("version"),
            "dataset_path": dataset.get("path"),
            "questions": summary["total_questions"],
            "dialogues": summary["dialogue_details"]["total_dialogues"],
            "started": meta.get("timestamp"),
            "ended": execution.get("end_time"),
            "seconds": meta.get("execution_time_seconds"),
            "workers": meta.get("num_workers"),
            "complete": summary.get("complete", True),
            "incomplete_reason": summary.get("incomplete_reason"),
            "calls": meta.get("calls"),
            "cost_usd": summary["cost_usd"],
            "tokens": summary["tokens"],
            "resumed": meta.get("resumed_items", 0),
            "merged": bool(execution.get("merged")),
        },
        "gates": read_gates(run_dir),
        "summary": summary,
        "families": [(name, summary["task_details"][name]) for name in families],
        "splits": [(name, d) for name, d in summary["split_details"].items() if d["total"]],
        "outcomes": _outcomes(records, families),
        "bias_rows": _bias_rows(records),
        "comparison": comparison,
        "prompt_template": prompt.get("text"),
        "rows": lambda: _spooled(rows),  # JSON text per row
    }


# --- dialectic ----------------------------------------------------------------------------------


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _dimension_medians(responses: list[dict], variants: list[str]) -> dict[str, dict[str, float | None]]:
    """Per variant and judge dimension: the median over its responses of the judges' median."""
    out = {}
    for variant in variants:
        scored = [r["judge_scores"] for r in responses if r["variant"] == variant and r.get("judge_scores")]
        out[variant] = {d: _median([s[d] for s in scored if s.get(d) is not None]) for d in DIMENSIONS}
    return out


def _response_row(r: dict) -> dict:
    return {
        "id": f"{r['query_id']}@{r['variant']}",
        "case": r["query_id"],
        "variant": r["variant"],
        "model": r["model"],
        "category": r.get("category"),
        "expected_mode": r.get("expected_mode"),
        "mode": r.get("mode"),
        "status": "error"
        if r.get("error")
        else ("hard fail" if r["hard_fail"] else "passed" if all((r.get("checks") or {}).values()) else "failed"),
        "score": r.get("score"),
        "confidence": r["metrics"].get("confidence"),
        "pcc_ceiling": r.get("pcc_ceiling"),
        "checks": r.get("checks"),
        "judge_scores": r.get("judge_scores"),
        "judge": r.get("judge"),
        "latency_ms": r.get("latency_ms"),
        "cost_usd": r.get("cost"),
        "error": r.get("error"),
        "query": r.get("query"),
        "raw": r.get("text"),
        "cruxes": r.get("cruxes"),
    }


def dialectic_run(run_dir: Path, baseline: Path | None) -> dict:
    from pytest_reasoning_evals.dialectic.baseline import BaselineError, compare, load_responses

    variant_file = _json(run_dir / "variant_summary.json")
    responses = _json_lines(run_dir / "per_response.jsonl")
    multiturn = _json(run_dir / "multiturn_summary.json", required=False) or {"conversations": 0}
    cross = _json(run_dir / "cross_provider_summary.json", required=False) or {"queries": 0}
    meta = _json(run_dir / "run_meta.json", required=False) or {}
    if baseline is not None:
        try:
            comparison = compare(load_responses(baseline), responses, alpha=DEFAULT_ALPHA)
        except BaselineError as exc:
            raise ReportError(str(exc)) from None
    else:
        comparison = _json(run_dir / "comparison.json", required=False)
    variants = variant_file["variants"]
    names = [v["variant"] for v in variants]
    turns = Counter(
        "unresolved" if c["turns_to_resolution"] is None else str(c["turns_to_resolution"])
        for c in multiturn.get("conversations_detail", [])
    )
    model = meta.get("model") or (variants[0]["model"] if variants else run_dir.name)
    return {
        "kind": "dialectic",
        "title": f"{model} (dialectic)",
        "run_dir": str(run_dir),
        "header": {
            "model": model,
            "judges": meta.get("judges"),
            "variants": meta.get("variants") or [{"name": n, "prompt_sha256": None} for n in names],
            "cases": meta.get("cases"),
            "started": meta.get("timestamp"),
            "seconds": meta.get("execution_time_seconds"),
            "complete": meta.get("complete", True),
            "incomplete_reason": meta.get("incomplete_reason"),
            "cost_usd": sum(v["cost_usd"] for v in variants) + (multiturn.get("total_cost_usd") or 0.0),
        },
        "gates": read_gates(run_dir),
        "pass_rule": variant_file.get("pass_rule"),
        "variants": variants,
        "dimensions": DIMENSIONS,
        "dimension_medians": _dimension_medians(responses, names),
        "multiturn": {k: v for k, v in multiturn.items() if k != "conversations_detail"},
        "turns_histogram": sorted(
            turns.items(), key=lambda kv: (kv[0] == "unresolved", int(kv[0]) if kv[0].isdigit() else 0)
        ),
        "cross_provider": cross,
        "comparison": comparison,
        "rows": lambda: (row_json(_response_row(r)) for r in responses),  # JSON text per row
    }
