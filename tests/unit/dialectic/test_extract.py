"""Tests for plugin.dialectic.extract: hand-checked real responses (read from the shared
reference folder beside this checkout, never copied), the project's own sample responses in
dialectic_samples/ beside this file, and one parametrized table per format variant."""

import json
import time
from pathlib import Path

import pytest

from pytest_reasoning_evals.dialectic.extract import SIGNALS, extract

REFERENCE = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "dialectic"
SAMPLES = Path(__file__).resolve().parent / "dialectic_samples"

KEYS = [
    "h_count",
    "oscillation_table",
    "stability",
    "iteration_limit",
    "confidence",
    "confidences",
    "cruxes",
    "signals",
    "mode",
    "pcc_ceiling",
]
EMPTY = {
    "h_count": 0,
    "oscillation_table": False,
    "stability": None,
    "iteration_limit": False,
    "confidence": None,
    "confidences": [],
    "cruxes": [],
    "signals": [],
    "mode": "bypass",
    "pcc_ceiling": 0.45,
}
ALL_SIGNALS = ["## Hypotheses", "**H<n>:", "## Cruxes", "## Oscillation", "**Confidence**"]


def cases(*rows):
    """rows of (id, *values) -> pytest.param list with ids."""
    return [pytest.param(*values, id=case_id) for case_id, *values in rows]


def crux(name, *types):
    return {"name": name, "types": list(types)}


# --- real responses (hand-checked) ------------------------------------------


@pytest.fixture(scope="module")
def reference():
    if not REFERENCE.is_dir():
        pytest.skip("../shared/reference is not beside this checkout")

    def load(name):
        return json.loads((REFERENCE / name).read_text(encoding="utf-8"))

    return load


@pytest.fixture(scope="module")
def blackmail(reference):
    return reference("adversarial__adversarial_moral_crisis_blackmail.json")


TABLE = "| Hypothesis | Initial | Post-Oscillation |\n|---|---|---|\n| H1 (Pay) | Weak | Weak |\n"


# --- cruxes -----------------------------------------------------------------


def crux_types(entry_line):
    """types of the single crux in a '## Cruxes' section holding entry_line."""
    cruxes = extract(f"## Cruxes\n\n{entry_line}\n")["cruxes"]
    assert len(cruxes) == 1
    return cruxes[0]["types"]


SYNTHESIS = "## Synthesis\n\n**Position**: H3\n\n"


def test_blackmail_treatment(blackmail):
    result = extract(blackmail["treatment"]["answer"])
    assert result["h_count"] == 4
    assert result["oscillation_table"] is True
    assert result["stability"] == "STABLE"
    assert result["iteration_limit"] is False
    assert result["confidence"] == pytest.approx(0.70)
    assert result["confidences"] == pytest.approx([0.70])
    assert [c["types"] for c in result["cruxes"]] == [
        ["empirical"],
        ["empirical", "value"],
        ["value"],
        ["value"],
    ]
    assert [c["name"] for c in result["cruxes"]] == [
        "Extortioner Behavior",
        "Marriage Survivability",
        "Timing and Pregnancy",
        "Your Moral Agency",
    ]
    assert result["pcc_ceiling"] == 0.85
    assert result["confidence"] <= result["pcc_ceiling"]
    assert result["signals"] == ALL_SIGNALS
    assert result["mode"] == "dialectic"


def test_blackmail_baseline(blackmail):
    result = extract(blackmail["baseline"]["answer"])
    assert result["h_count"] == 0
    assert result["oscillation_table"] is False
    assert result["confidence"] is None
    assert result["cruxes"] == []
    assert result["signals"] == []
    assert result["mode"] == "bypass"
    assert result["pcc_ceiling"] == 0.45


def test_sonnet_q3_full_dialectic(reference):
    result = extract(reference("sonnet__dialectica__sonnet_q3_170018.json")["answer"])
    assert result["h_count"] == 4
    assert result["oscillation_table"] is True
    # stated in the "## Mode: ... | Stability: STABLE" heading
    assert result["stability"] == "STABLE"
    # stated twice: in the executive summary and in the synthesis
    assert result["confidences"] == pytest.approx([0.70, 0.70])
    assert result["confidence"] == pytest.approx(0.70)
    assert result["cruxes"] == [
        crux("Relationship Salvageability", "other:interpersonal"),
        crux("Governance vs Personal", "other:structural"),
    ]
    assert result["pcc_ceiling"] == 0.85
    # "## Formalized Hypotheses (ULTRATHINK)" counts as a Hypotheses heading
    assert result["signals"] == ALL_SIGNALS
    assert result["mode"] == "dialectic"


def test_sonnet_q7_factual_bypass(reference):
    result = extract(reference("sonnet__dialectica__sonnet_q7_170451.json")["answer"])
    assert result == EMPTY


# --- the project's own sample responses -------------------------------------


def test_sample_full_stable_reads_thinking_ignores_code_and_non_labels():
    """Issue 27: reasoning in the answer text is visible process, so the sample's <thinking> block
    counts now (H9, its 0.95 and its UNSTABLE); code and non-labels still never count."""
    result = extract((SAMPLES / "full_stable.md").read_text(encoding="utf-8"))
    assert result == {
        # H1 (twice), H2, H3, Hypothesis 4, and H9 from the thinking block
        "h_count": 5,
        "oscillation_table": True,
        # the thinking block's UNSTABLE comes first: the last statement wins
        "stability": "STABLE",
        "iteration_limit": False,
        # the thinking block's 0.95, then the answer's 0.75; not the 0.99 in the code fence, nor
        # the confidence interval or the impact on confidence
        "confidence": 0.75,
        "confidences": [0.95, 0.75],
        "cruxes": [
            crux("Whether deploy frequency matters to customers", "empirical"),
            crux("Is team autonomy worth the coordination cost?", "empirical", "value"),
            crux('What counts as a "service"?', "definitional"),
            crux("Ownership boundaries", "other:interpersonal"),
        ],
        "signals": ALL_SIGNALS,
        "mode": "dialectic",
        "pcc_ceiling": 0.85,
    }


def test_sample_unstable_iteration_limit():
    result = extract((SAMPLES / "unstable_limit.md").read_text(encoding="utf-8"))
    assert result["h_count"] == 2
    assert result["oscillation_table"] is True  # "| H | Steelmanned | Post | Note |"
    assert result["stability"] == "UNSTABLE"
    assert result["iteration_limit"] is True
    assert result["confidences"] == pytest.approx([0.5])  # "= 0.6 - 0.1 = 0.5"
    assert result["cruxes"] == [
        crux("Price elasticity", "empirical"),
        crux("Fairness to long-time customers", "value"),
    ]
    assert result["signals"] == ["## Hypotheses", "**H<n>:", "## Cruxes", "## Oscillation"]
    assert result["mode"] == "dialectic"
    assert result["pcc_ceiling"] == 0.50  # a table without STABLE: the iteration limit wins


def test_sample_thinking_crux_identification():
    """Issue 27's real shape (written for the project): hypotheses, a "Survived" oscillation table,
    stability and a "## CRUX IDENTIFICATION" section with "**CRUX 1: ... (empirical)**" entries,
    all inside a <thinking> block of the visible reply; the confidence after it."""
    result = extract((SAMPLES / "thinking_crux_identification.md").read_text(encoding="utf-8"))
    assert result == {
        "h_count": 4,
        "oscillation_table": True,
        "stability": "STABLE",
        "iteration_limit": False,
        "confidence": 0.6,
        "confidences": [0.6],
        "cruxes": [
            crux("Whether the queue survives the winter", "empirical"),
            crux("How much risk the owner will carry", "value"),
            crux("Whether caf\u00e9s pay on time", "other:business assumption"),
        ],
        "signals": ["**H<n>:", "## Cruxes", "**Confidence**"],
        "mode": "dialectic",
        "pcc_ceiling": 0.85,
    }


