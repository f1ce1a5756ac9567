"""The output files of a ChaosBench run directory (SPEC 5.5), written by a run and by `merge`."""

from __future__ import annotations

from pathlib import Path

from pytest_reasoning_evals.completions import CompletionsLog
from pytest_reasoning_evals.results import write_csv, write_json


def write_run_outputs(run_dir: Path, records: list[dict], summary: dict, run_meta: dict, manifest: dict,
                      completions: CompletionsLog | None = None) -> None:
    """Every output file of a run (SPEC 5.5): the same writer for a run and for merged shards."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if completions is not None:
        completions.finalize()  # the run's own appended lines, sorted: the records' texts need not be in memory
    else:
        CompletionsLog(run_dir / "completions.jsonl").finalize(records)
    write_json(run_dir / "summary.json", summary)
    write_json(run_dir / "run_meta.json", run_meta)
    write_json(run_dir / "run_manifest.json", manifest)
    write_csv(run_dir / "accuracy_by_task.csv", *accuracy_table(summary["task_details"]))
    write_csv(run_dir / "metrics_overview.csv", *overview_table(summary))


def _cell(value):
    return "" if value is None else value


def accuracy_table(details: dict[str, dict]) -> tuple[list[str], list[list]]:
    header = ["task", "total", "evaluated", "correct", "unknown", "accuracy", "ci95_low", "ci95_high"]
    rows = []
    for name, d in details.items():
        ci = d["accuracy_ci95"] or [None, None]
        rows.append([name, d["total"], d["evaluated"], d["correct"], d["unknown"], _cell(d["accuracy"]), _cell(ci[0]), _cell(ci[1])])
    return header, rows


def overview_table(summary: dict) -> tuple[list[str], list[list]]:
    """Every scalar metric of the summary, one per row."""
    rows = [[key, _cell(value)] for key, value in summary.items() if not isinstance(value, (dict, list))]
    return ["metric", "value"], rows
