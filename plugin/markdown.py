"""Text from outside (a provider's error body, a model's or a case file's words) made inert in the
Markdown of a CI job summary: GitHub renders that page's Markdown and some of its HTML, so a raw
`<!--` would hide the rest of the page and a `|` or a newline would break its table."""

from __future__ import annotations

import os
import re
import stat

# emphasis, code, links and images, table cells, strikethrough ("_" inside a word, as in multi_hop, is plain text)
_PUNCTUATION = re.compile(r"([\\`*\[\]|~])")


def inline(text: object) -> str:
    """One line of plain text: whitespace runs made one space, `&` and `<` as entities (no HTML, no
    comment), Markdown's punctuation backslash-escaped (`|` too, so a table cell stays one cell)."""
    one_line = " ".join(str(text).split())
    return _PUNCTUATION.sub(r"\\\1", one_line.replace("&", "&amp;").replace("<", "&lt;"))


def fenced(lines: list[str]) -> str:
    """Lines in a code block whose fence is longer than any run of backticks in them, so none closes it
    (inside it, HTML and Markdown are text)."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n" + "\n".join(lines) + f"\n{fence}\n"


def code(text: object) -> str:
    """One line as a code span (outside a table): its delimiters longer than any backtick run in it."""
    one_line = " ".join(str(text).split())
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", one_line)), default=0) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{ticks}{pad}{one_line}{pad}{ticks}"


def append_step_summary(text: str) -> str | None:
    """In GitHub Actions, append `text` to the job summary ($GITHUB_STEP_SUMMARY). None when it is
    written or the variable is unset; else a one-line warning (a path that is not a regular file, a
    directory or a FIFO that would block, or cannot be written): the caller's results stand."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            raise OSError("not a regular file")
        # O_NONBLOCK: a FIFO put there after the check fails to open instead of waiting for a reader
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
        with open(fd, "a", encoding="utf-8") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError("not a regular file")
            handle.write(text)
    except OSError as exc:
        return f"WARNING GITHUB_STEP_SUMMARY={path}: job summary not written ({exc.strerror or exc})"
    return None
