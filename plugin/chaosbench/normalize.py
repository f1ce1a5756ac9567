"""Map a language model's free-text reply to a TRUE/FALSE question onto a label.

``normalize_answer(text, words=ENGLISH)`` returns "TRUE", "FALSE" or None
(UNKNOWN). Cascade, the first step that yields a label wins:

0. Clean: drop <think>/<thinking>/<reasoning>/<extended_thinking> blocks (an
   unclosed opening tag drops the rest, an orphan closing tag drops what came
   before it). Empty -> None. Then JSON: the last object the reply holds
   (json.loads, fenced or not) with an answer key (answer, verdict, label,
   is_true, result, final_answer; any case) gives the label of its value, a
   boolean or a string read by steps 1-8; keys that disagree -> None. A reply
   with no such object goes on. Then code-fence marker lines are dropped (the
   fenced content stays).
5. Markdown is removed in the same pass: ** __ * _ `, heading hashes, table
   pipes and rules, blockquote '>'.
1. Explicit markers ("FINAL_ANSWER:", "Final answer:", "Final Answer -",
   "Answer:", and headers naming both labels: "True/False:", "True or False:",
   "Answer (True/False):", "T/F:", "Yes/No:"): the last marker followed by a
   label (a single letter counts).
2. Conclusion phrases ("therefore", "thus", "hence", "in conclusion", "the
   answer is", "the answer to this question is", "so the statement is ...",
   "so" before a bare label as in "so it's FALSE."), whole words only: the last
   one followed by a label in its sentence. A bare "so" is no conclusion
   ("even so", "if so", "so-called"). A hedge earlier in the sentence voids the
   conclusion ("It depends on r, so it is true for r = 4") unless a "but" or
   "however" concedes it ("It depends in general, but here the answer is FALSE").
3. Revisions ("actually no", "wait,", "on second thought", "on reflection",
   "after thinking", "I was wrong", "that's wrong", "correction:", "at first
   ... but"): the label after the last cue that has one (the cue's own
   sentence, else everything after it). Steps 2 and 3 compete by position:
   whichever labelled cue comes later wins.
4. The whole reply is a label, including a single letter Y/N/T/F.
6. The reply opens with a bare label ("TRUE.\\n\\nExplanation: ..."), unless the
   next words are the other label ("Yes, and no.", "Yes, that's false.", "No.
   TRUE."; a negated restatement agrees: "No, it is not false." answers "Is it
   false that ...?"); otherwise the last non-empty line is a label.
7. Keywords anywhere: the label if all of them agree, None if they disagree or
   the reply hedges ("it depends", "cannot be determined", "unclear").
8. Otherwise None. A reply asserting both labels is None, whichever words carry
   them. A hedge only blocks a label that would come from a span containing
   it: it never overrides steps 1-6, and "It depends: TRUE for ..." is no hedge
   (the colon introduces the answer).

Label phrases everywhere: true/yes/yeah/yep and false/untrue/no/nope as whole
words in any case, and a team's own words per label (``AnswerWords``, the
eval_answer_words option) wherever those are read; negation flips them ("not
true", "isn't true", "not false", "it is not the case"; only English "not",
"n't" and "never" negate, so German "nicht wahr" reads as "wahr": give "nicht
wahr" as a FALSE word to read it so). "no" before an ordinary word is a determiner ("no
periodic orbit"), not an answer. A word after "neither" or "nor" asserts
nothing ("neither false nor misleading"). Questions ("Is it true?") and
"True/False:" headers assert nothing.

Cost is linear in the reply: every pattern is scanned once over the text and
none can backtrack over more than the run it starts on; the cue steps look
labels up by binary search instead of rescanning the text after each cue; the
JSON step gives up once its failed parses have read twice the reply.
"""

import json
import re
from bisect import bisect_left, bisect_right
from functools import cached_property, lru_cache
from typing import NamedTuple

from pytest_reasoning_evals.thinking import strip_thinking

TRUE, FALSE = "TRUE", "FALSE"
# A step that finds both labels asserted decides the reply: UNKNOWN, no later step is asked.
_BOTH = "BOTH"
_NONE = "NONE"  # the group of a label word that asserts nothing ("neither true nor false")


