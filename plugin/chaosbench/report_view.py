"""A ChaosBench run directory -> what report.html shows (summary.json, run_meta.json,
run_manifest.json, completions.jsonl, gates.json, comparison.json), and its charts."""

from __future__ import annotations

import contextlib
import tempfile
import typing
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from pytest_reasoning_evals.chaosbench.names import run_title
from pytest_reasoning_evals.chaosbench.outputs import run_files_problem
from pytest_reasoning_evals.chaosbench.regression import BaselineError, compare, load_baseline
from pytest_reasoning_evals.chaosbench.rows import QuestionRow, Row, compact
from pytest_reasoning_evals.errors import ReportError
from pytest_reasoning_evals.gates import read_gates
from pytest_reasoning_evals.report.runs import DEFAULT_ALPHA, read_json, row_json

TEMPLATE = "pytest_reasoning_evals.chaosbench:report.html.j2"  # extends the generic page.html.j2
TABLE_SCRIPT = "pytest_reasoning_evals.chaosbench:report.js"  # what a row of the item table shows


def _shown_status(status: str, error: str | None) -> str:
    """The table's status: a failed call is an error, not an UNKNOWN answer."""
    return "error" if error and status == "unknown" else status


def _item_row(record: dict) -> dict:
    row = {
        "id": record["id"],
        "kind": record.get("kind", "question"),
        "family": record["family"],
        "split": record["split"],
        "system": record.get("system_id"),
        "status": _shown_status(record["status"], record.get("error")),
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
                "status": _shown_status(t["status"], t.get("error")),
                "raw": t.get("raw_text"),
                "error": t.get("error"),
            }
            for t in record["turns"]
        ]
    else:
        row.update(question=record.get("question"), raw=record.get("raw_text"), template=record.get("template"))
        if record.get("reprompt_replies"):  # only a reprompted row carries them: 40,000 rows are one page
            row.update(reprompts=record["reprompt_replies"], label_from=record.get("label_from"))
    return row


def _outcomes(questions: list[QuestionRow], families: list[str]) -> dict[str, dict[str, int]]:
    """A family's bar counts its questions, as its accuracy does; dialogues have their section."""
    counts = {name: Counter() for name in families}
    for row in questions:
        counts.setdefault(row.family, Counter())[_shown_status(row.status, row.error)] += 1
    return {name: dict(c) for name, c in counts.items()}


def _bias_rows(questions: list[QuestionRow]) -> list[dict]:
    """Per misconception (`bias`) the questions answered and how often the answer was wrong."""
    rows: dict[str, Counter] = defaultdict(Counter)
    for row in questions:
        if row.bias and row.status in ("correct", "wrong"):
            rows[row.bias]["n"] += 1
            rows[row.bias]["wrong"] += row.status == "wrong"
    return [
        {"bias": name, "n": c["n"], "wrong": c["wrong"], "rate": c["wrong"] / c["n"]}
        for name, c in sorted(rows.items())
    ]


def read_records(path: Path, rows: typing.IO[str]) -> tuple[list[Row], str | None]:
    """One pass over completions.jsonl: each record reduced to its summary row (what the charts
    and a comparison read), the last line of an id winning (as the run's own readers have it), and
    the page's item rows (every line, in file order: the file is sorted by id) spooled to `rows` (a
    temporary file) as JSON lines. Small in memory for a 40,000-item run too. -> (the summary rows,
    why item rows are missing from the page, or None)."""
    from pytest_reasoning_evals.completions import iter_completions

    latest: dict[str, Row] = {}
    unreadable: list[int] = []
    for record in iter_completions(path, unreadable):
        latest[record["id"]] = compact(record)
        rows.write(row_json(_item_row(record)) + "\n")
    if not path.exists():
        return list(latest.values()), f"{path} is missing: the page has no item rows"
    if unreadable:
        lines = "line" if len(unreadable) == 1 else "lines"
        return list(latest.values()), (
            f"{path}: {len(unreadable)} unreadable {lines} (first at line {unreadable[0]}): "
            "the page has no item rows of them"
        )
    return list(latest.values()), None


def _spooled(rows: typing.IO[str]) -> Iterator[str]:
    rows.seek(0)
    for line in rows:
        yield line[:-1]


