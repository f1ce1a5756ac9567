"""A scanner for API-key shapes in the files the project commits or writes.

Cassettes (YAML), snapshots (JSON/YAML) and results (JSON/JSONL/CSV) can all end up
holding a credential by accident: an unfiltered ``Authorization`` header in a recorded
interaction, a key echoed into a result row. This module looks for the *shapes* of such
keys and reports where they are, masked, so that CI can fail before anything is pushed.

Each finding is printed as ``path:line: kind: excerpt`` where the excerpt keeps only the
first four characters of the match. Every file under the given paths is scanned, whatever its
suffix (temporary files and logs too; a binary file as Latin-1 text, since keys are ASCII). A
UTF-16 or UTF-32 file is decoded as its byte order mark says, and a file whose NUL bytes fall at
every other byte (UTF-16 without a BOM) is also read as UTF-16.
Base64 bodies that vcrpy stores as YAML ``!!binary`` (a reply that is not UTF-8) are decoded
and the decoded text is scanned, not the base64. A line containing ``scan-secrets: allow`` is
skipped only in the project's own documentation and code (``.md``, ``.py``, ...): in recorded
data (cassettes, results, snapshots) the marker could come from a model's reply.

Stdlib only.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ALLOW_MARKER = "scan-secrets: allow"
# Files written by people, where the allow marker means something; never recorded data.
ALLOW_SUFFIXES = frozenset({".md", ".rst", ".py", ".toml", ".ini", ".cfg", ".sh"})

DEFAULT_PATHS = ("cassettes", "snapshots", "results")

# A file whose first 8 KiB hold a NUL byte is read as Latin-1 (every byte a character).
BINARY_SNIFF_BYTES = 8192
# A YAML binary scalar: `!!binary |` and an indented base64 block, or `!!binary 'base64'`.
_YAML_BINARY = re.compile(
    r"!!binary[ \t]*(?:\|[-+]?[ \t]*\n(?P<block>(?:[ \t]+[A-Za-z0-9+/=]+[ \t]*(?:\n|$))+)"
    r"|(?P<quote>['\"]?)(?P<inline>[A-Za-z0-9+/= \t]+)(?P=quote))"
)

# The characters of a bearer token (RFC 6750's b64token, plus "_").
_TOKEN = r"[A-Za-z0-9_.~+/=-]"
_NOT_TOKEN = rf"(?!{_TOKEN})"

# (kind, pattern), tried in this order. On any one line, a match that overlaps one already
# reported is dropped, so a key is reported once, under its most specific kind (an
# OpenAI key after "Bearer " is an "openai" finding; its body is not also "base64").
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # sk-ant-api03-...
    ("anthropic", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}")),
    # sk-..., sk-proj-..., sk-svcacct-... The placeholder "sk-..." has no body to match.
    ("openai", re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,}")),
    # Google API keys: AIza + 35 characters.
    ("google", re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    # "Bearer <token>" with a token of 16 characters or more that is not all one case of
    # letters (so "Bearer token", "Bearer REDACTED_BY_VCR" and "Bearer <YOUR_KEY>" pass).
    (
        "bearer",
        re.compile(
            rf"(?i:\bbearer)[ \t]+"
            rf"(?![a-z_.~+/=-]+{_NOT_TOKEN}|[A-Z_.~+/=-]+{_NOT_TOKEN})"
            rf"{_TOKEN}{{16,}}"
        ),
    ),
    # A run of 40+ base64 characters, optionally "="-padded, holding at least one digit,
    # one lowercase and one uppercase letter. Requiring both cases keeps out hex digests
    # (sha256 is 64 lowercase hex characters), plain words and snake_case ids. The run
    # must start at its own beginning and not with "/", so that an absolute path or a
    # URL's "//host/..." is not read as base64.
    (
        "base64",
        re.compile(
            r"(?<![A-Za-z0-9+/])"
            r"(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])"
            r"[A-Za-z0-9+][A-Za-z0-9+/]{39,}={0,2}(?![A-Za-z0-9+/=])"
        ),
    ),
)


def _shows(value: object, shown: list[str]) -> bool:
    """Whether `value`, printed by its repr as pytest's -l prints a local, shows one of `shown`."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails shows nothing
        return False
    return any(secret in text for secret in shown)


def redact_traceback(error: BaseException, secrets: Iterable[str]) -> None:
    """Leave no trace of `secrets` in `error` and the exceptions it chains: the locals of each
    finished frame of their tracebacks that would show one (pytest's --tb=long -l prints them; the
    bytes a connection sends hold the key's header) are cleared, and their arguments' text masked."""
    shown = [form for secret in secrets if secret for form in {secret, repr(secret)[1:-1]}]
    seen: set[int] = set()
    while shown and error is not None and id(error) not in seen:
        seen.add(id(error))
        error.args = tuple(_masked(arg, shown) for arg in error.args)
        tb = error.__traceback__
        while tb is not None:
            if any(_shows(value, shown) for value in tb.tb_frame.f_locals.values()):
                try:
                    tb.tb_frame.clear()
                except RuntimeError:  # a frame still running (the one that caught it): its locals show no key
                    pass
            tb = tb.tb_next
        error = error.__cause__ or error.__context__


def _masked(arg: object, shown: list[str]) -> object:
    if isinstance(arg, (str, bytes)) or _shows(arg, shown):
        text = arg.decode("latin-1") if isinstance(arg, bytes) else str(arg)
        for secret in shown:
            text = text.replace(secret, "***")
        return text
    return arg


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    kind: str
    excerpt: str  # the match masked: its first 4 characters, then "…"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.excerpt}"