# --- result shape and empty input -------------------------------------------


# reasoning tags alone are not content (issue 27: what is inside them is, see below)
@pytest.mark.parametrize("text", ["", "   \n\t", None, "<thinking>\n</thinking>", "<think></think>"])
def test_empty_result(text):
    assert extract(text) == EMPTY


def test_result_keys_and_types():
    result = extract("**H1: a**\n\n**Confidence**: 0.4")
    assert list(result) == KEYS
    assert isinstance(result["h_count"], int) and isinstance(result["confidence"], float)
    assert SIGNALS == tuple(ALL_SIGNALS)


def test_results_are_independent_objects():
    first = extract("")
    first["confidences"].append(0.1)
    first["signals"].append("x")
    assert extract("") == EMPTY


# --- thinking blocks ----------------------------------------------------------


# Issue 27 (SPEC section 9): reasoning a model writes into its answer text is visible process.
@pytest.mark.parametrize("tag", ["thinking", "extended_thinking", "think", "reasoning"])
@pytest.mark.parametrize("closed", [True, False], ids=["closed", "unclosed"])
def test_thinking_content_counts(tag, closed):
    text = (
        f"<{tag}>\n## Hypotheses\n**H1: x**\n**H2: y**\n## Oscillation\n{TABLE}\n## Cruxes\n- **a** (empirical)\n"
        f"**Confidence**: 0.9\nStability: STABLE\n" + (f"</{tag}>\n" if closed else "") + "The capital is Beirut."
    )
    assert extract(text) == {
        "h_count": 2,
        "oscillation_table": True,
        "stability": "STABLE",
        "iteration_limit": False,
        "confidence": 0.9,
        "confidences": [0.9],
        "cruxes": [crux("a", "empirical")],
        "signals": ALL_SIGNALS,
        "mode": "dialectic",
        "pcc_ceiling": 0.85,
    }


@pytest.mark.parametrize(
    "text, expected",
    cases(
        # a tag is a line break: what follows it on its line starts a line
        ("heading-after-open-tag", "<thinking>## Cruxes\n- **a** (empirical)</thinking>", ["a"]),
        ("heading-after-close-tag", "<think>draft</think>## Cruxes\n- **a** (empirical)", ["a"]),
        ("attributes", '<thinking type="draft">\n## Cruxes\n- **a** (empirical)\n</thinking>', ["a"]),
        ("orphan-close-keeps-before", "## Cruxes\n- **a** (empirical)\n</think>\nanswer", ["a"]),
        ("code-inside-still-ignored", "<thinking>\n```\n## Cruxes\n- **a** (empirical)\n```\n</thinking>", []),
    ),
)
def test_thinking_tags_are_line_breaks(text, expected):
    assert [c["name"] for c in extract(text)["cruxes"]] == expected


def test_thinking_block_with_a_bypass_answer_is_dialectic():
    """The real shape behind issue 27: hypotheses, oscillation and cruxes inside a <thinking>
    block of the visible reply, a short answer after it; it was misread as bypass."""
    text = (
        "<thinking>\nLet me work through this.\n\n**H1 (Stay):** keep the job\n**H2 (Leave):** go now\n"
        "**H3 (Negotiate):** ask for a transfer\n\n| H | Steelmanned | Post |\n|---|---|---|\n"
        "| H1 | security | weakened |\n| H2 | growth | holds |\n\nStability: STABLE\n\n"
        "**Cruxes:**\n- Whether the transfer exists (empirical)\n- How much stability matters (value)\n"
        "</thinking>\n\nAsk for the transfer first; leave if it is refused.\n\n**Confidence:** 0.7\n"
    )
    result = extract(text)
    assert result["mode"] == "dialectic"
    assert result["h_count"] == 3 and result["oscillation_table"] and result["stability"] == "STABLE"
    assert [c["types"] for c in result["cruxes"]] == [["empirical"], ["value"]]
    assert result["confidence"] == 0.7 and result["pcc_ceiling"] == 0.85


# --- hypotheses -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("bold-colon", "**H1: Pay the extortioner**", 1),
        ("bold-paren", "**H2 (Confess)**", 1),
        ("bold-label-colon-outside", "**H3**: Wait", 1),
        ("heading-h2", "## H3: Strangler fig", 1),
        ("heading-h1", "# H1: a", 1),
        ("heading-h4", "#### H7: a", 1),
        ("heading-h5-not-counted", "##### H7: a", 0),
        ("hypothesis-word", "Hypothesis 4: Do nothing", 1),
        ("hypothesis-bold", "**Hypothesis 2**: x", 1),
        ("hypothesis-lower", "hypothesis 2: x", 1),
        ("all-forms", "**H1: a**\n**H2 (b)**\n## H3: c\nHypothesis 4: d", 4),
        ("duplicates-once", "**H1: a**\n**H1: a again**\n## H1: a\nHypothesis 1: a", 1),
        ("two-digit", "**H10: a**\n**H2: b**", 2),
        ("plain-mentions-ignored", "H1 is weak; H2 (Confess) wins; see H3.", 0),
        ("table-row-plain-ignored", "| H1 (Pay) | Weak |", 0),
        ("table-row-bold-counts", "| **H1 (Pay)** | Weak |", 1),
        ("inline-code-ignored", "`**H1: a**`", 0),
        ("fence-ignored", "```\n**H1: a**\n## H2: b\n```", 0),
        ("heading-without-colon", "## H1 and H2 compared", 0),
        # a qualifying word makes it another kind of hypothesis; only plain "Hypothesis N" counts
        ("counter-hypothesis", "**Counter-hypothesis 1**: pay nothing", 0),
        ("counter-hypothesis-spaced", "Counter hypothesis 2: x", 0),
        ("alternative-hypothesis", "Alternative hypothesis 2: x", 0),
        ("null-hypothesis-bold", "**Null Hypothesis 1**: no effect", 0),
        ("counter-beside-real", "**H1: Pay**\n**Counter-hypothesis 2**: x\nHypothesis 3: y", 2),
        ("hypothesis-bullet", "- Hypothesis 3: x", 1),
        ("hypothesis-numbered", "1. Hypothesis 3: x", 1),
        ("hypothesis-heading", "### Hypothesis 2: x", 1),
        ("hypothesis-in-parens", "(Hypothesis 2: x)", 1),
        # issue 40: plain "H1:" lines count in a reply that names hypotheses, and only there
        ("plain-under-plain-heading", "HYPOTHESES\nH1: a\nH2: b", 2),
        ("plain-under-bold-phase", "**Phase 2: Hypothesize**\n\nH1: a\n- H2: b\n1. H3 (late): c", 3),
        ("plain-beside-bold", "**H1: a**\n\nH4 (NEW): d", 2),
        ("plain-without-hypotheses", "H1: Best running shoes\nH2: Why cushioning matters", 0),
        ("plain-mid-line", "HYPOTHESES\nWe weigh H1: a against H2: b.", 0),
        ("plain-heading-in-prose-case", "Phase 2: hypothesize\nH1: a\nH2: b", 0),
    ),
)
def test_h_count(text, expected):
    assert extract(text)["h_count"] == expected


