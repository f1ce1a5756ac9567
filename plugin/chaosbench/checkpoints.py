"""checkpoints/ of a ChaosBench run directory: the configuration its answers belong to, and
progress.

`checkpoints/config.json` names what the answers depend on (model, prompt, data, selection,
shard); a run of another model under the same alias does not overwrite them (check_identity: a
run of another mode, prompt, option or data has a run directory of its own), and
`--eval-resume` under another configuration is refused, and so is a resume whose
config.json is missing or unreadable (cut short, not JSON): the answers cannot be matched to a
configuration, so the run stops with a one-line usage error before asking anything.
`progress.json` is rewritten every CHECKPOINT_EVERY records, at most once every
CHECKPOINT_SECONDS (with an fsync of completions.jsonl): a live run checkpoints every 50
answers, a replay, which answers hundreds a second and has nothing to lose, about once a second
instead of 800 times in 40,000 items. The budget marker lives here too (budget.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from pytest_reasoning_evals.registry import answering
from pytest_reasoning_evals.results import write_json

CHECKPOINT_EVERY = 50  # records between checkpoints (progress file + fsync of completions)
CHECKPOINT_SECONDS = 1.0  # and at least this long


class ResumeError(Exception):
    pass


def identity(config: dict) -> dict:
    """What a run directory's answers are of (a config.json's) beyond what its name says: the model
    behind the alias (provider, model id, not its URL: a local server may move). The mode, the
    prompt and options that shape a request, and the data are in the name (Settings.run_dir)."""
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    return {"model": "/".join(str(model.get(key)) for key in ("alias", "provider", "model_id"))}


def comparable(config: dict) -> dict:
    """A config.json as a resume matches it: the model's entry without what decides no answer (the
    config.json of a run before that rule keeps its prices and URL), and without the hash, which
    follows from the rest."""
    kept = {key: value for key, value in config.items() if key != "config_hash"}
    if isinstance(kept.get("model"), dict):
        kept["model"] = answering(kept["model"])
    return kept


class Checkpoints:
    def __init__(self, run_dir: Path, clock: Callable[[], float] = time.monotonic):
        self.folder = run_dir / "checkpoints"
        self.config_file = self.folder / "config.json"
        self.progress_file = self.folder / "progress.json"
        self._clock = clock
        self._since = 0  # records since the last checkpoint
        self._at = clock()  # when it was

    def write_config(self, config: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self.config_file, config)

    def check_config(self, config: dict) -> None:
        """Raise ResumeError unless the stored configuration is this one (a missing or unreadable
        config.json cannot be matched to any)."""
        try:
            stored = json.loads(self.config_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ResumeError(self._unmatched("is missing")) from None
        except json.JSONDecodeError as exc:  # cut short by a crash, say
            raise ResumeError(self._unmatched(f"is not valid JSON ({exc.msg} at line {exc.lineno})")) from None
        except (OSError, UnicodeDecodeError, RecursionError) as exc:
            raise ResumeError(self._unmatched(f"is unreadable ({type(exc).__name__})")) from None
        if not isinstance(stored, dict):
            raise ResumeError(self._unmatched("is not a JSON object"))
        stored, config = comparable(stored), comparable(config)
        if stored != config:
            differ = sorted(k for k in set(stored) | set(config) if stored.get(k) != config.get(k))
            raise ResumeError(
                f"--eval-resume: the answers in {self.folder.parent} were made with another "
                f"configuration (differs in: {', '.join(differ)}); run without --eval-resume "
                "or with another --eval-out-dir"
            )

    def check_identity(self, config: dict) -> None:
        """Raise ResumeError when the run directory holds answers of another model than `config`'s
        under the same alias (a rerun of the same one overwrites them, as a run of another
        selection or seed does: a subset run has a folder of its own). Nothing to compare (no
        config.json, or one that cannot be read) is no objection: a resume checks it strictly."""
        try:
            stored = json.loads(self.config_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return
        if not isinstance(stored, dict):
            return
        theirs, ours = identity(stored), identity(config)
        differ = [key for key in ours if theirs.get(key) != ours[key]]
        if differ:
            shown = "; ".join(f"{key}: {theirs.get(key)} there, {ours[key]} now" for key in differ)
            raise ResumeError(
                f"--eval-out-dir (ini eval_out_dir): {self.folder.parent} holds the run of another configuration "
                f"({shown}); this run would overwrite it. Move or delete that folder, or give another --eval-out-dir"
            )

    def _unmatched(self, what: str) -> str:
        return (
            f"--eval-resume: {self.config_file} {what}, so the answers in {self.folder.parent} cannot be "
            "matched to a configuration; run without --eval-resume (or with another --eval-out-dir)"
        )

    def record_added(self) -> bool:
        """One more record: whether a checkpoint is due now."""
        self._since += 1
        if self._since < CHECKPOINT_EVERY or self._clock() - self._at < CHECKPOINT_SECONDS:
            return False
        self._since, self._at = 0, self._clock()
        return True

    def write_progress(self, answered_count: int, not_asked: int, spent_usd: float) -> None:
        write_json(
            self.progress_file,
            {
                "answered": answered_count,
                "not_asked": not_asked,
                "spent_usd": spent_usd,
                "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            },
        )