class AnswerWords(NamedTuple):
    """A team's own words per label (eval_answer_words), read wherever true/yes and false/no are."""

    true: tuple[str, ...] = ()
    false: tuple[str, ...] = ()


ENGLISH = AnswerWords()
_BUILT_IN = {TRUE: ("true", "yes", "yeah", "yep"), FALSE: ("false", "untrue", "nope", "no")}


def parse_answer_words(text: str) -> AnswerWords:
    """ "TRUE = wahr, richtig; FALSE = falsch" -> AnswerWords; ValueError says what is wrong."""
    given: dict[str, list[str]] = {TRUE: [], FALSE: []}
    for entry in filter(str.strip, text.split(";")):
        label, eq, words = entry.partition("=")
        label = label.strip().upper()
        if not eq:
            raise ValueError(f"{entry.strip()!r} has no '=': write LABEL = word, word; LABEL = word")
        if label not in given:
            raise ValueError(f"unknown label {label!r} in {entry.strip()!r}: the labels are TRUE and FALSE")
        # lower-cased and with single spaces, as the reply is read
        for word in (" ".join(w.split()).lower() for w in words.split(",")):
            if not word:
                raise ValueError(f"an empty word in {entry.strip()!r}")
            given[label].append(word)
    for label, other in ((TRUE, FALSE), (FALSE, TRUE)):
        both = sorted(set(given[label]) & {*given[other], *_BUILT_IN[other]})
        if both:
            raise ValueError(f"{both[0]!r} is given for {label} but is a {other} word")
    return AnswerWords(tuple(dict.fromkeys(given[TRUE])), tuple(dict.fromkeys(given[FALSE])))


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
_TRUE_WORDS, _FALSE_WORDS = _BUILT_IN[TRUE], _BUILT_IN[FALSE][:-1]  # "no" has rules of its own


