"""Regex extraction of dialectical structure from a model's answer (no model involved).

``extract(text)`` returns a dict with these keys:

- ``h_count``: distinct hypothesis numbers in ``**H1:`` / ``**H1 (`` / ``**H1**:``,
  ``## H1:`` / ``## H1 (`` (heading levels 1-4) and a plain ``Hypothesis 1:`` (not
  "Counter-hypothesis 1:", "Null hypothesis 1:"). A plain ``H1: ...`` / ``H5 (NEW): ...`` at
  a line's start (after a list marker) counts too once the reply names hypotheses: one of the
  forms above, or a heading of any kind about them ("PHASE 2: HYPOTHESIZE", "## Hypotheses").
- ``oscillation_table``: a pipe table (header row plus ``|---|`` delimiter row) whose first
  header cell starts with "Hypothes" or is "H" and with another header cell starting with
  "Post" or about surviving or oscillation ("Survived", "Confidence after oscillation"); or a
  pipe table with two or more body rows in the methodology's pattern, first cell ``H1``,
  ``**H1**``, ``H2 (Pay)``, ``H3: Wait`` (distinct numbers), whatever its header; or a heading
  "Oscillation Results". A hypotheses table with free-text rows is not one.
- ``stability``: "STABLE" / "UNSTABLE" / None from ``Stability: STABLE`` (bold, check-mark and
  table-cell variants); a ``Stability:`` label with no value right after it takes the first
  verdict later on its line ("Oscillation 3 rounds, stable at H4." -> STABLE; "unstable",
  "not stable" -> UNSTABLE; "stabilized" -> STABLE); the last statement wins.
- ``iteration_limit``: final stability is UNSTABLE, or "instability flag" /
  "iteration limit reached" appears.
- ``confidences`` / ``confidence``: every labelled value in order / the last one. Labels:
  [Framework|Prediction] Confidence [Level|in <X>] [(parenthetical)], any case, bold/italic
  tolerated; separators ":", "=", " - " (or en/em dash), "is", or a table-cell "|". The value
  must follow the separator: "Confidence in shipping at p = 0.087" gives nothing. Decimals in
  [0, 1], percentages, and fractions (7/10) are accepted, a leading "~" tolerated; bare numbers
  > 1, words, ranges ("0.6-0.7") and negative values give nothing. On an arithmetic line (a
  number directly followed by an operator and a number) the value after the last "=" is taken,
  or nothing if there is no "=". "Impact/effect on confidence" and "confidence interval" are
  not labels, and a "Confidence" column header is not a label for the cells below it. A
  heading or wholly bold label titled "Confidence" (``## CONFIDENCE``, ``**Confidence Level**``)
  with no value of its own takes the value that starts the next non-empty line (``**0.82**``).
- ``cruxes``: ``{"name", "types"}`` per entry of the first section headed "Cruxes"
  (optionally one leading word, e.g. "Key Cruxes", and any suffix, e.g. "Cruxes (By Type)",
  "Cruxes Identified") or "Crux Identification" (any case; a lone "Crux" is no section).
  An ATX heading outranks a wholly bold label ("**Cruxes Identified**:"); a bold label only
  counts with entries right after it. Entries named by number ("**CRUX 1: Name (empirical)**",
  "**Crux 1:** name", "### Crux 1: ...", "1. Crux 1: ...") are the entries wherever they are
  in the section, and the name drops the "Crux N:"; with no crux section (or one with no
  entries) the "Crux N" entries anywhere are the cruxes: a "### Crux 1" sub-heading is an
  entry, never a section title; a rule between entries does not end the section. Plain crux
  labels count after the bold ones: a line in capitals ("CRUX IDENTIFICATION") or a title
  ending in a colon ("CRUXES IDENTIFIED:", "Key cruxes:"), its list on the next lines or after
  the colon ("CRUXES IDENTIFIED: 1. ... 2. ..."). Last come cruxes stated in the prose,
  "Crux identified during oscillation: **name** (type)". Types: canonical ones, plurals and
  case folded; unknown labels kept as ``other:<label>``, multi-word ones only in label position
  and only when they name a type, i.e. end in a type word ("(business assumption)"); asides such
  as "(Highest priority)", "(long term)", "(Critical)" are no type and leave the name (see
  ``_types``). A ``Type: empirical`` line under an untyped entry gives its type.
- ``signals`` (in ``SIGNALS`` order), ``mode`` ("dialectic" with >= 2 signals, else "bypass")
  and ``pcc_ceiling`` (table+STABLE 0.85 > iteration limit 0.50 > table 0.70 > 0.45).

Reasoning a model writes into its answer text (``<thinking>``, ``<think>``, ``<extended_thinking>``,
``<reasoning>``) is visible process and is read like the rest: only the tags themselves are
dropped (each becomes a line break). Code never counts for any field: fenced blocks and inline
code are removed first. A "heading" is an ATX heading (``#``..``######``) or a line
that is wholly bold (``**Cruxes**``, ``**Oscillation Results:**``); heading titles are
compared without markdown, a trailing colon or a leading number ("3. Oscillation"). A plain
heading (a short line in capitals, "PHASE 2: HYPOTHESIZE") is read only for hypotheses and
cruxes, as above: it gives no signal and bounds no section.
"""

