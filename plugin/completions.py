"""completions.jsonl, written and read in one place.

A run appends each item's record as it reaches the controller (flushed; fsynced at each
checkpoint), so a crash keeps every answered item; at the end the file is rewritten sorted by
id so reruns compare line by line. `--eval-resume` and `merge` read it back: the last record of
each id wins, and a line cut short by a kill is skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def answered(record: dict) -> bool:
    """The model answered (a wrong or UNKNOWN answer is an answer; a failed call is not)."""
    return all(part["error"] is None for part in record.get("turns") or [record])


def read_completions(path: Path) -> list[dict]:
    """Records of a completions file, the last one of each id winning; lines cut short by a
    kill mid-write are skipped."""
    if not path.exists():
        return []
    found: dict[str, dict] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "id" in record:
                found[record["id"]] = record
    return list(found.values())


class CompletionsLog:
    """The stream of one run directory's completions.jsonl."""

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
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for record in sorted(records, key=lambda r: r["id"]):
                handle.write(json.dumps(record, sort_keys=True) + "\n")
        os.replace(tmp, self.path)
