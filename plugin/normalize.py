"""Map a language model's free-text reply to a TRUE/FALSE question onto a label.

``normalize_answer(text)`` returns "TRUE", "FALSE" or None (UNKNOWN). Cascade,
the first step that yields a label wins:

0. Clean: drop <think>/<thinking>/<reasoning>/<extended_thinking> blocks (an
   unclosed opening tag drops the rest, an orphan closing tag drops what came
   before it) and code-fence marker lines (the fenced content stays).
   Empty -> None.
5. Markdown is removed in the same pass: ** __ * _ `, heading hashes, table
   pipes and rules, blockquote '>'.
1. Explicit markers ("FINAL_ANSWER:", "Final answer:", "Final Answer -",
   "Answer:"): the last marker followed by a label.
2. Conclusion phrases ("therefore", "thus", "hence", "in conclusion", "so",
   "the answer is"), whole words only: the last one followed by a label in
   its sentence.
3. Revisions ("actually no", "wait,", "on second thought", "I was wrong",
   "correction:"): the label after the last cue that has one (the cue's own
   sentence, else everything after it). Steps 2 and 3 compete by position:
   whichever labelled cue comes later wins.
   A hedge ("it depends", "cannot be determined", "unclear") anywhere in the
   reply stops the cascade here -> None (only markers and conclusions beat it).
4. The whole reply is a label, including a single letter Y/N/T/F.
6. The reply opens with a bare label ("TRUE.\\n\\nExplanation: ..."); otherwise
   the last non-empty line is a label.
7. Keywords anywhere: the label if all of them agree, None if they disagree.
8. Otherwise None.

Label phrases everywhere: true/yes/yeah/yep and false/untrue/no/nope as whole
words in any case; negation flips them ("not true", "isn't true", "not false",
"it is not the case"). "no" before an ordinary word is a determiner ("no
periodic orbit"), not an answer. Questions ("Is it true?") assert nothing.
"""

import re

TRUE, FALSE = "TRUE", "FALSE"

# --- step 0 / 5: cleaning -------------------------------------------------