from __future__ import annotations

import re
from itertools import takewhile

from pytest_reasoning_evals.dialectic.records import Crux, Extraction

__all__ = ["extract", "CANONICAL_CRUX_TYPES", "SIGNALS"]

CANONICAL_CRUX_TYPES = ("empirical", "value", "definitional", "factual", "normative")
SIGNALS = ("## Hypotheses", "**H<n>:", "## Cruxes", "## Oscillation", "**Confidence**")

_Heads = list[tuple[int, int, str]]  # (line index, level, plain title) per heading

# Fenced code (``` or ~~~); an unclosed fence runs to the end. Code is quoted, not asserted.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# A reasoning tag, opening or closing; [^<>]* keeps the scan from one "<think" short.
_THINK_TAG = re.compile(r"</?(?:extended_thinking|thinking|think|reasoning)\b[^<>]*>", re.I)

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
# A wholly bold line stands in for a heading ("**Cruxes**", "**Oscillation Results:**").
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)\s*([^*\n]+?)\s*\1\s*:?\s*$")
_HR = re.compile(r"^ {0,3}(?:-{3,}|\*{3,}|_{3,})\s*$")
_TITLE_NUMBER = re.compile(r"^\d+[.)]\s+")

# "**H1:", "**H1 (", "**H1**:" — the bold label dialectic answers give each hypothesis.
_HYP_BOLD = re.compile(r"\*\*H(\d+)(?:\s*:|\s*\(|\*\*\s*:)")
# "## H1:" / "## H1 (" (levels 1-4) and "Hypothesis 1:" (bold tolerated before the colon). Only a
# plain "Hypothesis N" counts: a word before it ("Counter-hypothesis 1", "Null hypothesis 2",
# "Alternative hypothesis 3") names another kind of hypothesis.
_HYP_OTHER = re.compile(r"^ {0,3}#{1,4}\s+H(\d+)\s*[:(]|(?<![\w-])(?<!\w[ \t])(?i:hypothesis)\s+(\d+)[*_]*\s*:", re.M)
# A plain "H1: ..." / "H5 (NEW): ..." at a line's start (after a list marker). It counts only in a
# reply about hypotheses: elsewhere "H1:" may be an HTML heading or a note.
_HYP_PLAIN = re.compile(r"^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?H(\d+)(?:[ \t]*\([^()\n]{0,60}\))?[ \t]*:", re.M)
_HYP_STEM = re.compile(r"hypothes", re.I)
# "PHASE 2:" before a plain heading's title numbers the step; the title is what follows.
_PHASE = re.compile(r"^(?:phase|step|part|stage)[ \t]+\d+[ \t]*[:.)-][ \t]*", re.I)

