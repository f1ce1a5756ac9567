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
2. Conclusion phrases ("therefore", "thus", "hence", "in conclusion", "the
   answer is", "the answer to this question is", "so the statement is ...",
   "so" before a bare label as in "so it's FALSE."), whole words only: the last
   one followed by a label in its sentence. A bare "so" is no conclusion
   ("even so", "if so", "so-called").
3. Revisions ("actually no", "wait,", "on second thought", "on reflection",
   "after thinking", "I was wrong", "that's wrong", "correction:", "at first
   ... but"): the label after the last cue that has one (the cue's own
   sentence, else everything after it). Steps 2 and 3 compete by position:
   whichever labelled cue comes later wins.
4. The whole reply is a label, including a single letter Y/N/T/F.
6. The reply opens with a bare label ("TRUE.\\n\\nExplanation: ..."); otherwise
   the last non-empty line is a label.
7. Keywords anywhere: the label if all of them agree, None if they disagree or
   the reply hedges ("it depends", "cannot be determined", "unclear").
8. Otherwise None. A hedge only blocks a label that would come from a span
   containing it: it never overrides steps 1-6.

Label phrases everywhere: true/yes/yeah/yep and false/untrue/no/nope as whole
words in any case; negation flips them ("not true", "isn't true", "not false",
"it is not the case"). "no" before an ordinary word is a determiner ("no
periodic orbit"), not an answer. Questions ("Is it true?") assert nothing.

Cost is linear in the reply: every pattern is scanned once over the text and
none can backtrack over more than the run it starts on; the cue steps look
labels up by binary search instead of rescanning the text after each cue.
"""

import re
from bisect import bisect_left, bisect_right
from functools import cached_property, lru_cache

from pytest_reasoning_evals.thinking import strip_thinking

TRUE, FALSE = "TRUE", "FALSE"

# --- step 0 / 5: cleaning -------------------------------------------------

_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[\w+.#-]*[ \t]*$", re.M)
# Underscores only at word edges, so FINAL_ANSWER and x_n survive; (?<!_) so a
# long run inside a word is tried once, not from each of its underscores.
_EMPHASIS = re.compile(r"(?=[*_`])(?:\*+|(?<!\w)_+|(?<!_)_+(?!\w)|`+)")
_LINE_PREFIX = re.compile(r"^(?=[ \t>#])[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]*)?", re.M)
_RULE_LINE = re.compile(r"^[ \t]*[-=:]{3}[-=: \t]*$", re.M)  # table rules, <hr>
# Runs of whitespace shrink to one character, so no later pattern rescans them.
_SPACE_RUN = re.compile(r"\s{2,}")

# --- label phrases ----------------------------------------------------------
# Patterns scanned over the whole reply open with a lookahead on the letters their
# words can start with, e.g. (?=[ntfuy]): re drops most positions after one test.

_NEG = r"(?:\bnot|n't|\bnever)\s+(?:(?:quite|entirely|necessarily|really|actually|strictly|always|completely)\s+)?"
# "no" followed by an ordinary word is a determiner ("there is no periodic orbit").
_NOT_DETERMINER = r"(?![ \t]+(?!(?:it|it's|this|that|that's|the|because|since|as|but|and|or|i|we|wait|not)\b)[a-z])"
# The group that matched is the label. A negated phrase starts earlier than its word,
# so the leftmost match always takes the negation with it.
_PHRASE_SRC = (
    rf"(?P<TRUE>{_NEG}(?:false|untrue|nope|no)\b|\b(?:true|yes|yeah|yep)\b)"
    rf"|(?P<FALSE>{_NEG}(?:true|yes|yeah|yep|the\s+case)\b|\b(?:false|untrue|nope)\b|\bno\b{_NOT_DETERMINER})"
)
_PHRASE = re.compile(rf"(?=[ntfuy])(?:{_PHRASE_SRC})")
# A line that is nothing but a label, e.g. "FALSE", "It is not true.", "- No".
_LABEL_LINE = re.compile(
    r"\W*(?:(?:it|this|that|the\s+(?:statement|claim|answer)|answer)(?:\s*(?:is|was|'s))?\s*)?"
    rf"(?:{_PHRASE_SRC})\W*"
)
# A bare label ends its clause: "no." / "TRUE," but not "true chaos" or "no periodic orbit".
_BARE_LABEL = r"(?:not\s+)?(?:true|false|yes|no)\b[ \t]*(?:[.,!;:\-–—]|$)"
_LETTER = re.compile(r"\W*([ynft])\W*")
_SHORT = 200  # a whole-reply label or label line is short; longer text is prose
_BARE_END = re.compile(r"[ \t]*(?:[.!,:;)\-–—]|\n|$)")
_BOTH_GAP = re.compile(r"\s*(?:,\s*)?(?:and|or|/|&|but)\s*(?:also\s+)?")
# A question starts right after a sentence end, so each one is scanned once.
_QUESTION = re.compile(r"(?<![^.!?\n])[^.!?\n]*\?")

# --- cues -------------------------------------------------------------------

_MARKER = re.compile(
    r"(?=[fa])(?:\bfinal[\s_-]*answer\b[\"']?[ \t]*(?:[:=\-–—]|is\b|$)|\banswer\b[\"']?[ \t]*[:=\-–—])",
    re.M,
)
# \b on both sides: "also" must never read as "so". "so" alone concludes nothing
# ("even so", "if so", "so-called", "and so on"): only "so the statement/claim is
# ..." or "so" before a bare label ("so it's FALSE.").
_CONCLUSION = re.compile(
    r"(?=[thcis])(?:\b(?:therefore|thus|hence|consequently|in\s+conclusion"
    # "the answer to this question is: false." as "the answer is: false."
    r"|the\s+(?:final\s+|correct\s+)?answer(?:\s+(?:to|for)\s+(?:this|the)\s+(?:question|statement|claim))?"
    r"\s+(?:is|must\s+be|should\s+be|would\s+be))\b"
    r"|(?<!\bif\s)(?<!\beven\s)\bso,?\s+(?=the\s+(?:statement|claim)\s+is\b"
    rf"|(?:it\s+is\s+|it's\s+)?{_BARE_LABEL}))",
    re.M,
)
_CONDITIONAL = re.compile(r"\b(?:if|unless|suppose|supposing|assuming|otherwise)\b")
_OPENER = r"\b(?:at\s+first|initially|originally)\b"
# "actually" and "wait" revise only when a bare label follows ("yes... actually no");
# "at first X, but Y" only within one sentence, and the gap may not hold another
# opener: each character is scanned from one opener at most.
_REVISION = re.compile(
    rf"(?=[wouaitcsl])\b(?:wait\b(?=[ \t]*(?:[,.!:;\-–—]|$)|\s+{_BARE_LABEL})"
    r"|(?:on|upon)\s+(?:(?:second|further)\s+)?(?:thought|reflection|consideration)"
    r"|after\s+(?:(?:further|more|careful|some)\s+)?(?:thinking|thought|reflection|reconsidering)"
    r"|(?:i\s+was|that's|that\s+(?:is|was))\s+(?:wrong|incorrect|mistaken)\b"
    rf"|{_OPENER}(?:(?!{_OPENER}|\bbut\b)[^.!?\n])*\bbut\b"
    r"|correction\s*:|scratch\s+that|let\s+me\s+reconsider"
    rf"|actually\b(?=,?\s*{_BARE_LABEL}))",
    re.M,
)
_HEDGE = re.compile(
    r"(?=[ciuanwh])(?:"
    # "it depends" opens a clause: after punctuation or a line break, or one space
    # past them (runs of spaces were squeezed; blanked questions count as spaces).
    r"(?:(?<![^.!?;:,\n])|(?<=[ \t])(?<![^.!?;:,\s][ \t]))"
    r"(?:(?:well|hmm|honestly),?\s+)?it\s+(?:all\s+)?depends\b"
    r"(?!\s+(?:sensitively|strongly|critically))"  # chaos jargon, not a hedge
    r"|\b(?:cannot|can't|can\s+not|could\s+not|couldn't|impossible\s+to)\s+(?:be\s+)?"
    r"(?:determined?|decided?|said|say|tell|known?)\b"
    r"|\b(?:unclear|undetermined|indeterminate|ambiguous|undecidable)\b"
    r"|\b(?:not\s+enough|insufficient)\s+information\b"
    r"|\bnot\s+(?:sure|certain)\b|\bunsure\b|\bi\s+(?:don't|do\s+not)\s+know\b"
    r"|\bcould\s+be\s+either\b)"
)
_LEAD = re.compile(r"[\s,.:;!\-–—…\"')]*")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def normalize_answer(text: str | None) -> str | None:
    """Return "TRUE", "FALSE" or None (UNKNOWN) for a model's reply."""
    if text is None:
        return None
    if len(text) <= SHORT_REPLY:
        return _short_answer(text)
    return _answer(text)


# A zero-shot run's replies are mostly a few words that recur ("TRUE", "False.", "**FALSE**"):
# those are read once each (the cascade is a pure function of the text). Long replies are not
# kept, so the cache stays small.
SHORT_REPLY = 64


@lru_cache(maxsize=4096)
def _short_answer(text: str) -> str | None:
    return _answer(text)


def _answer(text: str) -> str | None:
    text = _clean(text)
    if not text:
        return None
    reply = _Reply(text)
    return _from_marker(reply) or _from_reasoning(reply) or _from_plain(reply)


def _clean(text: str) -> str:
    """Step 0 and 5: drop hidden reasoning, fence lines and markdown."""
    # Lower-cased once: every later pattern is case-blind without re.I, which is faster.
    # a space where a block was: the words around it stay apart
    text = strip_thinking(text.lower().replace("\u2019", "'"), gap=" ")
    text = _FENCE_LINE.sub("", text)
    text = _EMPHASIS.sub("", text).replace("|", " ")
    text = _LINE_PREFIX.sub("", text)
    text = _RULE_LINE.sub("", text)
    return _SPACE_RUN.sub(lambda m: "\n" if "\n" in m[0] else " ", text).strip()


class _Tally:
    """Where a text's labels and hedges end, found in one scan, so that any span's
    verdict is a few binary searches rather than a rescan of the span. A phrase
    belongs to the span holding its last character: "not actually false" is TRUE
    even in the span after "actually"."""

    def __init__(self, text: str):
        self.size = len(text)
        self.ends, self.trues = [], [0]  # trues[i]: TRUE labels among the first i
        for m in _PHRASE.finditer(text):
            self.ends.append(m.end())
            self.trues.append(self.trues[-1] + (m.lastgroup == TRUE))
        self.hedges = [m.end() for m in _HEDGE.finditer(text)]

    def hedged(self, start: int, end: int) -> bool:
        return bisect_right(self.hedges, end) > bisect_right(self.hedges, start)

    def count(self, start: int, end: int) -> int:
        return bisect_right(self.ends, end) - bisect_right(self.ends, start)

    def agreed(self, start: int = 0, end: int | None = None) -> str | None:
        """The label text[start:end] asserts: it does not hedge and all its labels agree."""
        end = self.size if end is None else end
        if self.hedged(start, end):
            return None
        i, j = bisect_right(self.ends, start), bisect_right(self.ends, end)
        trues = self.trues[j] - self.trues[i]
        if trues == j - i:
            return TRUE if trues else None
        return FALSE if trues == 0 else None


class _Reply:
    """A cleaned reply with a tally of its labels outside questions."""

    def __init__(self, text: str):
        self.text = text
        # Questions assert nothing: blank them, keeping every position in place.
        self.plain = _QUESTION.sub(lambda m: " " * len(m[0]), text)
        self.tally = _Tally(self.plain)

    @cached_property
    def ends(self) -> list[int]:
        """Sentence ends, found once and only for a reply with cues."""
        return [m.start() for m in _SENTENCE_END.finditer(self.text)]

    def sentence_after(self, pos: int) -> tuple[int, int]:
        """The rest of the sentence starting at pos (empty for a question)."""
        pos = _LEAD.match(self.text, pos).end()
        i = bisect_left(self.ends, pos)
        if i == len(self.ends):
            return pos, len(self.text)
        end = self.ends[i]
        return (pos, pos) if self.text[end] == "?" else (pos, end)

    def sentence_start(self, pos: int) -> int:
        i = bisect_left(self.ends, pos)
        return self.ends[i - 1] + 1 if i else 0

    def cues(self, pattern: re.Pattern):
        """pattern's matches, last first. A cue with no label between it and the end of
        the later cue (which found none) reads exactly like that cue: skip it, so a
        reply full of cues costs one look per labelled cue, not one per cue."""
        later = None
        for m in reversed(list(pattern.finditer(self.text))):
            if later is None or self.tally.count(m.end(), later):
                yield m
            later = m.end()


def _agreed(chunk: str) -> str | None:
    return _Tally(chunk).agreed()


def _letter(text: str, start: int = 0, end: int | None = None) -> str | None:
    """A single letter Y/N/T/F is a label only when it is the whole span."""
    end = len(text) if end is None else end
    m = end - start <= _SHORT and _LETTER.fullmatch(text, start, end)
    return (TRUE if m[1] in "yt" else FALSE) if m else None


def _from_marker(reply: _Reply) -> str | None:
    """Step 1: the last explicit marker followed by a label."""
    # Not reply.cues(): the label may be a single letter, which the tally does not hold.
    for m in reversed(list(_MARKER.finditer(reply.text))):
        start, end = reply.sentence_after(m.end())
        label = _letter(reply.text, start, end) or reply.tally.agreed(start, end)
        if label:
            return label
    return None


def _last_conclusion(reply: _Reply) -> tuple[int, str] | None:
    """Step 2: the last conclusion phrase whose sentence carries a label."""
    for m in reply.cues(_CONCLUSION):
        # "It depends on r, so it is true for r = 4" is still a hedge.
        start = reply.sentence_start(m.start())
        if reply.tally.hedged(start, m.start()):
            continue
        # "If so, the answer would be true." supposes, it does not conclude (the look-back is
        # bounded so that a reply of one endless sentence stays linear)
        if _CONDITIONAL.search(reply.text, max(start, m.start() - _SHORT), m.start()):
            continue
        label = reply.tally.agreed(*reply.sentence_after(m.end()))
        if label:
            return m.start(), label
    return None


def _last_revision(reply: _Reply) -> tuple[int, str] | None:
    """Step 3: the last revision cue followed by a label (its sentence, else the rest)."""
    for m in reply.cues(_REVISION):
        label = reply.tally.agreed(*reply.sentence_after(m.end())) or reply.tally.agreed(m.end())
        if label:
            return m.start(), label
    return None


def _from_reasoning(reply: _Reply) -> str | None:
    """Steps 2-3: a revision after the last conclusion overrides it, and vice versa."""
    hits = [hit for hit in (_last_conclusion(reply), _last_revision(reply)) if hit]
    return max(hits)[1] if hits else None


def _from_plain(reply: _Reply) -> str | None:
    """Steps 4, 6, 7 on the reply with its questions blanked."""
    text = reply.plain.strip()
    if not text:
        return None
    return (
        _letter(text)
        or _label_line(text)
        or _opening_label(text)
        or _label_line(text.splitlines()[-1].strip())
        or reply.tally.agreed()
    )


def _label_line(line: str) -> str | None:
    """A line that is only a (possibly negated) label, e.g. "It is not true."."""
    return _agreed(line) if len(line) <= _SHORT and _LABEL_LINE.fullmatch(line) else None


def _opening_label(text: str) -> str | None:
    """Step 6: "TRUE.\\n\\nExplanation: ... not ..." is answered by its opening."""
    first = _PHRASE.match(text)
    if not first or not _BARE_END.match(text, first.end()):
        return None
    gap = _BOTH_GAP.match(text, first.end(), first.end() + _SHORT)
    second = gap and _PHRASE.match(text, gap.end())
    if second and second.lastgroup != first.lastgroup:
        return None  # "Yes, and no."
    return first.lastgroup