def read_run(run_dir: Path, baseline: Path | None, cleanup: contextlib.ExitStack) -> dict | None:
    """The view of a ChaosBench run directory (the one with a summary.json), else None."""
    if not (run_dir / "summary.json").exists():
        return None
    problem = run_files_problem(run_dir) if (run_dir / "summary.json").is_file() else None
    if problem:
        raise ReportError(problem)

    summary = read_json(run_dir / "summary.json")
    meta = read_json(run_dir / "run_meta.json", required=False) or {}
    manifest = read_json(run_dir / "run_manifest.json", required=False) or {}
    rows = cleanup.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n"))
    found, items_note = read_records(run_dir / "completions.jsonl", rows)
    summarized = sorted(found, key=lambda r: r.id)
    questions = [r for r in summarized if r.kind == "question"]
    if baseline is not None:
        try:
            comparison = compare(load_baseline(baseline), summarized, alpha=DEFAULT_ALPHA, max_drop=None)
        except BaselineError as exc:
            raise ReportError(str(exc)) from None
    else:
        comparison = read_json(run_dir / "comparison.json", required=False)
    families = [name for name, d in summary["task_details"].items() if d["total"]]
    dataset = manifest.get("dataset_config") or {}
    return {
        "kind": "chaosbench",
        "template": TEMPLATE,
        "charts": draw_charts,
        "table_script": TABLE_SCRIPT,
        "title": run_title(summary["model"], summary["mode"], families, Path(dataset.get("path") or "").name),
        "run_dir": str(run_dir),
        "header": _header(summary, meta, manifest),
        "gates": read_gates(run_dir),
        "summary": summary,
        "families": [(name, summary["task_details"][name]) for name in families],
        "splits": [(name, d) for name, d in summary["split_details"].items() if d["total"]],
        "outcomes": _outcomes(questions, families),
        "bias_rows": _bias_rows(questions),
        "has_bias": any(r.bias for r in questions),  # a team's quiz without misconceptions has no bias card
        "comparison": comparison,
        "prompt_template": (manifest.get("prompt") or {}).get("text"),
        "rows": lambda: _spooled(rows),  # JSON text per row
        "items_note": items_note,  # the page and the command say when item rows are missing
    }


def _header(summary: dict, meta: dict, manifest: dict) -> dict:
    """The page's header: what ran, on what, when, and what it cost."""
    prompt, dataset = manifest.get("prompt") or {}, manifest.get("dataset_config") or {}
    execution = manifest.get("execution") or {}
    return {
        "model": summary["model"],
        "mode": summary["mode"],
        "model_id": (manifest.get("model_config") or {}).get("model_id"),
        "prompt_sha256": prompt.get("sha256"),
        "prompt_path": prompt.get("path"),
        "profile": prompt.get("profile") or "harness",  # runs before --eval-profile ran the harness's
        "dataset_version": meta.get("dataset_version") or dataset.get("version"),
        "dataset_path": dataset.get("path"),
        "dataset_name": Path(dataset.get("path") or "").name,
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
    }


def draw_charts(view: dict) -> dict[str, str]:
    from pytest_reasoning_evals.report import charts

    row = lambda name, d: (name, d["accuracy"], d["accuracy_ci95"], d["total"])  # noqa: E731
    out = {
        "families": charts.accuracy_bars("family-accuracy", [row(n, d) for n, d in view["families"]]),
        "splits": charts.accuracy_bars("split-accuracy", [row(n, d) for n, d in view["splits"]]),
    }
    names = [name for name, _ in view["families"]]
    series = [
        ("correct", charts.GOOD, "correct"),
        ("wrong", charts.BAD, "wrong"),
        ("UNKNOWN", charts.UNSURE, "unknown"),
        ("call failed", charts.ERROR, "error"),
        ("no gold", charts.MUTED, "no_gold"),
    ]
    used = [(label, colour, [view["outcomes"].get(n, {}).get(key, 0) for n in names]) for label, colour, key in series]
    out["outcomes"] = charts.stacked_counts("family-outcomes", names, [s for s in used if any(s[2])])
    dd = view["summary"]["dialogue_details"]
    if dd["total_dialogues"]:
        breakdown = dd["violation_breakdown"]
        out["violations"] = charts.count_bars(
            "fol-violations",
            [f"{k} violations" for k in breakdown],
            list(breakdown.values()),
            "dialogues",
            colour=charts.ERROR,
        )
    comparison = view["comparison"]
    if comparison and comparison.get("n_paired"):
        rows = [
            (name, d["accuracy_delta"], d.get("accuracy_delta_ci95"), d["n_paired"])
            for name, d in comparison["family_deltas"].items()
        ]
        rows.append(
            ("overall", comparison["accuracy_delta"], comparison.get("accuracy_delta_ci95"), comparison["n_paired"])
        )
        out["deltas"] = charts.delta_bars("family-deltas", rows)
    return out