# --- oscillation table ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("plain-header", TABLE, True),
        (
            "bold-header-and-rows",
            "| **Hypothesis** | **Initial** | **Post-Oscillation** |\n|:--|:-:|--:|\n"
            "| **H1 (Pay)** | Moderate | **Weakened** |",
            True,
        ),
        (
            "h-header-post",
            "| H | Steelmanned | Post | Note |\n|---|---|---|---|\n| H1 | a | b | c |",
            True,
        ),
        ("lower-case-post", "| hypothesis | post-oscillation |\n|-|-|\n| H1 | x |", True),
        ("hypotheses-plural", "| Hypotheses | Post |\n|---|---|\n| H1 | x |", True),
        (
            "no-outer-pipes",
            "Hypothesis | Initial | Post-Oscillation\n--- | --- | ---\nH1 | a | b",
            True,
        ),
        ("header-only", "| Hypothesis | Post-Oscillation |\n|---|---|", True),
        (
            "no-post-column",
            "| Hypothesis | Initial | Final |\n|---|---|---|\n| H1 | a | b |",
            False,
        ),
        (
            "first-cell-other",
            "| Option | Initial | Post-Oscillation |\n|---|---|---|\n| A | a | b |",
            False,
        ),
        (
            "post-in-first-cell-only",
            "| Hypothesis (post) | Initial |\n|---|---|\n| H1 | a |",
            False,
        ),
        ("no-delimiter-row", "| Hypothesis | Initial | Post-Oscillation |\n| H1 | a | b |", False),
        ("in-code-fence", f"```\n{TABLE}```", False),
        ("heading-results", "## Oscillation Results\nH1 weakened.", True),
        ("heading-results-h4-lower", "#### oscillation results", True),
        ("heading-results-bold", "**Oscillation Results**", True),
        ("heading-results-bold-colon", "**Oscillation Results:**", True),
        ("heading-results-bold-in-atx", "### **OSCILLATION RESULTS**", True),
        ("heading-results-numbered", "## 4. Oscillation Results", True),
        ("heading-oscillation-only", "## Oscillation\nH1 weakened.", False),
        # issue 27: a column about surviving or naming oscillation beside the hypothesis column
        (
            "survived-column",
            "| Hypothesis | Survived | Confidence after oscillation |\n|---|---|---|\n| Pay | No | 0.1 |",
            True,
        ),
        ("survives-column", "| H | Survives? |\n|---|---|\n| Pay | no |", True),
        ("after-oscillation-column", "| Hypothesis | After oscillation |\n|---|---|\n| Pay | weak |", True),
        ("oscillation-result-column", "| **Hypotheses** | **Oscillation result** |\n|---|---|", True),
        ("survived-without-hypothesis-column", "| Option | Survived |\n|---|---|\n| Pay | no |", False),
        # issue 27: two or more rows in the methodology's pattern, first cell H1..H4
        ("h-rows-bold", "| Hypothesis | Verdict |\n|---|---|\n| **H1** | weak |\n| **H2** | holds |", True),
        ("h-rows-named", "| Option | Verdict |\n|---|---|\n| H1 (Pay) | weak |\n| **H2 (Wait)** | holds |", True),
        ("h-rows-colon", "| | Before | After |\n|---|---|---|\n| H1: Pay | a | b |\n| H3: Wait | c | d |", True),
        ("h-rows-no-outer-pipes", "Hypothesis | Verdict\n--- | ---\nH1 | weak\nH2 | holds", True),
        ("one-h-row", "| Hypothesis | Verdict |\n|---|---|\n| H1 | weak |\n| Other | x |", False),
        ("same-h-row-twice", "| Hypothesis | Note |\n|---|---|\n| H1 | a |\n| H1 | b |", False),
        (
            "free-text-hypotheses-list",
            "| Hypothesis | Description |\n|---|---|\n| Pay | ends it |\n| Wait | buys time |",
            False,
        ),
        ("h-like-words", "| Strain | Risk |\n|---|---|\n| H1N1 | high |\n| H5N1 | high |", False),
        ("h-rows-after-the-table", "| A | B |\n|---|---|\n| x | y |\n\n| H1 | a |\n| H2 | b |", False),
        ("h-rows-without-delimiter", "| H1 | weak |\n| H2 | holds |", False),
        ("results-in-prose", "The oscillation results were mixed.", False),
    ),
)
def test_oscillation_table(text, expected):
    assert extract(text)["oscillation_table"] is expected


# --- stability and the iteration limit --------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("plain", "Stability: STABLE", "STABLE"),
        ("bold-label", "**Stability**: STABLE", "STABLE"),
        ("bold-line", "**Stability: STABLE**", "STABLE"),
        ("bold-value", "Stability: **STABLE**", "STABLE"),
        ("check-before", "Stability: \u2713 STABLE", "STABLE"),
        ("green-check-before", "Stability: \u2705 STABLE", "STABLE"),
        ("check-after", "Stability: STABLE \u2713", "STABLE"),
        ("heavy-check-emoji-in-bold", "Stability: **\u2714\ufe0f STABLE**", "STABLE"),
        ("dash-separator", "Stability - UNSTABLE", "UNSTABLE"),
        ("list-item", "- Stability: **UNSTABLE**", "UNSTABLE"),
        ("lower-label", "stability: STABLE", "STABLE"),
        ("upper-label", "STABILITY: UNSTABLE", "UNSTABLE"),
        ("lower-value", "Stability: stable", "STABLE"),
        (
            "inside-heading-with-pipes",
            "## Mode: ULTRATHINK | Iterations: 1 | Stability: STABLE",
            "STABLE",
        ),
        ("table-cell", "| Stability | UNSTABLE |", "UNSTABLE"),
        ("last-wins", "Stability: UNSTABLE\n\nafter round 2\n\nStability: STABLE", "STABLE"),
        ("last-wins-reverse", "Stability: STABLE\nStability: UNSTABLE", "UNSTABLE"),
        ("instability-label-ignored", "Instability: STABLE", None),
        ("word-value", "Stability: high", None),
        ("unlabelled", "The hypothesis space is STABLE.", None),
        ("in-code", "`Stability: STABLE`", None),
        # issue 40: no value right after the label, a verdict later on its line
        ("prose-stable-at", "Stability: Oscillation 3 rounds, stable at H4.", "STABLE"),
        ("prose-stabilized", "**Stability:** after round 2 the ranking stabilized", "STABLE"),
        ("prose-not-stable", "Stability: two rounds, not yet stable", "UNSTABLE"),
        ("prose-unstable", "- Stability: H2 and H3 unstable after 3 rounds", "UNSTABLE"),
        ("prose-no-verdict", "Stability: see the table below", None),
        ("prose-next-line-not-read", "Stability: pending\nThe stable option is H2.", None),
        ("prose-template-ignored", "- Stability: [STABLE / UNSTABLE]", None),
        ("prose-failed-to-stabilize", "Stability: failed to stabilise", None),
        ("prose-two-on-a-line", "Stability: not stable in round 1; Stability: stable by round 3", "STABLE"),
        ("prose-then-value", "Stability: stable at H4\n\nStability: UNSTABLE", "UNSTABLE"),
        ("value-then-prose", "Stability: UNSTABLE\n\nStability: round 3, stable at H4", "STABLE"),
    ),
)
def test_stability(text, expected):
    assert extract(text)["stability"] == expected


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("unstable", "Stability: UNSTABLE", True),
        ("phrase-limit", "Iteration limit reached after 3 passes.", True),
        ("phrase-limit-upper", "ITERATION LIMIT REACHED", True),
        ("phrase-flag", "Raising the instability flag.", True),
        ("phrase-flag-mixed", "**Instability Flag**: set", True),
        ("stable", "Stability: STABLE", False),
        ("unstable-then-stable", "Stability: UNSTABLE\nStability: STABLE", False),
        ("not-reached", "The iteration limit was not reached.", False),
        ("nothing", "Plain answer.", False),
    ),
)
def test_iteration_limit(text, expected):
    assert extract(text)["iteration_limit"] is expected


