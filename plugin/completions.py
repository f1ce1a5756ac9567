"""completions.jsonl, written and read in one place.

A run appends each item's record as it reaches the controller (one with a live call flushed at
once, replayed ones in batches; fsynced at each checkpoint), so a crash keeps every answered item
that was paid for; at the end the file is rewritten sorted by id so reruns compare line by line. `--eval-resume` and `merge` read it back: the last record of
each id wins, and a line that cannot be used -- cut short by a kill, not UTF-8, not JSON, or not
a record of the shape a run writes -- is skipped and counted (`CompletionsFile.problem` says how
many, and where the first is), so its item is asked again instead of crashing the run.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from pytest_reasoning_evals.results import replacing, strict_json

LABELS = (None, "TRUE", "FALSE")
STATUSES = ("correct", "wrong", "unknown", "no_gold")
POLARITIES = ("positive", "negative")
REPLAYED_BATCH = 64  # replayed records written per flush (CompletionsLog.append)


def replayed(record: dict) -> bool:
    """Every model call of the record was answered by a cassette (or none was made)."""
    return all(part.get("cassette_hit") is True or not part.get("provider") for part in record.get("turns") or [record])


def answered(record: dict) -> bool:
    """The model answered (a wrong or UNKNOWN answer is an answer; a failed call is not)."""
    return all(part["error"] is None for part in record.get("turns") or [record])


# --- the shape of a record, as scoring.score() and dialogues.dialogue_record() write it ---

# The types a field's value may have, exactly: records are read from JSON, which makes no
# subclasses, and a table of exact types checks a 40,000-line file several times faster than a
# check function per field.
_TEXT = frozenset({str})
_OPTIONAL_TEXT = frozenset({str, type(None)})
_COUNT = frozenset({int})
_NUMBER = frozenset({int, float})
_OPTIONAL_FLAG = frozenset({bool, type(None)})
_LABEL = frozenset({str, type(None)})  # and one of LABELS (_question_ok)

_CALL_FIELDS = (  # what the summary, the report and the budget read of every model call
    ("id", _TEXT),
    ("family", _TEXT),
    ("split", _TEXT),
    ("system_id", _TEXT),
    ("status", _TEXT),
    ("correct", _OPTIONAL_FLAG),
    ("error", _OPTIONAL_TEXT),
    ("provider", _OPTIONAL_TEXT),
    ("model", _OPTIONAL_TEXT),
    ("input_tokens", _COUNT),
    ("output_tokens", _COUNT),
    ("thinking_tokens", _COUNT),
    ("latency_ms", _NUMBER),
    ("cost_usd", _NUMBER),
    ("cassette", _OPTIONAL_TEXT),
    ("cassette_hit", _OPTIONAL_FLAG),
)
_QUESTION_FIELDS = (
    *_CALL_FIELDS,
    ("label", _LABEL),
    ("gold", _LABEL),
    ("raw_text", _TEXT),
    ("bias", _OPTIONAL_TEXT),
    ("template", _TEXT),
    ("finish_reason", _OPTIONAL_TEXT),
    ("predicates", frozenset({list})),
)
_TURN_FIELDS = (*_QUESTION_FIELDS, ("turn", _COUNT))
_DIALOGUE_FIELDS = (*_CALL_FIELDS, ("num_turns", _COUNT), ("num_correct_turns", _COUNT))
# A reprompted answer's fields (scoring.score): checked when present, so the records of runs
# before --eval-reprompt stay usable.
_REPROMPT_FIELDS = (
    ("reprompts", _COUNT),
    ("reprompt_replies", frozenset({list})),
    ("label_from", frozenset({int, type(None)})),
)

# What the prompt cache and a batch saved (providers.base.saving_fields): present only when not zero, so
# checked when present, as the reprompt fields; the summary sums them.
_SAVING_FIELDS = (
    ("cached_tokens", _COUNT),
    ("cache_write_tokens", _COUNT),
    ("cache_saved_usd", _NUMBER),
    ("batch", frozenset({bool})),
    ("batch_saved_usd", _NUMBER),
)


def _typed(record: dict, fields: tuple) -> bool:
    """Every field is there, with a value of one of its types."""
    try:
        for key, types in fields:
            if type(record[key]) not in types:
                return False
    except KeyError:
        return False
    return True


def _call_ok(record: dict, fields: tuple) -> bool:
    return _typed(record, fields) and bool(record["id"]) and record["status"] in STATUSES


def _question_ok(record: dict, fields: tuple) -> bool:
    return (
        _call_ok(record, fields)
        and record["label"] in LABELS
        and record["gold"] in LABELS
        and all(
            type(p) is dict and type(p.get("name")) is str and p.get("polarity") in POLARITIES
            for p in record["predicates"]
        )
        and _optional_fields_ok(record)
    )


def _optional_fields_ok(record: dict) -> bool:
    """The reprompt and saving fields a record has are of their type, and label_from names one of its replies."""
    for key, types in (*_REPROMPT_FIELDS, *_SAVING_FIELDS):
        if key in record and type(record[key]) not in types:
            return False
    if not all(type(t) is str for t in record.get("reprompt_replies", ())):
        return False
    n = record.get("label_from")
    return n is None or 0 <= n <= len(record.get("reprompt_replies", ()))


def usable(record: object) -> bool:
    """A record of the shape a run writes (a question, or a dialogue with its turns); anything
    else would crash the summary, so a resumed run or a merge does not take it."""
    if type(record) is not dict:
        return False
    kind = record.get("kind", "question")
    if kind == "question":
        return _question_ok(record, _QUESTION_FIELDS)
    if kind == "dialogue":
        turns = record.get("turns")
        return (
            _call_ok(record, _DIALOGUE_FIELDS)
            and type(turns) is list
            and bool(turns)
            and all(type(t) is dict and _question_ok(t, _TURN_FIELDS) for t in turns)
        )
    return False


# --- reading ---


class CompletionsFile(NamedTuple):
    records: list[dict]  # the usable records, the last one of each id winning
    unreadable: int  # lines skipped: cut short, not UTF-8, not JSON, not a record of a run
    first_unreadable: int | None  # the line number of the first of them

    def problem(self, path: Path, consequence: str = "their items are asked again") -> str | None:
        """One line saying what was skipped, or None."""
        if not self.unreadable:
            return None
        lines = "line" if self.unreadable == 1 else "lines"
        return (
            f"{path}: {self.unreadable} unreadable {lines} skipped (first at line {self.first_unreadable}); "
            f"{consequence}"
        )


def _parsed(lines: Iterable[bytes]) -> Iterator[tuple[int, dict | None]]:
    """(line number, the usable record or None) for each non-blank line of a completions file."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            yield number, None
            continue
        yield number, record if usable(record) else None