def _alternation(words) -> str:
    # longest first, so "untrue" is not read as "un" + "true"; a space in a word is any space
    return "|".join(re.escape(w).replace("\\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def _phrase_src(words: AnswerWords) -> str:
    """The group that matched is the label. A negated phrase starts earlier than its word, so the
    leftmost match always takes the negation with it; "neither"/"nor" before a word takes it too."""
    trues = _alternation((*_TRUE_WORDS, *words.true))
    falses = _alternation((*_FALSE_WORDS, *words.false))
    return (
        rf"(?P<{_NONE}>\b(?:neither|nor)\s+(?:{trues}|{falses}|no)\b)"
        rf"|(?P<TRUE>{_NEG}(?:{falses}|no)\b|\b(?:{trues})\b)"
        rf"|(?P<FALSE>{_NEG}(?:{trues}|the\s+case)\b|\b(?:{falses})\b|\bno\b{_NOT_DETERMINER})"
    )


_LETTER = re.compile(r"\W*([ynft])\W*")
_SHORT = 200  # a whole-reply label or label line is short; longer text is prose
_BARE_END = re.compile(r"[ \t]*(?:[.!,:;)\-–—]|\n|$)")
_BOTH_GAP = re.compile(r"\s*(?:,\s*)?(?:and|or|/|&|but)\s*(?:also\s+)?")
# A question starts right after a sentence end, so each one is scanned once.
_QUESTION = re.compile(r"(?<![^.!?\n])[^.!?\n]*\?")

# --- cues -------------------------------------------------------------------

# "True/False:", "Answer (T/F):" name both labels to introduce one: a marker, not an assertion.
_HEADER = (
    r"(?:\banswer[ \t]*\([ \t]*)?\b(?:true[ \t]*(?:/|or)[ \t]*false|t[ \t]*/[ \t]*f|yes[ \t]*(?:/|or)[ \t]*no)\b"
    r"[ \t]*\)?[ \t]*[:=\-–—]"
)
_HEADERS = re.compile(rf"(?=[aty]){_HEADER}")
_MARKER = re.compile(
    r"(?=[faty])(?:\bfinal[\s_-]*answer\b[\"']?[ \t]*(?:[:=\-–—]|is\b|$)|\banswer\b[\"']?[ \t]*[:=\-–—]"
    rf"|{_HEADER})",
    re.M,
)
# \b on both sides: "also" must never read as "so". "so" alone concludes nothing
# ("even so", "if so", "so-called", "and so on"): only "so the statement/claim is
# ..." or "so" before a bare label ("so it's FALSE."). {bare}: the words' bare label.
_CONCLUSION_SRC = (
    r"(?=[thcis])(?:\b(?:therefore|thus|hence|consequently|in\s+conclusion"
    # "the answer to this question is: false." as "the answer is: false."
    r"|the\s+(?:final\s+|correct\s+)?answer(?:\s+(?:to|for)\s+(?:this|the)\s+(?:question|statement|claim))?"
    r"\s+(?:is|must\s+be|should\s+be|would\s+be))\b"
    r"|(?<!\bif\s)(?<!\beven\s)\bso,?\s+(?=the\s+(?:statement|claim)\s+is\b"
    r"|(?:it\s+is\s+|it's\s+)?{bare}))"
)
_CONDITIONAL = re.compile(r"\b(?:if|unless|suppose|supposing|assuming|otherwise)\b")
# "..., but here the answer is FALSE": a contrast after a hedge concedes it.
_CONTRAST = re.compile(r"(?=[bh])\b(?:but|however)\b")
_OPENER = r"\b(?:at\s+first|initially|originally)\b"
# "actually" and "wait" revise only when a bare label follows ("yes... actually no");
# "at first X, but Y" only within one sentence, and the gap may not hold another
# opener: each character is scanned from one opener at most.
_REVISION_SRC = (
    r"(?=[wouaitcsl])\b(?:wait\b(?=[ \t]*(?:[,.!:;\-–—]|$)|\s+{bare})"
    r"|(?:on|upon)\s+(?:(?:second|further)\s+)?(?:thought|reflection|consideration)"
    r"|after\s+(?:(?:further|more|careful|some)\s+)?(?:thinking|thought|reflection|reconsidering)"
    r"|(?:i\s+was|that's|that\s+(?:is|was))\s+(?:wrong|incorrect|mistaken)\b"
    rf"|{_OPENER}(?:(?!{_OPENER}|\bbut\b)[^.!?\n])*\bbut\b"
    r"|correction\s*:|scratch\s+that|let\s+me\s+reconsider"
    r"|actually\b(?=,?\s*{bare}))"
)
_HEDGE_SRC = (
    r"(?=[ciuanwh])(?:"
    # "it depends" opens a clause: after punctuation or a line break, or one space
    # past them (runs of spaces were squeezed; blanked questions count as spaces).
    r"(?:(?<![^.!?;:,\n])|(?<=[ \t])(?<![^.!?;:,\s][ \t]))"
    r"(?:(?:well|hmm|honestly),?\s+)?it\s+(?:all\s+)?depends\b"
    r"(?!\s+(?:sensitively|strongly|critically))"  # chaos jargon, not a hedge
    # "It depends: TRUE for the standard parameters." introduces its answer
    r"(?![ \t]*[:\-–—][ \t]*(?:not\s+)?(?:{labels})\b)"
    r"|\b(?:cannot|can't|can\s+not|could\s+not|couldn't|impossible\s+to)\s+(?:be\s+)?"
    r"(?:determined?|decided?|said|say|tell|known?)\b"
    r"|\b(?:unclear|undetermined|indeterminate|ambiguous|undecidable)\b"
    r"|\b(?:not\s+enough|insufficient)\s+information\b"
    r"|\bnot\s+(?:sure|certain)\b|\bunsure\b|\bi\s+(?:don't|do\s+not)\s+know\b"
    r"|\bcould\s+be\s+either\b)"
)
_LEAD = re.compile(r"[\s,.:;!\-–—…\"')]*")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
# The clause after an opening label: "Yes, that's false." contradicts it. A negated one does not:
# "No, it is not false." answers "Is it false that ...?" twice over.
_CLAUSE = re.compile(rf"\s*(?![^.,;:!?\n]{{0,{_SHORT}}}(?:\bnot\b|n't\b|\bnever\b))([^.,;:!?\n]{{1,{_SHORT}}})")


class _Grammar:
    """The patterns that name labels, built once per set of answer words."""

    def __init__(self, words: AnswerWords):
        labels = _alternation({*_TRUE_WORDS, *_FALSE_WORDS, "no", *words.true, *words.false})
        bare = rf"(?:not\s+)?(?:{labels})\b[ \t]*(?:[.,!;:\-–—]|$)"  # ends its clause: "no." not "no orbit"
        # open with a lookahead on the letters the words start with: re drops most positions after one test
        starts = "".join(sorted({re.escape(w[0]) for w in (*words.true, *words.false)} | set("ntfuy")))
        phrase = _phrase_src(words)
        self.phrase = re.compile(rf"(?=[{starts}])(?:{phrase})")
        # a line that is nothing but a label, e.g. "FALSE", "It is not true.", "- No"
        self.label_line = re.compile(
            r"\W*(?:(?:it|this|that|the\s+(?:statement|claim|answer)|answer)(?:\s*(?:is|was|'s))?\s*)?"
            rf"(?:{phrase})\W*"
        )
        self.conclusion = re.compile(_CONCLUSION_SRC.replace("{bare}", bare), re.M)
        self.revision = re.compile(_REVISION_SRC.replace("{bare}", bare), re.M)
        self.hedge = re.compile(_HEDGE_SRC.replace("{labels}", labels))


@lru_cache(maxsize=16)
def _grammar(words: AnswerWords) -> _Grammar:
    return _Grammar(words)


def normalize_answer(text: str | None, words: AnswerWords = ENGLISH) -> str | None:
    """Return "TRUE", "FALSE" or None (UNKNOWN) for a model's reply; `words` adds a team's own
    answer words per label (eval_answer_words)."""
    if text is None:
        return None
    if len(text) <= SHORT_REPLY:
        return _short_answer(text, words)
    return _answer(text, words)


# A zero-shot run's replies are mostly a few words that recur ("TRUE", "False.", "**FALSE**"):
# those are read once each (the cascade is a pure function of the text). Long replies are not
# kept, so the cache stays small.
SHORT_REPLY = 64


@lru_cache(maxsize=4096)
def _short_answer(text: str, words: AnswerWords) -> str | None:
    return _answer(text, words)


def _answer(text: str, words: AnswerWords) -> str | None:
    grammar = _grammar(words)
    # Lower-cased once: every later pattern is case-blind without re.I, which is faster.
    # a space where a block was: the words around it stay apart
    text = strip_thinking(text.lower().replace("\u2019", "'"), gap=" ")
    label = _from_json(text, grammar) or _read(text, grammar)
    return None if label == _BOTH else label


def _read(text: str, grammar: _Grammar) -> str | None:
    """The cascade's steps 1-8 on a reply that is lower-cased, its reasoning blocks dropped."""
    text = _clean(text)
    if not text:
        return None
    reply = _Reply(text, grammar)
    return _from_marker(reply) or _from_reasoning(reply) or _from_plain(reply)


def _clean(text: str) -> str:
    """Step 5 (and the rest of 0): drop fence lines and markdown."""
    text = _FENCE_LINE.sub("", text)
    text = _EMPHASIS.sub("", text).replace("|", " ")
    text = _LINE_PREFIX.sub("", text)
    text = _RULE_LINE.sub("", text)
    return _SPACE_RUN.sub(lambda m: "\n" if "\n" in m[0] else " ", text).strip()


# --- step 0: a JSON answer --------------------------------------------------------

_ANSWER_KEYS = frozenset({"answer", "verdict", "label", "is_true", "result", "final_answer"})
_KEY_GAP = re.compile(r"[\s-]+")


def _from_json(text: str, grammar: _Grammar) -> str | None:
    """The label of the last JSON object in the reply that has an answer key."""
    decoder, found = json.JSONDecoder(), None
    # what failed parses may read in all: a reply of unclosed objects stays linear
    budget = 2 * len(text) + _SHORT
    start = text.find("{")
    while start != -1 and budget > 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            budget -= exc.pos - start + 1
            start = text.find("{", start + 1)
            continue
        except RecursionError:  # nested deeper than Python parses: no answer object
            return found
        found = (_json_label(value, grammar) if isinstance(value, dict) else None) or found
        start = text.find("{", end)
    return found


def _json_label(obj: dict, grammar: _Grammar) -> str | None:
    """The label an object's answer keys agree on; _BOTH when they disagree."""
    labels = set()
    for key, value in obj.items():
        if _KEY_GAP.sub("_", key.strip()) not in _ANSWER_KEYS:
            continue
        if isinstance(value, bool):
            labels.add(TRUE if value else FALSE)
        elif isinstance(value, str):
            labels.add(_read(value, grammar))
    labels.discard(None)
    if len(labels) > 1:
        return _BOTH
    return labels.pop() if labels else None


# --- steps 1-8 ----------------------------------------------------------------


class _Tally:
    """Where a text's labels and hedges end, found in one scan, so that any span's
    verdict is a few binary searches rather than a rescan of the span. A phrase
    belongs to the span holding its last character: "not actually false" is TRUE
    even in the span after "actually"."""

    def __init__(self, text: str, grammar: _Grammar):
        self.size = len(text)
        self.ends, self.trues = [], [0]  # trues[i]: TRUE labels among the first i
        for m in grammar.phrase.finditer(text):
            if m.lastgroup != _NONE:
                self.ends.append(m.end())
                self.trues.append(self.trues[-1] + (m.lastgroup == TRUE))
        self.hedges = [m.end() for m in grammar.hedge.finditer(text)]

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
    """A cleaned reply with a tally of its labels outside questions and headers."""

    def __init__(self, text: str, grammar: _Grammar):
        self.text, self.grammar = text, grammar
        # Questions and "True/False:" headers assert nothing: blank them, keeping every position in place.
        self.plain = _HEADERS.sub(_blank, _QUESTION.sub(_blank, text))
        self.tally = _Tally(self.plain, grammar)

    @cached_property
    def ends(self) -> list[int]:
        """Sentence ends, found once and only for a reply with cues."""
        return [m.start() for m in _SENTENCE_END.finditer(self.text)]

    @cached_property
    def contrasts(self) -> list[int]:
        """Where "but" and "however" start, found once and only for a hedged conclusion."""
        return [m.start() for m in _CONTRAST.finditer(self.plain)]

    def conceded(self, start: int, end: int) -> bool:
        """The last hedge in text[start:end] is followed by a contrast before end."""
        hedges = self.tally.hedges
        i = bisect_right(hedges, end) - 1
        if i < 0 or hedges[i] <= start:
            return False
        j = bisect_right(self.contrasts, hedges[i])
        return j < len(self.contrasts) and self.contrasts[j] < end

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


def _blank(m: re.Match) -> str:
    return " " * len(m[0])


def _agreed(chunk: str, grammar: _Grammar) -> str | None:
    return _Tally(chunk, grammar).agreed()


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
    for m in reply.cues(reply.grammar.conclusion):
        # "It depends on r, so it is true for r = 4" is still a hedge; "..., but here the answer is" is not.
        start = reply.sentence_start(m.start())
        if reply.tally.hedged(start, m.start()) and not reply.conceded(start, m.start()):
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
    for m in reply.cues(reply.grammar.revision):
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
    text, grammar = reply.plain.strip(), reply.grammar
    if not text:
        return None
    return (
        _letter(text)
        or _label_line(text, grammar)
        or _opening_label(text, grammar)
        or _label_line(text.splitlines()[-1].strip(), grammar)
        or reply.tally.agreed()
    )


def _label_line(line: str, grammar: _Grammar) -> str | None:
    """A line that is only a (possibly negated) label, e.g. "It is not true."."""
    return _agreed(line, grammar) if len(line) <= _SHORT and grammar.label_line.fullmatch(line) else None


def _opening_label(text: str, grammar: _Grammar) -> str | None:
    """Step 6: "TRUE.\\n\\nExplanation: ... not ..." is answered by its opening, unless the next
    words are the other label ("Yes, and no.", "Yes, that's false.", "Yes. FALSE.")."""
    first = grammar.phrase.match(text)
    after = first and first.lastgroup != _NONE and _BARE_END.match(text, first.end())
    if not after:
        return None
    gap = _BOTH_GAP.match(text, first.end(), first.end() + _SHORT)
    second = gap and grammar.phrase.match(text, gap.end())
    clause = _CLAUSE.match(text, after.end())
    then = (second and second.lastgroup) or (clause and _label_line(clause[1], grammar))
    return None if then in (TRUE, FALSE) and then != first.lastgroup else first.lastgroup