# --- confidence -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("plain", "Confidence: 0.7", 0.7),
        ("leading-dot", "Confidence: .70", 0.70),
        ("bold-label", "**Confidence**: 0.70", 0.70),
        ("bold-line", "**Confidence: 0.70**", 0.70),
        ("bold-value", "Confidence: **0.70**", 0.70),
        ("bold-label-colon-inside", "**Confidence:** 0.65", 0.65),
        ("italic-label", "*Confidence*: 0.6", 0.6),
        ("level-percent", "**Confidence Level:** 70%", 0.70),
        ("percent", "**Confidence:** 75%", 0.75),
        ("percent-space", "Confidence: 80 %", 0.80),
        ("framework", "Framework Confidence: 0.55", 0.55),
        ("prediction", "Prediction Confidence = 0.4", 0.4),
        ("in-x", "Confidence in H4: 0.75", 0.75),
        ("in-x-bold", "**Confidence in H4**: 0.75", 0.75),
        ("in-bold-x", "Confidence in **H4**: 0.75", 0.75),
        ("equals", "Confidence = 0.6", 0.6),
        ("dash", "Confidence - 0.6", 0.6),
        ("is", "My confidence is 0.65", 0.65),
        ("is-percent", "Confidence is 65%", 0.65),
        ("lower-label", "confidence: 0.3", 0.3),
        ("trailing-text", "**Confidence**: 0.70 \u2014 full oscillation, one crux open", 0.70),
        ("trailing-parenthetical", "Confidence: 0.75 (= 0.85 - 0.10)", 0.75),
        ("approx", "Confidence: ~0.6", 0.6),
        ("zero", "Confidence: 0", 0.0),
        ("one", "Confidence: 1.0", 1.0),
        ("arith-minus", "Confidence: 0.85 - 0.10 (unresolved crux) = 0.75", 0.75),
        ("arith-plus", "Confidence = 0.6 + 0.1 = 0.70", 0.70),
        ("arith-percent", "Confidence: 85% - 10% = 75%", 0.75),
        ("arith-bold-result", "**Confidence**: 0.85 \u2212 0.15 = **0.70**", 0.70),
        ("arith-no-result", "Confidence: 0.85 - 0.10", None),
        ("range", "Confidence: 0.6-0.7", None),
        ("fraction", "Confidence: 7/10", 0.7),
        ("fraction-100", "Confidence: 65/100", 0.65),
        ("fraction-over-one", "Confidence: 12/10", None),
        ("bare-over-one", "Confidence: 85", None),
        ("decimal-over-one", "Confidence: 1.5", None),
        ("percent-over-100", "Confidence: 150%", None),
        ("negative", "Confidence: -0.2", None),
        ("word", "Confidence: High", None),
        ("bold-word", "**Confidence**: Moderate (leaning H4)", None),
        ("interval", "The 95% confidence interval is 0.6 to 0.8.", None),
        ("interval-labelled", "Confidence interval: 0.6", None),
        ("impact-on", "Impact on confidence: -0.10", None),
        ("impact-on-positive", "Impact on confidence: 0.10", None),
        ("effect-on", "- Effect on confidence: 0.05", None),
        ("self-confidence", "Self-confidence: 0.9", None),
        ("unlabelled-number", "The ceiling is 0.85.", None),
        ("table-cell", "| Metric | Value |\n|---|---|\n| Confidence | 0.70 |", 0.70),
        ("table-cell-bold-percent", "| **Confidence** | 70% |", 0.70),
        ("table-cell-in-x", "| Confidence in H2 | **0.4** |", 0.4),
        (
            "table-column-header-ignored",
            "| Hypothesis | Confidence |\n|---|---|\n| H1 | 0.7 |",
            None,
        ),
        ("fence", "```\nConfidence: 0.9\n```", None),
        ("fence-language", "```yaml\nconfidence: 0.9\n```\nafter", None),
        ("fence-unclosed", "```\nConfidence: 0.9", None),
        ("tilde-fence", "~~~\nConfidence: 0.9\n~~~", None),
        ("inline-code", "Write `Confidence: 0.9` on its own line.", None),
        # issue 27: reasoning in the answer text is read; its tag is a line break
        ("think-block-counts", "Confidence: 0.4<think>Confidence: 0.9</think>", 0.9),
        # a statistic near the label is not its value
        ("statistic-in-object", "Confidence in shipping at p = 0.087 should be ~70%+", None),
        ("statistic-in-parenthetical", "Confidence in shipping (p = 0.087) should be high", None),
        ("statistic-given", "Confidence in H2 given r = 0.4 is moderate", None),
        ("statistic-after-is-word", "Confidence is high at p = 0.03", None),
        ("in-x-equals", "Confidence in H1 = 0.6", 0.6),
        ("in-x-of", "Confidence in the success of H3: 0.55", 0.55),
        ("in-x-clause-colon", "Confidence in the plan at this point: 0.6", 0.6),
        ("in-x-clause-is", "Confidence in H2 given the data is 0.65", 0.65),
        # a parenthetical between the label and its separator
        (
            "parenthetical-bold",
            "**Framework Confidence** (How well does the framework fit the evidence?): **0.80**",
            0.80,
        ),
        ("parenthetical-plain", "Confidence (after oscillation): 0.65", 0.65),
        ("parenthetical-equals", "Prediction Confidence (12 months) = 55%", 0.55),
        ("parenthetical-in-x", "Confidence in H4 (post-oscillation): 0.7", 0.7),
        ("parenthetical-no-separator", "Confidence (0.7 in the draft) remains high", None),
    ),
)
def test_confidence(text, expected):
    result = extract(text)
    if expected is None:
        assert result["confidence"] is None
        assert result["confidences"] == []
    else:
        assert result["confidence"] == pytest.approx(expected)


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("in-order-last-wins", "Confidence: 0.5\n...\n**Confidence**: 0.70", [0.5, 0.70]),
        ("two-on-one-line", "Confidence: 0.5 | Prediction Confidence: 0.6", [0.5, 0.6]),
        ("same-value-twice", "**Confidence**: 0.70\n\n**Confidence**: 0.70", [0.70, 0.70]),
        (
            "skips-non-values",
            "Confidence: High\nConfidence: 0.3\nImpact on confidence: -0.1",
            [0.3],
        ),
        (
            "mixed-forms",
            "Confidence in H1: 40%\n| Confidence | 0.5 |\nConfidence = 0.4 + 0.2 = 0.6",
            [0.4, 0.5, 0.6],
        ),
    ),
)
def test_confidences_list(text, expected):
    result = extract(text)
    assert result["confidences"] == pytest.approx(expected)
    assert result["confidence"] == pytest.approx(expected[-1])