# Pipe-table delimiter row ("|---|:--:|"); at least two columns, so "---" alone is a rule.
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")
_HYPOTHESES_TITLE = re.compile(r"\bhypotheses\b", re.I)
# A column of an oscillation table, beside the hypothesis column: "Post-Oscillation", "Post",
# "Survived", "Confidence after oscillation".
_OSC_COLUMN = re.compile(r"^post|surviv|oscillat", re.I)
# The methodology's own row pattern, a first cell "H1", "**H1**", "H2 (Pay)" or "H3: Wait".
_H_ROW = re.compile(r"^H(\d+)(?![\w.])")
_OSC_TITLE = re.compile(r"^oscillation\b", re.I)
_OSC_RESULTS_TITLE = re.compile(r"^oscillation\s+results\b", re.I)
# "Cruxes", "Key Cruxes", "Cruxes Identified", "Cruxes (By Type)", "Crux Identification"; not
# a lone "Crux" nor an entry's "Crux 1: ...".
_CRUX_TITLE = re.compile(r"^(?:[A-Za-z-]+\s+)?(?:cruxes|crux\s+identification)\b", re.I)
# An entry named by its number: "Crux 1: Payment", "**CRUX 2 (empirical):**", "Crux #3 - Trust".
_CRUX_NUMBER = re.compile(r"^[*_\s]*crux\s*#?\d+[*_]*\s*(?=[:.)(\u2013\u2014-]|$)", re.I)
# A plain crux label: "CRUXES IDENTIFIED:", "Key cruxes:", "PHASE 4: CRUX IDENTIFICATION"; the list
# may follow on its own line ("CRUXES IDENTIFIED: 1. ... 2. ...").
_PLAIN_CRUX = re.compile(
    r"^[ \t]{0,3}(?:(?:phase|step|part|stage)[ \t]+\d+[ \t]*[:.][ \t]*)?(?:[a-z][a-z-]*[ \t]+)?"
    r"(?:cruxes|crux[ \t]+identification)\b[^:\n]{0,40}?(?:(?P<colon>:)[ \t]*(?P<rest>.*))?$",
    re.I,
)
# The blanks before "2. ..." in an inline list; the look-behind keeps a long run of blanks linear.
_INLINE_ITEM = re.compile(r"(?<![ \t])[ \t]+(?=\d+[.)][ \t])")
# "Crux identified during oscillation: **whether ...** (empirical)": one crux stated in the prose.
_STATED_CRUX = re.compile(r"(?<![\w-])crux[ \t]+identified\b[^:\n]{0,60}:[ \t]*(?P<rest>[^\n]+)", re.I)
_NO_CRUX = re.compile(r"[*_\s]*(?:none|no|n/a)\b", re.I)  # "Crux identified: none yet"
_BOLD_SPAN = re.compile(r"(?:\*\*|__)[^*_\n]+(?:\*\*|__)(?:[ \t]*[(\[][^()\[\]\n]{1,60}[)\]])?")
# Crux labels tried, at most: each scans to the next heading, so more would cost quadratic time.
_MAX_LABELS = 16
_CRUX_NUMBER_PREFIX = re.compile(r"^crux\s*#?\d+\s*[:.)\u2013\u2014-]?\s*", re.I)

_CHECK = r"(?:[\u2713\u2714\u2705\u2611]\ufe0f?[*_\s]*)?"  # ✓ ✔ ✅ ☑ before the value
# "Stability: STABLE", "**Stability**: ✓ STABLE", "| Stability | UNSTABLE |"; not "Instability".
_STABILITY = re.compile(
    rf"(?<![\w-])stability[*_]*\s*(?::|=|\||\s[-\u2013\u2014]\s)[*_\s]*{_CHECK}(UNSTABLE|STABLE)\b",
    re.I,
)
# "Stability: Oscillation 3 rounds, stable at H4.": no value after the label, but a verdict later on
# its line ("stable", "stabilized", "unstable", "not stable"); a template's "[STABLE / UNSTABLE]" is none.
_STABILITY_LABEL = re.compile(r"(?<![\w-])stability[*_]*[ \t]*:", re.I)
_STABILITY_VERDICT = re.compile(r"\b(?:(not|never)[ \t]+(?:yet[ \t]+)?)?(unstable|stable|stabili[sz]ed)\b", re.I)
_LIMIT_PHRASE = re.compile(r"instability\s+flag|iteration\s+limit\s+reached", re.I)

