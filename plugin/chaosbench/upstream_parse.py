"""Upstream ChaosBench-Logic's answer parser, for --eval-profile=upstream: a port of `parse_label`
(strict mode, its `chaosbench eval` default) in upstream's `chaosbench/eval/parsing.py`
(github.com/11NOel11/ChaosBench-Logic). The harness's own normaliser (normalize.py) reads more
replies; this one reads them as upstream's published runs did, so the two profiles' labels differ.
"""

from __future__ import annotations

import re

_TRUE_TOKENS = {"yes", "true", "y", "t"}
_FALSE_TOKENS = {"no", "false", "n", "f"}
_CLEAN_RE = re.compile(r"[*_`#\[\]()\"']")
# upstream's order matters: the first pattern that matches and holds a label wins
_ANSWER_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"FINAL[_\s\-]*ANSWER\s*[:=]\s*([^\n.,;]+)",
        r"(?:the\s+)?answer\s+is\s*[:=]?\s*([^\n.,;]+)",
        r"\banswer\s*[:=]\s*([^\n.,;]+)",
        r"\btherefore\s*[,:]?\s*([^\n.,;]+)",
        r"\bconclusion\s*[:=]\s*([^\n.,;]+)",
        r"\bso\s+(?:the\s+answer\s+is\s+)?([^\n.,;]+)",
        r"(?:my\s+)?(?:final|ultimate)\s+answer\s*[:=]?\s*([^\n.,;]+)",
    )
)
_AMBIGUOUS = (
    "it depends",
    "cannot determine",
    "cannot be determined",
    "not enough information",
    "ambiguous",
    "both true and false",
    "both false and true",
    "neither true nor false",
)


def _token_label(token: str) -> str | None:
    word = token.strip().lower().rstrip(".,;:!?")
    if word in _TRUE_TOKENS:
        return "TRUE"
    if word in _FALSE_TOKENS:
        return "FALSE"
    return None


def _last_label(tokens: list[str]) -> str | None:
    return next((label for label in map(_token_label, reversed(tokens)) if label), None)


def _from_patterns(text: str) -> str | None:
    cleaned = _CLEAN_RE.sub("", text)
    for pattern in _ANSWER_PATTERNS:
        match = pattern.search(cleaned)
        # a matching pattern without a label does not stop the search (upstream's loop)
        label = _last_label(match.group(1).strip().split()) if match else None
        if label:
            return label
    return None


def _from_last_line(text: str) -> str | None:
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return _last_label(_CLEAN_RE.sub("", lines[-1]).split()) if lines else None


def upstream_label(text: str | None) -> str | None:
    """ "TRUE", "FALSE" or None (upstream's INVALID) for a reply, as upstream's strict parse_label reads it."""
    if not text or not text.strip() or any(phrase in text.lower() for phrase in _AMBIGUOUS):
        return None
    return _from_last_line(text) or _from_patterns(text)