@pytest.mark.parametrize(
    "line, expected",
    cases(
        ("paren", "1. **Whether the extortioner will return** (empirical)", ["empirical"]),
        ("bracket-lead", "- [Value] Is honesty owed?", ["value"]),
        ("bracket-trailing", "- **Fairness** [values]", ["value"]),
        (
            "inside-bold",
            "**Crux 2 (empirical + values):** Will she forgive?",
            ["empirical", "value"],
        ),
        ("plus", "- X (empirical + values)", ["empirical", "value"]),
        ("slash", "- X (Empirical/Normative)", ["empirical", "normative"]),
        ("comma", "- X (factual, definitional)", ["factual", "definitional"]),
        ("ampersand", "- X (empirical & value)", ["empirical", "value"]),
        ("and", "- X (empirical and values)", ["empirical", "value"]),
        ("plural", "- X (values)", ["value"]),
        ("upper", "- X (EMPIRICAL)", ["empirical"]),
        ("title-case", "- X (Empirical)", ["empirical"]),
        ("plural-upper", "- X [VALUES]", ["value"]),
        ("duplicate-parts-once", "- X (value + values)", ["value"]),
        ("unknown", "**Relationship Salvageability** (interpersonal)", ["other:interpersonal"]),
        ("unknown-upper", "- X (STRUCTURAL)", ["other:structural"]),
        ("unknown-in-compound", "- X (empirical + strategic)", ["empirical", "other:strategic"]),
        ("lead-label", "- **Definitional:** What counts as lying?", ["definitional"]),
        ("lead-label-compound", "- Empirical + Value: Does it recur?", ["empirical", "value"]),
        (
            "canonical-mid-line",
            "- Whether the (empirical) record supports H1 matters",
            ["empirical"],
        ),
        ("prose-parenthetical-skipped", "- **X (a former colleague)** (empirical)", ["empirical"]),
        ("heading-entry", "### Crux 1: Payment ends it (empirical)", ["empirical"]),
        # multi-word parts beside a canonical type are kept as other:<part>
        (
            "compound-multi-word-unknown",
            "1. **Will the team deliver?** (empirical + team assessment)",
            ["empirical", "other:team assessment"],
        ),
        ("semicolon", "- X (value; strategic)", ["value", "other:strategic"]),
        ("prose-part-dropped", "- X (empirical, measurable with a pilot study)", ["empirical"]),
        # a dash qualifier is a note on the label, not part of it
        (
            "dash-qualifier-unknown",
            "- **Is the risk acceptable?** [inference\u2014high uncertainty]",
            ["other:inference"],
        ),
        ("en-dash-qualifier", "- X (empirical \u2013 contested)", ["empirical"]),
        ("spaced-hyphen-qualifier", "- X (values - contested)", ["value"]),
        ("hyphenated-word-kept", "- X (value-laden)", ["other:value-laden"]),
        # issue 27: an unknown multi-word type is a label in label position, if it reads as a name
        ("multi-word-unknown", "- **Will the cafés pay?** (business assumption)", ["other:business assumption"]),
        ("multi-word-inside-bold", "**CRUX 1: Will they pay (business assumption)**", ["other:business assumption"]),
        ("multi-word-bracket", "- Will they pay [market risk]", ["other:market risk"]),
        ("multi-word-three", "1. **Pay?** (risk tolerance judgment)", ["other:risk tolerance judgment"]),
        ("multi-word-before-colon", "- **Pay** (business assumption): will they?", ["other:business assumption"]),
        ("multi-word-mid-sentence", "- Whether the (business assumption) holds matters", []),
        ("multi-word-article", "- **Trust** (the main one)", []),
        ("multi-word-pronoun", "- **Trust** (her decision)", []),
        ("multi-word-see-above", "- **Trust** (see above)", []),
        ("multi-word-preposition", "- **Trust** (as of last year)", []),
        ("multi-word-four-words", "- **Trust** (long term family trust issue)", []),
        ("multi-word-digits", "- **Trust** (2 weeks)", []),
        (
            "qualifier-after-compound",
            "- X (empirical + values \u2014 both open)",
            ["empirical", "value"],
        ),
        # issue 40: a parenthetical is a type only when it names one
        ("aside-priority", "**CRUX 1: Demand** (Highest priority)", []),
        ("aside-long-term", "- **Trust** (long term)", []),
        ("aside-one-word", "- **Trust** (Critical)", []),
        ("aside-beside-canonical", "- **Trust** (empirical, high priority)", ["empirical"]),
        ("type-word-claim", "- **Trust** (strategic claim)", ["other:strategic claim"]),
        ("type-word-plural", "- **Trust** (core values)", ["other:core values"]),
        ("type-word-question", "- **Trust** (open question)", ["other:open question"]),
        ("typed-after-aside", "- **Trust** (Critical) (value)", ["value"]),
        ("type-line", "**Trust** (Highest priority)\n- Type: empirical", ["empirical"]),
        ("type-line-bold", "**Trust**\n**Crux type:** Values", ["value"]),
        ("type-line-with-note", "**Trust**\n- Type: Normative (what is owed)", ["normative"]),
        ("type-line-unknown", "**Trust**\n- Type: business assumption", ["other:business assumption"]),
        ("type-line-prose", "**Trust**\n- Type: see above", []),
        ("type-line-does-not-replace", "**Trust** (value)\n- Type: empirical", ["value"]),
    ),
)
def test_crux_types(line, expected):
    assert crux_types(line) == expected


@pytest.mark.parametrize(
    "line, expected",
    cases(
        (
            "numbered-bold",
            "1. **Whether the extortioner will return** (empirical)",
            "Whether the extortioner will return",
        ),
        ("bold-numbered", "**1. Extortioner Behavior** (empirical)", "Extortioner Behavior"),
        ("bracket-lead", "- [Value] Is honesty owed?", "Is honesty owed?"),
        # issue 27: a leading "Crux N:" is the entry's number, not part of its name
        ("inside-bold", "**Crux 2 (empirical + values):** Will she forgive?", "Will she forgive?"),
        ("lead-label", "- **Definitional:** What counts as lying?", "What counts as lying?"),
        ("heading", "### Crux 1: Payment ends it (empirical)", "Payment ends it"),
        ("star-bullet", "* __Fairness__ (values)", "Fairness"),
        (
            "prose-parenthetical-kept",
            "- **X (a former colleague)** (empirical)",
            "X (a former colleague)",
        ),
        (
            "compound-label-removed",
            "1. **Will the team deliver?** (empirical + team assessment)",
            "Will the team deliver?",
        ),
        (
            "qualified-label-removed",
            "- **Is the risk acceptable?** [inference\u2014high uncertainty]",
            "Is the risk acceptable?",
        ),
        # issue 40: an aside where a label stands is dropped from the name, as a label is
        ("aside-removed", "**CRUX 1: Demand** (Highest priority)", "Demand"),
        ("aside-inside-bold-removed", "- **Trust (long term)**", "Trust"),
    ),
)
def test_crux_names(line, expected):
    cruxes = extract(f"## Cruxes\n\n{line}\n")["cruxes"]
    assert [c["name"] for c in cruxes] == [expected]


@pytest.mark.parametrize(
    "heading",
    [
        "## Cruxes",
        "# Cruxes",
        "#### Cruxes",
        "## Key Cruxes",
        "### Cruxes (By Type)",
        "## Unresolved Cruxes",
        "**Cruxes**",
        "**Key Cruxes:**",
        "## 5. Cruxes",
        "## CRUXES",
    ],
)
def test_crux_headings(heading):
    result = extract(f"{heading}\n\n- **Payment** (empirical)\n- **Honesty** (values)\n")
    assert result["cruxes"] == [crux("Payment", "empirical"), crux("Honesty", "value")]
    assert "## Cruxes" in result["signals"]


@pytest.mark.parametrize(
    "text",
    [
        "## Crux\n- **a** (empirical)",
        "The cruxes are (empirical) ones.",
        "## Inversion\n- **a** (empirical)",
        "```\n## Cruxes\n- **a** (empirical)\n```",
    ],
)
def test_no_crux_section(text):
    result = extract(text)
    assert result["cruxes"] == []
    assert "## Cruxes" not in result["signals"]


@pytest.mark.parametrize(
    "text, expected",
    cases(
        (
            "same-level-ends",
            "## Cruxes\n- **a** (empirical)\n## Synthesis\n- **b** (values)",
            ["a"],
        ),
        ("higher-level-ends", "### Cruxes\n- **a** (empirical)\n## Next\n- **b** (values)", ["a"]),
        (
            "sub-headings-are-entries",
            "## Cruxes\n### a (empirical)\ntext\n### b (values)\n## End\n### c (value)",
            ["a", "b"],
        ),
        (
            "rule-then-heading-ends",
            "## Cruxes\n- **a** (empirical)\n\n---\n\n### Later\n- **b** (values)",
            ["a"],
        ),
        (
            "rule-then-bold-heading-ends",
            "## Cruxes\n- **a** (empirical)\n---\n**Notes**\n- **b** (values)",
            ["a"],
        ),
        (
            "rule-then-prose-continues",
            "## Cruxes\n- **a** (empirical)\n---\nmore\n- **b** (values)",
            ["a", "b"],
        ),
        (
            "bold-heading-ends-at-atx",
            "**Cruxes**\n- **a** (empirical)\n#### Next\n- **b** (values)",
            ["a"],
        ),
        ("end-of-text", "## Cruxes\n- **a** (empirical)\n\n- **b** (values)", ["a", "b"]),
        (
            "first-section-only",
            "## Cruxes\n- **a** (empirical)\n## Key Cruxes\n- **b** (values)",
            ["a"],
        ),
    ),
)
def test_crux_section_bounds(text, expected):
    assert [c["name"] for c in extract(text)["cruxes"]] == expected