# A confidence label and its separator: the number after it is the statement's value, never a
# statistic near the label. "on " before it marks an adjustment ("Impact on confidence: -0.10");
# "confidence interval" has no separator so never matches. Between label and separator may come
# "in <object>" (up to 8 words) and a parenthetical, whose content is never the value
# ("**Framework Confidence** (How well...?): **0.80**", "Confidence in shipping (p = 0.087)").
_CONF_LABEL = re.compile(
    r"(?<![\w-])(?<!on )(?:(?:framework|prediction)\s+)?confidence"
    r"(?:\s+level|\s+in(?P<object>(?:\s+[^\s:=|()]+){1,8}?))?"
    r"[*_]*(?:\s*\([^()\n]{1,120}\)[*_]*)?"
    r"\s*(?P<sep>:|=|\||\s[-\u2013\u2014]\s|\sis\s)[*_\s~\u2248]*",
    re.I,
)
# A clause word in the object starts a condition: in "Confidence in shipping at p = 0.087" the
# "=" gives the condition's statistic, not the confidence.
_CLAUSE = re.compile(r"\b(?:at|given|if|when|unless|assuming|where|with)\b", re.I)
# A bold confidence label: "**Confidence**", "**Confidence:**", "**Confidence: 0.7**".
_CONF_BOLD = re.compile(
    r"(?<!on )\*\*(?:(?:framework|prediction)\s+)?confidence(?:\s+level|\s+in\s+[^*:\n]{1,60})?"
    r"\s*(?:[:=][^*\n]{0,30})?\*\*",
    re.I,
)
# The title of a heading or bold label that holds a confidence on the next line ("## CONFIDENCE").
_CONF_TITLE = re.compile(r"(?:(?:framework|prediction|final)\s+)?confidence(?:\s+(?:level|score|assessment))?", re.I)
# A value: number, optionally a fraction ("7/10") or a percentage ("75%").
_VALUE = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(?:\s*/\s*(\d+(?:\.\d+)?)|\s*(%))?")
# An operator and a number right after the first value make the line arithmetic.
_ARITH = re.compile(r"\s*[-+\u2212\u00d7]\s*\.?\d")

_NUMBERED = re.compile(r"^ {0,3}\d+[.)]\s+(.*)")
_BULLET = re.compile(r"^ ?[-*+]\s+(.*)")
_BOLD_LED = re.compile(r"^(?:\*\*|__)\S")
# A type label: "(empirical + values)" or "[Value]"; not a markdown link's "[text](url)".
_LABEL_GROUP = re.compile(r"(?<!\])\(([^()\n]{1,60})\)|\[([^\[\]\n]{1,60})\](?!\()")
_LABEL_SPLIT = re.compile(r"\s*(?:[+/,&;]|\band\b)\s*", re.I)
# A dash qualifier is a note on the type, not a type: "inference—high uncertainty" -> "inference".
_LABEL_QUALIFIER = re.compile(r"\s*(?:[\u2013\u2014]|\s-\s).*", re.S)
_LABEL_PART = re.compile(r"[a-z][a-z-]*(?: [a-z][a-z-]*){0,2}")  # one to three words
# Words that make a bracketed phrase prose, not a type name: "(a former colleague)", "(see above)".
_PROSE_WORDS = frozenset(
    "a an the this that these those some any each every all no not"
    " i me my mine you your yours he him his she her hers it its we us our ours they them their theirs"
    " who whom whose which what one ones"
    " of in on at to for from by with without about as per than into onto over under after before"
    " above below via vs see cf eg ie etc is are was were be been if or but so still very most more".split()
)
# A label of several words names a type when its last word is one ("business assumption", "market
# risk"); "(Highest priority)" or "(long term)" is an aside on the crux, not its type.
_TYPE_WORDS = frozenset(
    "assumption belief claim premise question judgment judgement assessment estimate prediction forecast"
    " risk uncertainty disagreement tradeoff trade-off preference value fact definition norm crux".split()
)
# One-word asides on a crux's rank or state, never a type: "(Critical)", "(open)".
_ASIDE_WORDS = frozenset(
    "priority critical important urgent key main primary secondary major minor high low medium"
    " highest lowest new open resolved unresolved pending optional".split()
)
# "- Type: empirical" on its own line under an entry gives that entry's type.
_TYPE_LINE = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?[*_]*(?:crux[ \t]+)?types?[*_]*[ \t]*:[*_ \t]*(?P<label>[A-Za-z][A-Za-z +/,&-]{0,60})",
    re.I,
)
# "**Definitional:** ..." — a canonical label before the first colon (bounded: a long run of blanks
# after an unbounded lazy label cost quadratic time; every canonical compound is shorter).
_LEAD_LABEL = re.compile(r"^[*_\s]*([A-Za-z][A-Za-z +/,&-]{0,80}?)[*_\s]*:[*_]*\s*")
# Where a label sits: right after the list marker or a bold span, or before "**", ":" or a dash.
_LABEL_AFTER = re.compile(r"\s*(?:\*\*|__|:|[-\u2013\u2014]\s|$)")
# Bold markers and a leading run of markup; a trailing run is cut by _unmark (a "[*_\s]+$" here was
# retried at every position of a long inner run of blanks: quadratic).
_MARKUP = re.compile(r"\*\*|__|^[*_\s]+")
_MARKUP_RUN = re.compile(r"[*_\s]*")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[:,.])")