class CompletionsUnreadable(OSError):
    """A completions file that is there but cannot be read at all (a directory, no permission): one line naming it."""


def load_completions(path: Path) -> CompletionsFile:
    """The records of a completions file, and what could not be read (nothing: no file); a path
    that cannot be read at all raises CompletionsUnreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return CompletionsFile([], 0, None)
    except OSError as exc:
        raise CompletionsUnreadable(f"{path}: cannot be read ({exc.strerror or exc})") from None
    found: dict[str, dict] = {}
    bad: list[int] = []
    for number, record in _parsed(data.split(b"\n")):
        if record is None:
            bad.append(number)
        else:
            found[record["id"]] = record
    return CompletionsFile(list(found.values()), len(bad), bad[0] if bad else None)


def iter_completions(path: Path, unreadable: list[int] | None = None) -> Iterator[dict]:
    """The usable records of a completions file, one at a time in file order (a finished run's
    file is sorted by id, one line per item), for readers that must not hold them all; the number
    of each line that cannot be used is appended to `unreadable`, when given."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for number, record in _parsed(handle):
            if record is not None:
                yield record
            elif unreadable is not None:
                unreadable.append(number)


def read_completions(path: Path) -> list[dict]:
    """Records of a completions file, the last one of each id winning; lines that cannot be used
    (cut short by a kill mid-write, say) are skipped."""
    return load_completions(path).records


# --- writing ---


class CompletionsLog:
    """The stream of one run directory's completions.jsonl: each record appended as it arrives
    (see `append` for when it reaches the OS); at the end the file is rewritten sorted by id from
    its own lines, so the controller need not keep the records' texts in memory."""

    def __init__(self, path: Path):
        self.path = path
        self._handle = None
        # Where each line written is: its id, offset and length (arrays of machine ints: a
        # 40,000-item run would otherwise hold 40,000 tuples of Python ints to the end).
        self._ids: list[str] = []
        self._offsets = array("q")
        self._lengths = array("q")
        self._end = 0  # the offset the next line is written at
        self._unflushed = 0  # records written since the last flush

    def start(self, kept: list[dict]) -> None:
        """Begin the file with `kept` (resumed records; none for a fresh run)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._ids, self._offsets, self._lengths = [], array("q"), array("q")
        self._end = 0
        with replacing(self.path, binary=True) as handle:  # a temp file of this writer's own, then a rename
            for record in sorted(kept, key=lambda r: r["id"]):
                self._write(handle, record)
        self._handle = self.path.open("ab")

    def append(self, record: dict) -> None:
        """Write the record; it reaches the OS at once (a kill keeps it) when one of its calls
        was made live. A record answered wholly from cassettes costs nothing to answer again,
        so those go in batches of REPLAYED_BATCH: a replay makes one write per batch."""
        if self._handle is None:
            self.start([])
        self._write(self._handle, record)
        self._unflushed += 1
        if self._unflushed >= REPLAYED_BATCH or not replayed(record):
            self._handle.flush()
            self._unflushed = 0

    def _write(self, handle, record: dict) -> None:
        line = _line(record)
        self._ids.append(record["id"])
        self._offsets.append(self._end)
        self._lengths.append(len(line))
        handle.write(line)
        self._end += len(line)

    def sync(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def finalize(self, records: list[dict] | None = None) -> None:
        """Rewrite the file sorted by id: from `records` (a merge), or from the lines this log
        wrote (a run)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if records is not None:
            with replacing(self.path, binary=True) as handle:
                for record in sorted(records, key=lambda r: r["id"]):
                    handle.write(_line(record))
            return
        if not self.path.exists():  # nothing was written: an empty file
            with replacing(self.path, binary=True):
                pass
            return
        with self.path.open("rb") as source, replacing(self.path, binary=True) as handle:
            for index in sorted(range(len(self._ids)), key=self._ids.__getitem__):
                source.seek(self._offsets[index])
                handle.write(source.read(self._lengths[index]))


def _line(record: dict) -> bytes:
    # a NaN cost is null: every JSON reader reads the line
    return (strict_json(record, sort_keys=True) + "\n").encode("utf-8")