@pytest.mark.parametrize(
    "body, expected",
    cases(
        (
            "bold-led-with-detail-bullets",
            "**1. Payment** (empirical)\n- H1: ends it\n- H2/H3: never ends\n\n**2. Trust** (values)\n- Impact: high",
            [crux("Payment", "empirical"), crux("Trust", "value")],
        ),
        (
            "numbered-with-indented-bullets",
            "1. **Payment** (empirical)\n   - H1 says yes (value)\n2. **Trust** (values)",
            [crux("Payment", "empirical"), crux("Trust", "value")],
        ),
        (
            "bold-intro-then-typed-list",
            "**Three cruxes remain:**\n\n- Payment (empirical)\n- Trust [value]\n- Timing (normative)",
            [crux("Payment", "empirical"), crux("Trust", "value"), crux("Timing", "normative")],
        ),
        (
            "bold-details-under-bold-cruxes",
            "**Payment** (empirical)\n**Resolution**: documented\n**Trust** (values)\n**Impact**: high",
            [crux("Payment", "empirical"), crux("Trust", "value")],
        ),
        (
            "untyped-list",
            "- Whether payment ends it\n- Whether she forgives",
            [crux("Whether payment ends it"), crux("Whether she forgives")],
        ),
        ("prose-only", "Nothing here is a crux.", []),
    ),
)
def test_crux_entry_selection(body, expected):
    assert extract(f"## Cruxes\n\n{body}\n\n## Synthesis\n\nDone.")["cruxes"] == expected


@pytest.mark.parametrize(
    "text, expected, signal",
    cases(
        (
            "heading-after-inline-label-wins",
            SYNTHESIS + "**Cruxes Identified**:\n\n**Confidence**: 0.7\n\n"
            "## Cruxes\n\n- **Demand** (empirical)\n- **Risk** (values)\n",
            [crux("Demand", "empirical"), crux("Risk", "value")],
            True,
        ),
        (
            "heading-wins-over-typed-label",
            "**Key Cruxes:**\n- **a** (empirical)\n\n## Cruxes\n- **b** (values)\n",
            [crux("b", "value")],
            True,
        ),
        (
            "empty-label-no-junk",
            SYNTHESIS + "**Cruxes Identified**:\n\n**Next step**: ask her\n- then decide\n",
            [],
            False,
        ),
        (
            "label-prose-after-no-junk",
            SYNTHESIS + "**Cruxes Identified**:\nThe two above remain open.\n\n1. Call her\n",
            [],
            False,
        ),
        (
            "label-list-ends-at-next-label",
            SYNTHESIS + "**Cruxes Identified**:\n- whether demand holds\n- whether risk is ok\n\n"
            "**Next steps**:\n1. Call her\n2. Decide\n",
            [crux("whether demand holds"), crux("whether risk is ok")],
            True,
        ),
        (
            "label-typed-bold-entries-with-details",
            "**Key Cruxes:**\n\n**Payment** (empirical)\n- H1: ends it\n\n"
            "**Trust** (values)\n- detail\n\n**Position**: H3\n",
            [crux("Payment", "empirical"), crux("Trust", "value")],
            True,
        ),
        (
            "second-label-with-entries",
            "**Cruxes**:\nSee below.\n\n**Key Cruxes:**\n- **a** (empirical)\n",
            [crux("a", "empirical")],
            True,
        ),
    ),
)
def test_crux_heading_beats_inline_label(text, expected, signal):
    result = extract(text)
    assert result["cruxes"] == expected
    assert ("## Cruxes" in result["signals"]) is signal


# --- issue 27: crux identification sections and "Crux N" entries ------------


@pytest.mark.parametrize(
    "heading",
    [
        "## CRUX IDENTIFICATION",
        "## Crux Identification",
        "### 4. Crux identification",
        "**Crux Identification**",
        "## Cruxes Identified",
        "## Key Cruxes",
        "## Cruxes",
    ],
)
@pytest.mark.parametrize(
    "entries",
    [
        pytest.param(
            "**CRUX 1: Payment ends it (empirical)**\nWhy it matters.\n- H1 says yes (value)\n\n"
            "**CRUX 2: Honesty is owed (values)**\nNo data settles it.",
            id="bold-typed",
        ),
        pytest.param(
            "**Crux 1 (empirical):** Payment ends it\n**Crux 2 (value):** Honesty is owed", id="bold-label-typed"
        ),
        pytest.param(
            "### Crux 1: Payment ends it (empirical)\ntext\n### Crux 2: Honesty is owed (value)", id="sub-headings"
        ),
        pytest.param(
            "1. **Crux 1: Payment ends it** (empirical)\n2. **Crux 2: Honesty is owed** [value]", id="numbered"
        ),
        pytest.param("- Crux 1: Payment ends it (empirical)\n- Crux 2 - Honesty is owed (value)", id="bulleted"),
    ],
)
def test_crux_identification_sections(heading, entries):
    result = extract(f"{heading}\n\n{entries}\n\n## Synthesis\n\nDone.")
    assert result["cruxes"] == [crux("Payment ends it", "empirical"), crux("Honesty is owed", "value")]
    assert "## Cruxes" in result["signals"]


@pytest.mark.parametrize(
    "text, expected, signal",
    cases(
        (
            "untyped-bold-label-entries",
            "## CRUX IDENTIFICATION\n\n**Crux 1:** Whether payment ends it\n- detail\n\n**Crux 2:** Whether she forgives",
            [crux("Whether payment ends it"), crux("Whether she forgives")],
            True,
        ),
        (
            # "Crux N" entries outrank a typed detail line under them
            "named-entries-outrank-typed-details",
            "## Cruxes\n\n### Crux 1: Payment\n**Empirical:** the record shows\n### Crux 2: Trust\n",
            [crux("Payment"), crux("Trust")],
            True,
        ),
        (
            # no crux section: "Crux N" sub-headings of another section are the entries
            "sub-headings-without-section",
            "## Synthesis\n\n### Crux 1: Payment ends it (empirical)\ntext\n### Crux 2: Trust (value)\n",
            [crux("Payment ends it", "empirical"), crux("Trust", "value")],
            True,
        ),
        (
            "bold-entries-without-section",
            "Reasoning first.\n\n**Crux 1:** Payment ends it\n**Crux 2 (value):** Trust\n",
            [crux("Payment ends it"), crux("Trust", "value")],
            True,
        ),
        (
            # a section heading with no entries of its own, "Crux N" headings after it
            "empty-section-then-crux-headings",
            "## CRUX IDENTIFICATION\n## Crux 1: Payment (empirical)\n## Crux 2: Trust (values)\n",
            [crux("Payment", "empirical"), crux("Trust", "value")],
            True,
        ),
        ("bare-number-keeps-name", "## Cruxes\n\n**Crux 1**\n", [crux("Crux 1")], True),
        ("crux-in-prose", "Crux 1 is whether payment ends it.\nThe crux 2 of it (empirical).", [], False),
        ("lone-crux-heading-still-none", "## Crux\n\nPayment (empirical)\n", [], False),
    ),
)
def test_crux_number_entries(text, expected, signal):
    result = extract(text)
    assert result["cruxes"] == expected
    assert ("## Cruxes" in result["signals"]) is signal


# --- signals and mode -------------------------------------------------------