def _unmark(text: str) -> str:
    """The text without bold markers and without leading and trailing markup or blanks."""
    trailing = _MARKUP_RUN.match(text[::-1]).end()
    return _MARKUP.sub("", text[: len(text) - trailing])


def _visible(text: str) -> str:
    """The text without code; reasoning tags become line breaks, their content stays."""
    return _THINK_TAG.sub("\n", _INLINE_CODE.sub("", _FENCE.sub("", text)))


def _headings(lines: list[str]) -> _Heads:
    """(line index, level, plain title); wholly bold lines get level 7 (below every ATX level)."""
    found = []
    for i, line in enumerate(lines):
        atx, bold = _ATX.match(line), _BOLD_LINE.match(line)
        if atx or bold:
            level, raw = (len(atx[1]), atx[2]) if atx else (7, bold[2])
            title = _TITLE_NUMBER.sub("", _unmark(raw).rstrip(":").strip())
            found.append((i, level, title))
    return found


def _plain_title(line: str) -> str | None:
    """The title of a plain-text heading: a short line in capitals that is no list item, table row
    or markup ("PHASE 2: HYPOTHESIZE" -> "HYPOTHESIZE", "CRUX IDENTIFICATION")."""
    s = line.strip()
    if len(s) > 80 or s[:1] in "#*_|>-+" or _NUMBERED.match(line) or s != s.upper():
        return None
    return _PHASE.sub("", s.rstrip(":").strip()) if sum(c.isalpha() for c in s) >= 3 else None


def _h_count(text: str, lines: list[str], heads: _Heads) -> int:
    numbers = {int(m[1]) for m in _HYP_BOLD.finditer(text)}
    numbers |= {int(m[1] or m[2]) for m in _HYP_OTHER.finditer(text)}
    # plain "H1:" lines count once the reply names hypotheses (a counted form or a heading)
    about = numbers or any(_HYP_STEM.search(t) for _, _, t in heads)
    if about or any(_HYP_STEM.search(_plain_title(line) or "") for line in lines):
        numbers |= {int(m[1]) for m in _HYP_PLAIN.finditer(text)}
    return len(numbers)


def _cells(line: str) -> list[str]:
    return [_unmark(c).strip() for c in line.strip().strip("|").split("|")]


def _oscillation_table(lines: list[str], heads: _Heads) -> bool:
    if any(_OSC_RESULTS_TITLE.match(title) for _, _, title in heads):
        return True
    for at, (header, delimiter) in enumerate(zip(lines, lines[1:])):
        if "|" in header and _TABLE_SEP.match(delimiter):
            cells = [c.lower() for c in _cells(header)]
            first_ok = cells[0].startswith("hypothes") or cells[0] == "h"
            if first_ok and any(_OSC_COLUMN.search(c) for c in cells[1:]):
                return True
            rows = takewhile(lambda row: "|" in row, lines[at + 2 :])
            numbers = {m[1] for m in (_H_ROW.match(_cells(row)[0]) for row in rows) if m}
            if len(numbers) >= 2:
                return True
    return False


def _stability(text: str) -> str | None:
    """The last statement's verdict: a value right after the label, else one later on its line."""
    found = {m.start(): m[1].upper() for m in _STABILITY.finditer(text)}
    for m in _STABILITY_LABEL.finditer(text):
        if m.start() not in found:
            rest = text[m.end() : m.end() + 160].split("\n", 1)[0]
            rest = _STABILITY_LABEL.split(rest, 1)[0]  # up to the next label on the line
            verdict = None if rest.lstrip(" *_").startswith("[") else _STABILITY_VERDICT.search(rest)
            if verdict:
                negated = verdict[1] or verdict[2].lower() == "unstable"
                found[m.start()] = "UNSTABLE" if negated else "STABLE"
    return found[max(found)] if found else None


def _value(rest: str) -> float | None:
    """Parse the labelled text: first value, or after the last "=" on an arithmetic line."""
    rest = rest.split("|", 1)[0]
    m = _VALUE.match(rest)
    if m and _ARITH.match(rest, m.end()):
        tail = rest[m.end() :]
        m = _VALUE.match(tail.rsplit("=", 1)[1].strip(" *_~\u2248")) if "=" in tail else None
    if not m:
        return None
    denominator = 100.0 if m[3] else float(m[2] or 1)
    if not denominator:
        return None
    number = float(m[1]) / denominator
    return number if 0 <= number <= 1 else None


