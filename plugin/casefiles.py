"""Case-file errors, in one place for every protocol: a bad file names file:line and what is
wrong (a file with nothing in it names the file), and collection stops before any model is asked
anything. Bytes that are not UTF-8, JSON nested too deeply to parse and ids that would not make
safe file names are such errors too, found once when the cases are loaded."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

# Ids become cassette and result file names later: keep them filesystem-safe (no `/`, no `..`,
# no leading dot or dash, and short enough for a file name with the suffixes added to it).
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
MAX_ID_LENGTH = 128


class CaseFileError(ValueError):
    """A case file cannot be used; the message starts with file:line. (A ValueError, so callers
    that report bad input files in one line -- spotcheck-import -- report these too.)"""


def check_id(value: object, where: str, what: str = "id") -> str:
    """`value` as an id, or CaseFileError naming `where`."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value) or ".." in value:
        raise CaseFileError(
            f"{where}: {what} {value!r} is not filesystem-safe "
            "(letters, digits, _ . -; starting with a letter or digit; no '..')"
        )
    if len(value) > MAX_ID_LENGTH:
        raise CaseFileError(
            f"{where}: {what} {value[:40]!r}... is {len(value)} characters long; "
            f"at most {MAX_ID_LENGTH} (ids become file names)"
        )
    return value


def read_bytes(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise CaseFileError(f"{file}: cannot read the case file ({exc.strerror or exc})") from None


def decode(raw: bytes, where: str) -> str:
    """UTF-8 text of one line (or file), or CaseFileError naming `where` and the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(
            f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8"
        ) from None


def read_text(file: Path) -> str:
    """A whole case file as text; CaseFileError (file:line) when it cannot be read or is not UTF-8."""
    raw = read_bytes(file)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CaseFileError(
            f"{file}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {column}); save the file as UTF-8"
        ) from None


def numbered_lines(file: Path) -> Iterator[tuple[str, str]]:
    """(`file:line`, text) for every non-blank line of a JSONL file, for error messages; a line
    that is not UTF-8 raises CaseFileError naming it."""
    for number, raw in enumerate(read_bytes(file).split(b"\n"), start=1):
        if raw.strip():
            yield f"{file}:{number}", decode(raw, f"{file}:{number}")


def parse_json(line: str, where: str) -> object:
    """One JSON value, or CaseFileError naming `where` (nesting too deep for the parser included)."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise CaseFileError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise CaseFileError(f"{where}: invalid JSON: nested too deeply to read") from None