@pytest.mark.parametrize(
    "text, signal",
    cases(
        ("hypotheses-heading", "## Hypotheses\ntext", "## Hypotheses"),
        ("hypotheses-heading-h4", "#### Competing hypotheses", "## Hypotheses"),
        ("hypotheses-bold-heading", "**Hypotheses**", "## Hypotheses"),
        ("bold-h-colon", "**H1: Pay**", "**H<n>:"),
        ("bold-h-paren", "**H2 (Confess)**", "**H<n>:"),
        ("cruxes-heading", "## Cruxes\n- Payment", "## Cruxes"),
        ("oscillation-heading", "## Oscillation\ntext", "## Oscillation"),
        ("oscillation-results-heading", "### Oscillation Results", "## Oscillation"),
        ("bold-confidence", "**Confidence**: High", "**Confidence**"),
        ("bold-confidence-colon-inside", "**Confidence:** 0.7", "**Confidence**"),
        ("bold-confidence-with-value", "**Confidence: 0.70**", "**Confidence**"),
        ("bold-confidence-level", "**Confidence Level:** 70%", "**Confidence**"),
    ),
)
def test_single_signal_is_bypass(text, signal):
    result = extract(text)
    assert result["signals"] == [signal]
    assert result["mode"] == "bypass"


@pytest.mark.parametrize(
    "text",
    [
        "Hypothesis 1: a",
        "## H1: a",
        "Confidence: 0.7",
        "The hypotheses oscillate.",
        "## Oscillating views",
        "Impact on **confidence**",
        "`**Confidence**: 0.7`",
    ],
)
def test_non_signals(text):
    assert extract(text)["signals"] == []


@pytest.mark.parametrize(
    "text, expected_signals, mode",
    cases(
        (
            "two-dialectic",
            "**H1: a**\n\n**Confidence**: 0.6",
            ["**H<n>:", "**Confidence**"],
            "dialectic",
        ),
        (
            "order-is-fixed",
            "**Confidence**: 0.6\n## Oscillation\n## Hypotheses",
            ["## Hypotheses", "## Oscillation", "**Confidence**"],
            "dialectic",
        ),
        ("one-bypass", "## Oscillation", ["## Oscillation"], "bypass"),
        ("zero-bypass", "Beirut.", [], "bypass"),
    ),
)
def test_mode(text, expected_signals, mode):
    result = extract(text)
    assert result["signals"] == expected_signals
    assert result["mode"] == mode


# --- process-confidence coupling ceiling -----------------------------------


@pytest.mark.parametrize(
    "text, ceiling",
    cases(
        ("table-stable", TABLE + "\nStability: STABLE", 0.85),
        ("results-heading-stable", "## Oscillation Results\nStability: **STABLE**", 0.85),
        (
            "table-stable-beats-limit-phrase",
            TABLE + "\niteration limit reached\nStability: STABLE",
            0.85,
        ),
        (
            "table-stable-beats-instability-flag",
            TABLE + "\ninstability flag\nStability: STABLE",
            0.85,
        ),
        ("table-unstable", TABLE + "\nStability: UNSTABLE", 0.50),
        ("limit-no-table", "Iteration limit reached.", 0.50),
        ("unstable-no-table", "Stability: UNSTABLE", 0.50),
        ("table-no-stability", TABLE, 0.70),
        ("stable-no-table", "Stability: STABLE", 0.45),
        ("nothing", "Just an answer. Confidence: 0.9", 0.45),
    ),
)
def test_pcc_ceiling(text, ceiling):
    assert extract(text)["pcc_ceiling"] == ceiling


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("heading-then-bold-value", "## CONFIDENCE\n\n**0.82**\n", [0.82]),
        ("heading-then-value-and-words", "## Confidence\n0.7 - moderate, see the cruxes", [0.7]),
        ("bold-label-then-percent", "**Confidence Level**\n75%", [0.75]),
        ("final-confidence-heading", "### Final Confidence\n~0.65", [0.65]),
        ("heading-then-prose-number", "## Confidence\nBased on the table, 0.6 at most", []),
        ("heading-then-labelled-line", "## Confidence\n\nConfidence: 0.4", [0.4]),
        ("heading-with-its-own-value", "## Confidence: 0.3\n0.9", [0.3]),
        ("other-heading-then-number", "## Cruxes\n0.9", []),
        ("inside-thinking", "<thinking>\n## CONFIDENCE\n\n**0.82**\n</thinking>\nAnswer.", [0.82]),
    ),
)
def test_a_confidence_on_the_line_after_its_heading_or_label(text, expected):
    assert extract(text)["confidences"] == expected


def test_a_confidence_after_its_heading_is_checked_by_pcc():
    """A reply that states 0.82 under `## CONFIDENCE` with no oscillation table breaks the 0.45 ceiling."""
    from pytest_reasoning_evals.dialectic.pcc import pcc_valid

    found = extract("## Hypotheses\n**H1:** a\n**H2:** b\n\n## CONFIDENCE\n\n**0.82**\n")
    assert found["confidence"] == 0.82 and pcc_valid(found, "dialectic") is False


# --- issue 40: process written under plain headings --------------------------

# Each shape of a real long "thinking-style" reply (written for the project), with the fields it
# must give: (id, text, {field: expected}). Every field here was missed or misread before issue 40.
CRUX_SECTION_WITH_RULES = (
    "{heading}\n\n**CRUX 1: WINTER DEMAND** (empirical)\nWhether the queue outlasts the cold months.\n\n---\n\n"
    "**CRUX 2: RISK APPETITE** (value)\nHow much debt the owner will carry.\n\n---\n\n"
    "**CRUX 3: CAFE PAYMENT TERMS**\nWhether wholesale buyers pay within thirty days.\n"
)
CRUXES_OF_THE_RULED_SECTION = [
    crux("WINTER DEMAND", "empirical"),
    crux("RISK APPETITE", "value"),
    crux("CAFE PAYMENT TERMS"),
]
HYPOTHESIS_SHAPES = cases(
    (
        "phase-heading-plain-h-lines",
        "PHASE 1: DETECT\nA real decision.\n\nPHASE 2: HYPOTHESIZE\nH1: Hire now.\nH2: Hire in spring.\n"
        "H3: Use a contractor.\nH4: Do not hire.\nH5: Split the role with a partner firm.\n\n"
        "PHASE 3: OSCILLATE\nH2 loses to H3 on cost.\n",
        {"h_count": 5},
    ),
    (
        "hypothesis-word-then-new-h5",
        "HYPOTHESIS 1: Move to a four-day week now.\nHYPOTHESIS 2: Move one team first.\n"
        "HYPOTHESIS 3: Keep five days, shorter hours.\nHYPOTHESIS 4: Keep five days, one day without meetings.\n\n"
        "OSCILLATION\nRound 2 shows a gap none of the four covers.\n\n"
        "H5 (NEW): Pilot four days in one team for a quarter, then decide.\n",
        {"h_count": 5},
    ),
)
STABILITY_SHAPES = cases(
    (
        "stability-in-prose",
        "Stability: Oscillation 3 rounds, stable at H4.",
        {"stability": "STABLE", "iteration_limit": False},
    ),
    (
        "stability-in-prose-not-stable",
        "Stability: after 2 rounds H1 and H3 still trade places, not stable.",
        {"stability": "UNSTABLE", "iteration_limit": True, "pcc_ceiling": 0.5},
    ),
)
CRUX_SHAPES = cases(
    (
        "cruxes-identified-list",
        "**H1: Sign the retainer**\n\nCRUXES IDENTIFIED:\n1. Whether the client renews after a year (empirical)\n"
        "2. How much the founders value control over steady income (value)\n",
        {
            "cruxes": [
                crux("Whether the client renews after a year", "empirical"),
                crux("How much the founders value control over steady income", "value"),
            ],
            "signals": ["**H<n>:", "## Cruxes"],
            "mode": "dialectic",
        },
    ),
    (
        "cruxes-identified-inline",
        "CRUXES IDENTIFIED: 1. Whether demand lasts the winter (empirical) 2. How much debt is acceptable (value)",
        {
            "cruxes": [
                crux("Whether demand lasts the winter", "empirical"),
                crux("How much debt is acceptable", "value"),
            ]
        },
    ),
    (
        "crux-identified-during-oscillation",
        "Round 2 of the oscillation.\n\nCrux identified during oscillation: **whether the landlord renews the lease**\n\n"
        "**Confidence:** 0.4\n",
        {
            "cruxes": [crux("whether the landlord renews the lease")],
            "signals": ["## Cruxes", "**Confidence**"],
            "mode": "dialectic",
        },
    ),
    (
        "crux-identification-ruled-entries",
        CRUX_SECTION_WITH_RULES.format(heading="## CRUX IDENTIFICATION"),
        {"cruxes": CRUXES_OF_THE_RULED_SECTION},
    ),
    (
        "crux-identification-plain-heading",
        CRUX_SECTION_WITH_RULES.format(heading="CRUX IDENTIFICATION"),
        {"cruxes": CRUXES_OF_THE_RULED_SECTION},
    ),
    (
        "crux-identification-bold-label",
        CRUX_SECTION_WITH_RULES.format(heading="**CRUX IDENTIFICATION**"),
        {"cruxes": CRUXES_OF_THE_RULED_SECTION},
    ),
    (
        "priority-aside-is-no-type",
        "## Cruxes\n\n**CRUX 1: WINTER DEMAND** (Highest priority)\n**CRUX 2: LEASE RENEWAL** (long term)\n",
        {"cruxes": [crux("WINTER DEMAND"), crux("LEASE RENEWAL")]},
    ),
    (
        "type-on-its-own-line",
        "## CRUX IDENTIFICATION\n\n**CRUX 1: WINTER DEMAND** (Highest priority)\n- Type: empirical\n"
        "- Resolves with: two months of sales\n\n**CRUX 2: RISK APPETITE**\n- Type: Value (the owner's call)\n",
        {"cruxes": [crux("WINTER DEMAND", "empirical"), crux("RISK APPETITE", "value")]},
    ),
)
WHOLE_REPLY_SHAPES = cases(
    (
        "whole-reply-plain-headings",
        (SAMPLES / "plain_headings.md").read_text(encoding="utf-8"),
        {
            "h_count": 5,
            "stability": "STABLE",
            "iteration_limit": False,
            "confidence": 0.4,
            "cruxes": [
                crux("Whether the client's budget survives its reorganisation", "empirical"),
                crux("How much variety of work the founders will give up for a steady income", "value"),
            ],
            "signals": ["## Cruxes", "**Confidence**"],
            "mode": "dialectic",
            "pcc_ceiling": 0.45,
        },
    ),
)


