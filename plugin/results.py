"""Run output files: completions stream, summary/meta/manifest JSON, CSV tables.

Only the controller process writes here (workers send their records in test reports).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path


def write_json(path: Path, data: dict) -> None:
    """Write via a temp file and rename, so a crash never leaves half a JSON file behind."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp, path)


class CompletionsLog:
    """completions.jsonl: each record is appended and flushed as it arrives (a crash keeps every
    answered item); `finalize` rewrites the file sorted by id so reruns compare line by line."""

    def __init__(self, path: Path):
        self.path = path
        self._handle = None

    def start(self, kept: list[dict]) -> None:
        """Begin the file with `kept` (resumed records; none for a fresh run)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_sorted(kept)
        self._handle = self.path.open("a", encoding="utf-8")

    def append(self, record: dict) -> None:
        if self._handle is None:
            self.start([])
        self._handle.write(json.dumps(record, sort_keys=True) + "\n")
        self._handle.flush()

    def sync(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def finalize(self, records: list[dict]) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        self._write_sorted(records)

    def _write_sorted(self, records: list[dict]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for record in sorted(records, key=lambda r: r["id"]):
                handle.write(json.dumps(record, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


def write_run_outputs(run_dir: Path, records: list[dict], summary: dict, run_meta: dict, manifest: dict,
                      completions: CompletionsLog | None = None) -> None:
    """Every output file of a run (SPEC 5.5): the same writer for a run and for merged shards."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (completions or CompletionsLog(run_dir / "completions.jsonl")).finalize(records)
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