def _confidences(lines: list[str], heads: _Heads) -> list[float]:
    values = []
    # a heading or a wholly bold label "Confidence" alone: its value starts the next non-empty line
    labelled = {i for i, _, title in heads if _CONF_TITLE.fullmatch(title)}
    for index, line in enumerate(lines):
        if index in labelled and not _CONF_LABEL.search(line):
            following = next((later for later in lines[index + 1 :] if later.strip()), "")
            value = _value(following.strip().lstrip("*_~\u2248 ")) if not _CONF_LABEL.search(following) else None
            if value is not None:
                values.append(value)
            continue
        matches = list(_CONF_LABEL.finditer(line))
        for m, nxt in zip(matches, matches[1:] + [None]):
            if m["sep"] == "=" and m["object"] and _CLAUSE.search(m["object"]):
                continue
            value = _value(line[m.end() : nxt.start() if nxt else len(line)])
            if value is not None:
                values.append(value)
    return values


def _crux_sections(lines: list[str], heads: _Heads) -> list[tuple[list[str], int]]:
    """(body lines, level) of the candidate crux sections: the first heading titled Cruxes, or
    when there is none every wholly bold crux label in order, then every plain one ("CRUXES
    IDENTIFIED:"). A heading outranks a label, which may be a line inside another section
    ("**Cruxes Identified**:" in a synthesis)."""
    found = [(i, lvl) for i, lvl, title in heads if _CRUX_TITLE.match(title)]
    atx = [(i, lvl) for i, lvl in found if lvl <= 6]
    if atx:
        return [_section(lines, heads, *atx[0])]
    sections = [_section(lines, heads, i, lvl) for i, lvl in found[:_MAX_LABELS]]
    return sections + _plain_crux_sections(lines, heads, _MAX_LABELS - len(sections))


def _plain_crux_sections(lines: list[str], heads: _Heads, limit: int) -> list[tuple[list[str], int]]:
    """Sections under plain crux labels (after the bold ones): a line in capitals, or one ending its
    title with a colon; items after that colon ("1. ... 2. ...") start the body."""
    found = []
    heading_lines = {i for i, _, _ in heads}
    for i, line in enumerate(lines):
        m = None if i in heading_lines or len(found) >= limit else _PLAIN_CRUX.match(line)
        if m and (m["colon"] or _plain_title(line)):
            rest = m["rest"] or ""
            inline = _INLINE_ITEM.split(rest) if _NUMBERED.match(rest) else []
            body, level = _section(lines, heads, i, 7)
            found.append((inline + body, level))
    return found


def _stated_cruxes(text: str) -> list[Crux]:
    """Cruxes stated in the prose: the bold span after "Crux identified ...:" (with a label right
    after it), else the rest of the line."""
    found = []
    for m in _STATED_CRUX.finditer(text):
        if _NO_CRUX.match(m["rest"]):
            continue
        span = _BOLD_SPAN.match(m["rest"])
        found.append(_crux_entry((span[0] if span else m["rest"]).strip()))
    return found


def _section(lines: list[str], heads: _Heads, begin: int, level: int) -> tuple[list[str], int]:
    end = next((i for i, lvl, _ in heads if i > begin and lvl <= min(level, 6)), len(lines))
    # a bold "**CRUX 3: Name**" line is an entry of the section, not a heading that ends it
    heading_lines = {i for i, _, title in heads if not _CRUX_NUMBER.match(title)}
    for j in range(begin + 1, end):  # a horizontal rule followed by a heading also ends it
        if _HR.match(lines[j]):
            k = next((k for k in range(j + 1, end) if lines[k].strip()), end)
            if k in heading_lines:
                end = j
                break
    return lines[begin + 1 : end], level