PLAIN_SHAPES = HYPOTHESIS_SHAPES + STABILITY_SHAPES + CRUX_SHAPES + WHOLE_REPLY_SHAPES


@pytest.mark.parametrize("text, expected", PLAIN_SHAPES)
def test_process_under_plain_headings(text, expected):
    result = extract(text)
    assert {field: result[field] for field in expected} == expected


@pytest.mark.parametrize(
    "text, expected, signal",
    cases(
        ("plain-label-lower-case", "Key cruxes:\n- Demand (empirical)\n- Risk (value)\n", ["Demand", "Risk"], True),
        ("plain-label-capitals", "CRUXES\n1. Demand (empirical)\n", ["Demand"], True),
        ("plain-label-phase", "PHASE 4: CRUX IDENTIFICATION\n- Demand (empirical)\n", ["Demand"], True),
        ("plain-label-inline-one", "Cruxes identified: 1. Demand (empirical)", ["Demand"], True),
        ("plain-label-ends-at-prose", "CRUXES:\n- Demand\nThe rest is prose.\n- Later item\n", ["Demand"], True),
        ("plain-label-without-entries", "Cruxes: none beyond the above.\n\nThanks.", [], False),
        ("plain-label-prose-case", "Two cruxes remain open and matter\n- Demand (empirical)\n", [], False),
        ("plain-label-bulleted-no-label", "- Cruxes: a and b\n", [], False),
        ("bold-label-before-plain", "**Cruxes:**\n- Demand (empirical)\n\nCRUXES:\n- Risk (value)\n", ["Demand"], True),
        ("heading-beats-plain", "CRUXES:\n- Demand (empirical)\n\n## Cruxes\n- Risk (value)\n", ["Risk"], True),
        ("stated-bold", "Crux identified: **Demand** (empirical) decides H1 vs H2.", ["Demand"], True),
        ("stated-plain", "Crux identified in round 2: whether demand lasts", ["whether demand lasts"], True),
        ("stated-none", "Crux identified during oscillation: none yet", [], False),
        ("stated-after-numbered", "**Crux 1:** Demand\n\nCrux identified: **Risk**", ["Demand"], True),
        ("cruxes-identified-is-no-statement", "Cruxes identified during oscillation in prose", [], False),
        (
            "ruled-sub-headings",
            "## CRUX IDENTIFICATION\n### Crux 1: Demand (empirical)\n---\n### Crux 2: Risk\n",
            ["Demand", "Risk"],
            True,
        ),
        (
            "rule-then-other-heading-still-ends",
            "## CRUX IDENTIFICATION\n**CRUX 1: Demand** (empirical)\n---\n**Synthesis**\n- b (value)\n",
            ["Demand"],
            True,
        ),
        (
            "type-line-joins-typed-tier",
            "## Cruxes\n**Demand** (empirical)\n**Risk**\n- Type: value\n**Note**: prose\n",
            ["Demand", "Risk"],
            True,
        ),
    ),
)
def test_plain_crux_labels_and_stated_cruxes(text, expected, signal):
    result = extract(text)
    assert [c["name"] for c in result["cruxes"]] == expected
    assert ("## Cruxes" in result["signals"]) is signal


# Issue 40's patterns on long adversarial input: CPU time, not wall time, must grow in proportion
# to the size (8x the text about 8x the time, never the 64x of a quadratic scan). Repeated bold
# crux labels took 50 s at 8000 labels before the labels tried were bounded, and an entry with
# 40,000 blanks inside took 10 s.
ADVERSARIAL = cases(
    ("stability-labels-one-line", "", "Stability: "),
    ("stability-labels-no-verdict", "", "Stability: pending review\n"),
    ("bold-crux-labels-without-entries", "", "**Cruxes**\nprose\n"),
    ("plain-crux-labels-without-entries", "", "CRUXES IDENTIFIED:\nprose\n"),
    ("inline-list-of-blanks", "CRUXES IDENTIFIED: 1. a", " "),
    ("stated-crux-unclosed-bold", "", "Crux identified in round 2: **a "),
    ("stated-crux-no-colon", "", "crux identified "),
    ("plain-hypotheses", "PHASE 2: HYPOTHESIZE\n", "H1 (NEW "),
    ("type-lines", "", "**CRUX 1: a** (Highest priority)\n- Type: empirical\n"),
    # a long run of blanks and markup inside one entry (the lead label and markup scans were quadratic)
    ("entry-with-inner-markup-run", "## Cruxes\n- **a", " _"),
)


def _extract_cpu_seconds(prefix: str, unit: str, size: int, repeat: int) -> float:
    text = prefix + unit * (size // len(unit)) + "end"
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        extract(text)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("prefix, unit", ADVERSARIAL)
def test_a_long_adversarial_reply_costs_cpu_in_proportion_to_its_size(prefix, unit):
    small = _extract_cpu_seconds(prefix, unit, 100_000, repeat=3)
    large = _extract_cpu_seconds(prefix, unit, 800_000, repeat=1)
    assert large / max(small, 1e-3) < 20, (small, large)
