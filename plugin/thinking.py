"""The one think-tag stripper: a model's reasoning blocks (<think>, <thinking>, <reasoning>,
<extended_thinking>, any case, with attributes) are not its answer."""

from __future__ import annotations

import re

# [^<>]* rather than [^>]*: a scan from one "<think" can never run past the next tag.
_THINK_TAG = re.compile(r"<(/?)(?:extended_thinking|thinking|think|reasoning)\b[^<>]*>", re.I)


def strip_thinking(text: str, gap: str = "") -> str:
    """`text` without its reasoning blocks, in one pass over the tags (a regex like ".*</think>"
    would rescan the text from every position when no tag closes it). Blocks nest, any closing tag
    closes the block, an unclosed block hides the rest and an orphan closing tag everything before
    it (its opener was in the prompt). `gap` joins what is kept (" " keeps the words around a block apart)."""
    kept, start, inside = [], 0, False
    for m in _THINK_TAG.finditer(text):
        if not m[1]:
            # an opening tag; nested ones are part of the block
            if not inside:
                kept.append(text[start : m.start()])
                inside = True
        elif inside:
            inside, start = False, m.end()
        else:
            kept, start = [], m.end()
    if not inside:
        kept.append(text[start:])
    return gap.join(kept)
