"""What a run keeps on disk while it runs, so that a crash loses no answered item: the stream of
completions, the configuration it answers for, progress checkpoints, and the budget marker.

`<run dir>/completions.jsonl` gets every record as it arrives (flushed; fsynced at each
checkpoint). `--resume` reads it back: a record with an answer is kept and its item is not asked
again; one whose call failed is asked again; a line cut short by a kill is ignored.
`checkpoints/config.json` names what the answers depend on (model, prompt, data, selection,
shard); resuming under another configuration is refused.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from plugin.results import write_json

CHECKPOINT_EVERY = 50  # records between checkpoints (progress file + fsync of completions)


class ResumeError(Exception):
    pass


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


class Checkpoints:
    def __init__(self, run_dir: Path):
        self.folder = run_dir / "checkpoints"
        self.config_file = self.folder / "config.json"
        self.progress_file = self.folder / "progress.json"
        self.budget_marker = self.folder / "budget-spent"

    def write_config(self, config: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self.config_file, config)

    def check_config(self, config: dict) -> None:
        """Raise ResumeError unless the stored configuration is this one."""
        try:
            stored = json.loads(self.config_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ResumeError(f"--resume: {self.config_file} is missing, so the answers in "
                              f"{self.folder.parent} cannot be matched to a configuration; "
                              "run without --resume (or with another --out-dir)") from None
        if stored != config:
            differ = sorted(k for k in set(stored) | set(config) if stored.get(k) != config.get(k))
            raise ResumeError(f"--resume: the answers in {self.folder.parent} were made with another "
                              f"configuration (differs in: {', '.join(differ)}); run without --resume "
                              "or with another --out-dir")

    def mark_budget_spent(self) -> None:
        """Tell every worker (they check before each call) that the --max-cost budget is spent."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.budget_marker.touch()

    def write_progress(self, answered_count: int, not_asked: int, spent_usd: float) -> None:
        write_json(self.progress_file, {
            "answered": answered_count,
            "not_asked": not_asked,
            "spent_usd": spent_usd,
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        })