def _types(label: str, canonical_only: bool = False, placed: bool = False) -> list[str] | None:
    """Normalise a type label; None if the text is not one.

    "Empirical + Values" -> ["empirical", "value"]; "empirical + team assessment" -> ["empirical",
    "other:team assessment"]; "inference—high uncertainty" -> ["other:inference"]. Parts are split
    on + / , & ; "and", after dropping a dash qualifier. A label holds a canonical type or only
    one-word parts, so other bracketed text stays prose. placed (the group sits in a label
    position, see _in_label_position): parts of one to three words also make a label, unless a
    part holds a function word (article, pronoun, preposition, "see", "not", ...), so
    "(business assumption)" is ["other:business assumption"] while "(a former colleague)",
    "(see above)" and "(as of last year)" stay prose, as does any part of four words or more.
    Beside a canonical type, unknown parts of one to three words are kept as other:<part>; longer
    ones are prose and dropped. canonical_only (a label leading the line): every part must be
    canonical. An unknown part is a type only when it names one (_names_type), so a placed
    "(Highest priority)" is [], a label naming no type (an aside, see _parse_entry).
    """
    label = _LABEL_QUALIFIER.sub("", label.strip(" *_"))
    parts = [" ".join(p.lower().split()) for p in _LABEL_SPLIT.split(label)]
    parts = [p for p in parts if p]
    types: list[str] = []
    for part in parts:
        if part.endswith("s") and part[:-1] in CANONICAL_CRUX_TYPES:  # plurals: values -> value
            part = part[:-1]
        if part in CANONICAL_CRUX_TYPES:
            types.append(part)
        elif _LABEL_PART.fullmatch(part) and _names_type(part):
            types.append(f"other:{part}")
    known = [t for t in types if not t.startswith("other:")]
    one_words = all(_LABEL_PART.fullmatch(p) and " " not in p for p in parts)
    short_names = placed and all(_LABEL_PART.fullmatch(p) and not _PROSE_WORDS & set(p.split()) for p in parts)
    if not parts or (len(known) < len(parts) if canonical_only else not (known or one_words or short_names)):
        return None
    return list(dict.fromkeys(types))  # in order, each once


def _names_type(part: str) -> bool:
    """One word that is no aside ("interpersonal", not "critical"), or a phrase whose last word is a
    type word ("business assumption", not "highest priority")."""
    last = part.rsplit(" ", 1)[-1]
    if " " not in part:
        return last not in _ASIDE_WORDS
    return last in _TYPE_WORDS or last.removesuffix("s") in _TYPE_WORDS


def _in_label_position(text: str, m: re.Match) -> bool:
    before = text[: m.start()].rstrip()
    return before.strip("*_ ") == "" or before.endswith(("**", "__")) or bool(_LABEL_AFTER.match(text, m.end()))


def _crux_entry(text: str) -> Crux:
    return _parse_entry(text)[0]


def _parse_entry(text: str) -> tuple[Crux, bool]:
    """Split an entry line into name and types (empty types when it carries no label), and say
    whether it carries a label (a type, or an aside such as "(Highest priority)").

    The label is the first bracketed label in a label position (where short multi-word names
    count too, see _types); else a canonical label before the first colon; else the first group
    holding a canonical type; else an aside in a label position, which leaves the name untyped.
    A leading "Crux N:" is not part of the name.
    """
    where = [(m, _in_label_position(text, m)) for m in _LABEL_GROUP.finditer(text)]
    groups = [(m, _types(m[1] or m[2], placed=at), at) for m, at in where]
    placed = [(m, types) for m, types, at_label in groups if at_label and types is not None]
    chosen = next(((m, t) for m, t in placed if t), None)
    lead = _LEAD_LABEL.match(text)
    lead_types = _types(lead[1], canonical_only=True) if lead else None
    m = None
    if chosen is None and lead_types:
        name, types = text[lead.end() :], lead_types
    else:
        canonical = set(CANONICAL_CRUX_TYPES)
        chosen = chosen or next(((m, t) for m, t, _ in groups if t and canonical & set(t)), None)
        m, types = chosen or next(((m, t) for m, t in placed if t == []), (None, []))
        name = text[: m.start()] + text[m.end() :] if m else text
    name = _TITLE_NUMBER.sub("", _unmark(name))
    name = _SPACE_BEFORE_PUNCT.sub("", " ".join(name.split())).strip(" :-\u2013\u2014")
    # "Crux 1: Payment" is named "Payment"; a bare "Crux 1" keeps its number as its name
    return {"name": _CRUX_NUMBER_PREFIX.sub("", name) or name, "types": types}, bool(types or m or lead_types)


def _label_block(body: list[str]) -> list[str]:
    """Under a bold label the cruxes are the block right after it: it ends at the first line
    that is not blank, indented, a list item or a labelled bold-led entry, e.g. the enclosing
    section's "**Position**: H3" (which would otherwise be a junk untyped crux)."""
    for j, line in enumerate(body):
        if line.strip() and not (
            line[:1] in " \t"
            or _NUMBERED.match(line)
            or _BULLET.match(line)
            or _BOLD_LED.match(line)
            and _parse_entry(line.strip())[1]
        ):
            return body[:j]
    return body


