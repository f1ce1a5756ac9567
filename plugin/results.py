"""Writers of run output files: JSON and CSV, each via a temp file and a rename, so a crash
never leaves half a file behind. Only the controller process writes outputs."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path


def write_json(path: Path, data: dict) -> None:
    """Write via a temp file and rename, so a crash never leaves half a JSON file behind."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp, path)
