"""Case-file errors, in one place for every protocol: a bad file names file:line and what is
wrong, and collection stops before any model is asked anything."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

# Ids become cassette file names later: keep them filesystem-safe.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class CaseFileError(Exception):
    """A case file cannot be used; the message starts with file:line."""


def check_id(value: object, where: str, what: str = "id") -> str:
    """`value` as an id, or CaseFileError naming `where`."""
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise CaseFileError(f"{where}: {what} {value!r} is not filesystem-safe (letters, digits, _ . -)")
    return value


def numbered_lines(file: Path) -> Iterator[tuple[str, str]]:
    """(`file:line`, text) for every non-blank line of a JSONL file, for error messages."""
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield f"{file}:{number}", line