def mask(secret: str) -> str:
    return secret[:4] + "…"


def scan_line(line: str, allow: bool = True) -> list[tuple[str, str]]:
    """(kind, masked excerpt) for each secret shape on one line, left to right; `allow`:
    whether the line may opt out with the marker."""
    if allow and ALLOW_MARKER in line:
        return []
    taken: list[tuple[int, int, str, str]] = []
    for kind, pattern in SECRET_PATTERNS:
        for match in pattern.finditer(line):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end, _, _ in taken):
                continue
            taken.append((start, end, kind, mask(match.group(0))))
    taken.sort()
    return [(kind, excerpt) for _, _, kind, excerpt in taken]


def scan_text(text: str, path: str | Path) -> list[Finding]:
    allow = Path(path).suffix.lower() in ALLOW_SUFFIXES
    text, decoded = _decode_yaml_binary(text)
    findings = []
    # Split on "\n" only (str.splitlines also splits on form feeds, U+2028, ...), so that
    # line numbers agree with editors and grep.
    for number, line in enumerate(text.split("\n"), start=1):
        for kind, excerpt in scan_line(line.rstrip("\r"), allow):
            findings.append(Finding(str(path), number, kind, excerpt))
    for number, body in decoded:
        for line in body.split("\n"):
            findings += [Finding(str(path), number, kind, excerpt) for kind, excerpt in scan_line(line, allow=False)]
    return sorted(findings, key=lambda f: f.line)


def _decode_yaml_binary(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The text with every YAML !!binary scalar's base64 blanked (newlines kept, so line
    numbers hold), and (line of the tag, decoded body) for each: base64 is not a key, what it
    encodes may hold one."""
    if "!!binary" not in text:
        return text, []
    decoded = []

    def blank(match: re.Match) -> str:
        encoded = match["block"] or match["inline"] or ""
        try:
            raw = base64.b64decode("".join(encoded.split()), validate=True)
        except (binascii.Error, ValueError):
            return match[0]  # not base64 after all: scan it as it stands
        line = text.count("\n", 0, match.start()) + 1
        decoded.append((line, raw.decode("latin-1")))
        return re.sub(r"[^\n]", " ", match[0])

    return _YAML_BINARY.sub(blank, text), decoded


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def iter_files(paths: Iterable[Path]) -> list[Path]:
    """The files to scan: explicit files as given, directories walked recursively for every
    file. Raises FileNotFoundError, naming it, for a path that does not exist; all paths are
    checked before any is walked."""
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"no such file or directory: {path}")
    files = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        else:
            files.append(path)
    return files


# Byte order marks, the longer first: UTF-32-LE's starts with UTF-16-LE's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Without a BOM, UTF-16 text of ASCII (what a key is made of) has a NUL at every other byte: a
# file with NULs at this share of its odd (LE) or even (BE) bytes is also read as UTF-16.
UTF16_NUL_SHARE = 0.25


def texts(data: bytes) -> list[str]:
    """The ways to read a file's bytes as text, each scanned: the encoding its BOM names, else UTF-8;
    and for a file with NUL bytes Latin-1 (every byte a character, keys are ASCII) and UTF-16 (LE,
    BE) where the NULs fall at its odd or even bytes."""
    named = next((encoding for bom, encoding in _BOMS if data.startswith(bom)), None)
    out = [data.decode(named, errors="replace")] if named else []
    if not is_binary(data):
        return out or [data.decode("utf-8", errors="replace")]
    out.append(data.decode("latin-1"))
    sniff = data[:BINARY_SNIFF_BYTES]
    for encoding, nuls in (("utf-16-le", sniff[1::2]), ("utf-16-be", sniff[0::2])):
        if nuls.count(0) >= UTF16_NUL_SHARE * max(1, len(nuls)):
            out.append(data.decode(encoding, errors="replace"))
    return out


def _scan_files(files: Iterable[Path]) -> tuple[list[Finding], int]:
    findings: list[Finding] = []
    scanned = 0
    for file in files:
        data = file.read_bytes()
        scanned += 1
        # a finding once, whichever reading found it
        findings.extend(dict.fromkeys(finding for text in texts(data) for finding in scan_text(text, file)))
    return findings, scanned


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


USAGE = f"""usage: scan-secrets [PATH ...]

Fail on API-key shapes in files. Directories are walked for every file
(binary ones read as Latin-1, UTF-16/32 ones decoded; YAML !!binary bodies decoded first).
Default paths: {" ".join(DEFAULT_PATHS)} (each skipped when it does not exist).
A line containing "{ALLOW_MARKER}" is not checked in {" ".join(sorted(ALLOW_SUFFIXES))} files.
Exit status: 0 clean, 1 secret shapes found, 2 a given path does not exist."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if any(arg in ("-h", "--help") for arg in args):
        print(USAGE)
        return 0
    if args:
        paths = [Path(arg) for arg in args]
    else:
        paths = [Path(p) for p in DEFAULT_PATHS if Path(p).exists()]
    try:
        files = iter_files(paths)
    except FileNotFoundError as error:
        print(f"scan-secrets: {error}", file=sys.stderr)
        return 2
    findings, scanned = _scan_files(files)
    for finding in findings:
        print(finding)
    if findings:
        print(f"scan-secrets: {_plural(len(findings), 'finding')} in {_plural(scanned, 'file')} scanned")
        return 1
    print(f"scan-secrets: {_plural(scanned, 'file')} scanned, no secret shapes found")
    return 0