_THINK_TAGS = r"think|thinking|reasoning|extended_thinking"
_THINK_BLOCK = re.compile(rf"<({_THINK_TAGS})\b[^>]*>.*?</\1\s*>", re.I | re.S)
# Some models emit only the closing tag: everything before it is reasoning.
_THINK_ORPHAN_CLOSE = re.compile(rf".*</(?:{_THINK_TAGS})\s*>", re.I | re.S)
# A truncated reply may never close its reasoning block.
_THINK_UNCLOSED = re.compile(rf"<(?:{_THINK_TAGS})\b[^>]*>.*", re.I | re.S)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[\w+.#-]*[ \t]*$", re.M)
# Underscores only at word edges, so FINAL_ANSWER and x_n survive.
_EMPHASIS = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|`+")
_LINE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]*)?", re.M)
_RULE_LINE = re.compile(r"^[ \t]*[-=:]{3,}[-=: \t]*$", re.M)  # table rules, <hr>

# --- label phrases ----------------------------------------------------------

_TRUE_WORDS = {"true", "yes", "yeah", "yep"}
_PHRASE_SRC = (
    r"(?:(?P<neg>\bnot|n't|\bnever)\s+"
    r"(?:(?:quite|entirely|necessarily|really|actually|strictly|always|completely)\s+)?)?"
    r"(?:\b(?P<word>true|false|untrue|yes|yeah|yep|nope|no)\b|(?P<case>the\s+case)\b)"
)
_PHRASE = re.compile(_PHRASE_SRC, re.I)
# "no" followed by an ordinary word is a determiner ("there is no periodic orbit").
_NO_DETERMINER = re.compile(
    r"[ \t]+(?!(?:it|it's|this|that|that's|the|because|since|as|but|and|or|i|we|wait|not)\b)[a-z]",
    re.I,
)
# A line that is nothing but a label, e.g. "FALSE", "It is not true.", "- No".
_LABEL_LINE = re.compile(
    r"\W*(?:(?:it|this|that|the\s+(?:statement|claim|answer)|answer)\s*(?:is|was|'s)?\s*)?"
    + _PHRASE_SRC
    + r"\W*",
    re.I,
)
_LETTER = re.compile(r"\W*([ynft])\W*", re.I)
_BARE_END = re.compile(r"[ \t]*(?:[.!,:;)\-–—]|\n|$)")
_BOTH_GAP = re.compile(r"\s*,?\s*(?:and|or|/|&|but)\s*(?:also\s+)?", re.I)
_QUESTION = re.compile(r"[^.!?\n]*\?")

# --- cues -------------------------------------------------------------------

_MARKER = re.compile(
    r"\bfinal[\s_-]*answer\b[\"']?[ \t]*(?:[:=\-–—]|is\b|$)|\banswer\b[\"']?[ \t]*[:=\-–—]",
    re.I | re.M,
)
# \b on both sides: "also" must never read as "so".
_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|consequently|in\s+conclusion|so"
    r"|the\s+(?:final\s+|correct\s+)?answer\s+(?:is|must\s+be|should\s+be|would\s+be))\b",
    re.I,
)
# "actually" revises only when a bare label follows ("yes... actually no").
_REVISION = re.compile(
    r"\b(?:wait\b(?=[ \t]*(?:[,.!:;\-–—]|$))|on\s+second\s+thought|i\s+was\s+wrong"
    r"|correction\s*:|scratch\s+that|let\s+me\s+reconsider"
    r"|actually\b(?=,?\s*(?:not\s+)?(?:true|false|yes|no)\b[ \t]*(?:[.,!;:\-–—]|$)))",
    re.I | re.M,
)
_HEDGE = re.compile(
    r"(?:^|[.!?;:,])\s*(?:well,?\s+|hmm,?\s+|honestly,?\s+)?it\s+(?:all\s+)?depends\b"
    r"(?!\s+(?:sensitively|strongly|critically))"  # chaos jargon, not a hedge
    r"|\b(?:cannot|can't|can\s+not|could\s+not|couldn't|impossible\s+to)\s+(?:be\s+)?"
    r"(?:determined?|decided?|said|say|tell|known?)\b"
    r"|\b(?:unclear|undetermined|indeterminate|ambiguous|undecidable)\b"
    r"|\b(?:not\s+enough|insufficient)\s+information\b"
    r"|\bnot\s+(?:sure|certain)\b|\bunsure\b|\bi\s+(?:don't|do\s+not)\s+know\b"
    r"|\bcould\s+be\s+either\b",
    re.I | re.M,
)
_LEAD = re.compile(r"[\s,.:;!\-–—…\"')]*")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def normalize_answer(text: str | None) -> str | None:
    """Return "TRUE", "FALSE" or None (UNKNOWN) for a model's reply."""
    if text is None:
        return None
    text = _clean(text)
    if not text:
        return None
    label = _from_marker(text) or _from_reasoning(text)
    if label or _HEDGE.search(text):
        return label
    return _from_plain(text)


def _clean(text: str) -> str:
    """Step 0 and 5: drop hidden reasoning, fence lines and markdown."""
    text = text.replace("\u2019", "'")
    text = _THINK_BLOCK.sub(" ", text)
    text = _THINK_ORPHAN_CLOSE.sub(" ", text)
    text = _THINK_UNCLOSED.sub(" ", text)
    text = _FENCE_LINE.sub("", text)
    text = _EMPHASIS.sub("", text).replace("|", " ")
    text = _LINE_PREFIX.sub("", text)
    return _RULE_LINE.sub("", text).strip()


def _labels(text: str):
    """Yield (start, end, label) for every label phrase, negation applied."""
    for m in _PHRASE.finditer(text):
        word = (m["word"] or "").lower()
        if m["case"] and not m["neg"]:
            continue  # "in the case of r = 4" asserts nothing
        if word == "no" and not m["neg"] and _NO_DETERMINER.match(text, m.end()):
            continue
        label = TRUE if m["case"] or word in _TRUE_WORDS else FALSE
        if m["neg"]:
            label = FALSE if label == TRUE else TRUE
        yield m.start(), m.end(), label


def _agreed(chunk: str) -> str | None:
    """The label a chunk asserts: it does not hedge and all its labels agree."""
    if _HEDGE.search(chunk):
        return None
    labels = {label for _, _, label in _labels(chunk)}
    return labels.pop() if len(labels) == 1 else None


def _letter(chunk: str) -> str | None:
    """A single letter Y/N/T/F is a label only when it is the whole chunk."""
    m = _LETTER.fullmatch(chunk.strip())
    return (TRUE if m[1].lower() in "yt" else FALSE) if m else None


def _sentence_after(text: str, pos: int) -> str:
    """The rest of the sentence starting at pos; questions count as empty."""
    pos = _LEAD.match(text, pos).end()
    end = _SENTENCE_END.search(text, pos)
    if end is None:
        return text[pos:]
    return "" if end.group() == "?" else text[pos : end.start()]


def _sentence_start(text: str, pos: int) -> int:
    starts = [m.end() for m in _SENTENCE_END.finditer(text[:pos])]
    return starts[-1] if starts else 0


def _from_marker(text: str) -> str | None:
    """Step 1: the last explicit marker followed by a label."""
    for m in reversed(list(_MARKER.finditer(text))):
        chunk = _sentence_after(text, m.end())
        label = _letter(chunk) or _agreed(chunk)
        if label:
            return label
    return None


def _last_conclusion(text: str) -> tuple[int, str] | None:
    """Step 2: the last conclusion phrase whose sentence carries a label."""
    for m in reversed(list(_CONCLUSION.finditer(text))):
        # "It depends on r, so it is true for r = 4" is still a hedge.
        if _HEDGE.search(text[_sentence_start(text, m.start()) : m.start()]):
            continue
        label = _agreed(_sentence_after(text, m.end()))
        if label:
            return m.start(), label
    return None


def _last_revision(text: str) -> tuple[int, str] | None:
    """Step 3: the last revision cue followed by a label (its sentence, else the rest)."""
    for m in reversed(list(_REVISION.finditer(text))):
        rest = _QUESTION.sub(" ", text[m.end() :])
        label = _agreed(_sentence_after(text, m.end())) or _agreed(rest)
        if label:
            return m.start(), label
    return None


def _from_reasoning(text: str) -> str | None:
    """Steps 2-3: a revision after the last conclusion overrides it, and vice versa."""
    hits = [hit for hit in (_last_conclusion(text), _last_revision(text)) if hit]
    return max(hits)[1] if hits else None


def _from_plain(text: str) -> str | None:
    """Steps 4, 6, 7 on the reply with its questions removed."""
    text = _QUESTION.sub(" ", text).strip()
    if not text:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (
        _letter(text)
        or _label_line(text)
        or _opening_label(text)
        or _label_line(lines[-1])
        or _agreed(text)
    )


def _label_line(line: str) -> str | None:
    """A line that is only a (possibly negated) label, e.g. "It is not true."."""
    return _agreed(line) if _LABEL_LINE.fullmatch(line) else None


def _opening_label(text: str) -> str | None:
    """Step 6: "TRUE.\\n\\nExplanation: ... not ..." is answered by its opening."""
    hits = list(_labels(text))[:2]
    if not hits or hits[0][0] != 0 or not _BARE_END.match(text, hits[0][1]):
        return None
    _, end, label = hits[0]
    if len(hits) == 2 and hits[1][2] != label and _BOTH_GAP.fullmatch(text, end, hits[1][0]):
        return None  # "Yes, and no."
    return label
