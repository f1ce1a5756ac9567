"""The one think-tag scanner: a model's reasoning blocks (<think>, <thinking>, <reasoning>,
<extended_thinking>, any case, with attributes) are not its final answer."""

from __future__ import annotations

import re

# [^<>]* rather than [^>]*: a scan from one "<think" can never run past the next tag.
_THINK_TAG = re.compile(r"<(/?)(?:extended_thinking|thinking|think|reasoning)\b[^<>]*>", re.I)


def _split(text: str) -> tuple[list[str], list[str]]:
    """(the answer's pieces, the reasoning blocks' pieces), in one pass over the tags (a regex like
    ".*</think>" would rescan the text from every position when no tag closes it). Blocks nest, any
    closing tag closes the block, an unclosed block holds the rest and an orphan closing tag
    everything before it (its opener was in the prompt)."""
    kept, thought, start, inside = [], [], 0, False
    for m in _THINK_TAG.finditer(text):
        if not m[1]:
            # an opening tag; nested ones are part of the block
            if not inside:
                kept.append(text[start : m.start()])
                inside, start = True, m.end()
        elif inside:
            thought.append(text[start : m.start()])
            inside, start = False, m.end()
        else:
            thought += kept  # in place: a copy per orphan tag made a run of them quadratic
            thought.append(text[start : m.start()])
            kept, start = [], m.end()
    (thought if inside else kept).append(text[start:])
    return kept, thought


def strip_thinking(text: str, gap: str = "") -> str:
    """`text` without its reasoning blocks; `gap` joins what is kept (" " keeps the words around a
    block apart)."""
    return gap.join(_split(text)[0])


def thinking_of(text: str) -> str:
    """The reasoning blocks a model wrote into `text`, without their tags, joined by blank lines."""
    pieces = (_THINK_TAG.sub("", piece).strip() for piece in _split(text)[1])
    return "\n\n".join(piece for piece in pieces if piece)