def _cruxes(lines: list[str], heads: _Heads) -> tuple[list[Crux], bool]:
    """Entries of the crux section and whether there is one: a crux heading, else the first
    bold or plain crux label with entries right after it or "Crux N" entries in its section (a
    label without entries is no section). Without a section, or under a heading with no entries,
    the "Crux N" entries anywhere are the cruxes ("### Crux 1: ..." sub-headings of another
    section are entries, not section titles), else the cruxes stated as "Crux identified ...:"."""
    fallback = _entries(lines, 0, numbered_only=True) or _stated_cruxes("\n".join(lines))
    for body, level in _crux_sections(lines, heads):
        if level <= 6:
            return _entries(body, level) or fallback, True
        # "Crux N" entries are unambiguous, so they need not follow the label directly
        entries = _entries(body, level, numbered_only=True) or _entries(_label_block(body), level)
        if entries:
            return entries, True
    return fallback, bool(fallback)


def _entries(body: list[str], level: int, numbered_only: bool = False) -> list[Crux]:
    """Entry kinds, by priority: sub-headings, bold-led paragraphs, numbered items, bullets. In
    the first kind holding entries named "Crux N" only those are used (numbered_only: those are
    all that is used); else the first kind with a labelled entry (only its labelled entries); if
    none is labelled, the first kind present. Sub-bullets under bold-led cruxes are thus details. A
    "Type: ..." line types the entry above it when that entry has no type.
    """
    tiers: dict[str, list[tuple[Crux, bool, bool]]] = {"heading": [], "bold": [], "numbered": [], "bullet": []}
    last = None  # the entry a "Type:" line below it belongs to
    for line in body:
        typed = _TYPE_LINE.match(line)
        if typed:
            types = _types(typed["label"], placed=True)
            if last and types and not last["types"]:
                last["types"] = types
            continue
        atx, numbered, bullet = _ATX.match(line), _NUMBERED.match(line), _BULLET.match(line)
        if atx and len(atx[1]) > level:
            kind, text = "heading", atx[2]
        elif _BOLD_LED.match(line):
            kind, text = "bold", line.strip()
        elif numbered or bullet:
            kind, text = ("numbered", numbered[1]) if numbered else ("bullet", bullet[1])
        else:
            continue
        named, last = bool(_CRUX_NUMBER.match(text)), None
        if named or not numbered_only:
            last, labelled = _parse_entry(text)
            tiers[kind].append((last, named, labelled))
    for entries in tiers.values():
        if any(named for _, named, _ in entries):
            return [e for e, named, _ in entries if named]
    if numbered_only:
        return []
    for entries in tiers.values():  # a "Type:" line below an entry labels it too
        if any(labelled or e["types"] for e, _, labelled in entries):
            return [e for e, _, labelled in entries if labelled or e["types"]]
    return next(([e for e, _, _ in entries] for entries in tiers.values() if entries), [])


def _signals(text: str, heads: _Heads, has_cruxes: bool) -> list[str]:
    present = {
        "## Hypotheses": any(_HYPOTHESES_TITLE.search(t) for _, _, t in heads),
        "**H<n>:": bool(_HYP_BOLD.search(text)),
        "## Cruxes": has_cruxes,
        "## Oscillation": any(_OSC_TITLE.match(t) for _, _, t in heads),
        "**Confidence**": bool(_CONF_BOLD.search(text)),
    }
    return [name for name in SIGNALS if present[name]]


def _pcc_ceiling(table: bool, stability: str | None, iteration_limit: bool) -> float:
    if table and stability == "STABLE":
        return 0.85
    if iteration_limit:
        return 0.50
    return 0.70 if table else 0.45


def extract(text: str) -> Extraction:
    """Analyse a response's visible answer; see the module docstring for the rules."""
    visible = _visible(text or "")
    lines = visible.splitlines()
    heads = _headings(lines)
    table = _oscillation_table(lines, heads)
    stability = _stability(visible)
    iteration_limit = stability == "UNSTABLE" or bool(_LIMIT_PHRASE.search(visible))
    confidences = _confidences(lines, heads)
    cruxes, has_cruxes = _cruxes(lines, heads)
    signals = _signals(visible, heads, has_cruxes)
    return {
        "h_count": _h_count(visible, lines, heads),
        "oscillation_table": table,
        "stability": stability,
        "iteration_limit": iteration_limit,
        "confidence": confidences[-1] if confidences else None,
        "confidences": confidences,
        "cruxes": cruxes,
        "signals": signals,
        "mode": "dialectic" if len(signals) >= 2 else "bypass",
        "pcc_ceiling": _pcc_ceiling(table, stability, iteration_limit),
    }
