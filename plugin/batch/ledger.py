"""batch.json: every batch a run created, recorded the moment the provider accepted it.

A run started again reads it to find its batches (`pending`) and so never sends one custom_id
twice; a batch whose results are safely kept elsewhere (its cassettes) is `forget`-ten. Written
like every output: a temp file beside it, then os.replace, so a kill leaves the last whole file.
It holds ids and times only, never a key.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pytest_reasoning_evals.batch.base import BatchError, BatchHandle
from pytest_reasoning_evals.results import write_json

LEDGER_FILE = "batch.json"
VERSION = 1


class BatchLedger:
    def __init__(self, folder: Path):
        self.path = Path(folder) / LEDGER_FILE
        self._lock = threading.Lock()  # record and forget read, change and write the whole file

    def __repr__(self) -> str:
        return f"BatchLedger({str(self.path)!r})"

    def pending(self) -> list[BatchHandle]:
        """The batches recorded and not forgotten, oldest first. A file that cannot be read raises
        BatchError: guessing there is none could pay for every request twice."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise BatchError(f"cannot read {self.path}: {exc.strerror}") from None
        try:
            data = json.loads(text)
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, not {VERSION}")
            return [BatchHandle.from_json(row) for row in data["batches"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BatchError(
                f"{self.path} is not a batch ledger ({type(exc).__name__}: {exc}): move it aside"
            ) from None

    def record(self, handle: BatchHandle) -> None:
        with self._lock:
            kept = [h for h in self.pending() if (h.provider, h.batch_id) != (handle.provider, handle.batch_id)]
            self._write([*kept, handle])

    def forget(self, handle: BatchHandle) -> None:
        with self._lock:
            self._write([h for h in self.pending() if (h.provider, h.batch_id) != (handle.provider, handle.batch_id)])

    def _write(self, handles: list[BatchHandle]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, {"version": VERSION, "batches": [h.to_json() for h in handles]})
