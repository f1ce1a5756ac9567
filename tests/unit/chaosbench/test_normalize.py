"""Tests for plugin.normalize.normalize_answer: one group per cascade step,
one named regression test per upstream parser defect, and realistic
chain-of-thought replies from small models."""

import pytest

from pytest_reasoning_evals.chaosbench.normalize import ENGLISH, AnswerWords, parse_answer_words
from pytest_reasoning_evals.normalize import normalize_answer

T, F = "TRUE", "FALSE"


def cases(*rows):
    """rows of (id, reply, expected) -> pytest.param list with ids."""
    return [pytest.param(reply, expected, id=case_id) for case_id, reply, expected in rows]


def _adversarial(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


# --- step 0: hidden reasoning, code fences, empty input --------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("none", None, None),
        ("empty", "", None),
        ("whitespace", "  \n\t ", None),
        ("think-block", "<think>The map is chaotic, so TRUE.</think>\nFALSE", F),
        ("thinking-upper", "<THINKING>yes yes yes</THINKING>No.", F),
        ("reasoning", "<reasoning>It is false.</reasoning>\n\nAnswer: TRUE", T),
        ("extended-thinking", "<extended_thinking>\nno\n</extended_thinking>\nYes", T),
        ("unclosed-strips-to-end", "FALSE <think>hmm, actually TRUE", F),
        ("only-unclosed-think", "<think>It's TRUE obviously", None),
        ("only-think-block", "<think>TRUE</think>", None),
        ("orphan-closing-tag", "the user wants TRUE or FALSE... it is true</think>\nFALSE", F),
        ("fence-plain", "```\nFALSE\n```", F),
        ("fence-language", "```text\nTRUE\n```", T),
        ("fence-json", '```json\n{"answer": "FALSE"}\n```', F),
    ),
)
def test_step0_cleaning(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 1: explicit markers -------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("final-answer-upper", "FINAL_ANSWER: TRUE", T),
        ("final-answer-sentence", "The exponent is negative.\nFinal answer: FALSE", F),
        ("final-answer-dash", "Final Answer - TRUE", T),
        ("bold-marker", "**Final Answer:** TRUE", T),
        ("bold-marker-colon-outside", "**Final Answer**: false", F),
        ("answer-colon", "Answer: TRUE", T),
        ("marker-next-line", "Final answer:\n\nFALSE", F),
        ("marker-heading", "### Final Answer\n**TRUE**", T),
        ("marker-negated", "Final answer: not true", F),
        ("marker-not-the-case", "Final answer: it is not the case.", F),
        ("marker-letter", "Final answer: F", F),
        ("marker-beats-keywords", "True, the orbit looks irregular, but no.\nFINAL_ANSWER: TRUE", T),
        ("marker-without-label-skipped", "FINAL_ANSWER: FALSE\n\n(Format reminder: end with FINAL_ANSWER: <label>)", F),
        ("marker-both-labels-skipped", "Final answer: FALSE\nFinal answer: TRUE or FALSE", F),
    ),
)
def test_step1_explicit_marker(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 2: conclusion phrases ----------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("therefore", "Some say it is true. Therefore, the statement is false.", F),
        ("thus", "No stable cycle exists. Thus, TRUE.", T),
        ("hence", "The claim sounds false at first. Hence, it is true.", T),
        ("in-conclusion", "True chaos needs three dimensions. In conclusion, the claim is not true.", F),
        ("so-the-answer-is", "It looks true for r = 3.2, but the orbit is periodic, so the answer is FALSE.", F),
        ("the-answer-is", "One might think yes. The answer is no.", F),
        ("last-labelled-conclusion-wins", "Therefore, TRUE. Then I checked r = 2.5. Thus, FALSE.", F),
        ("conclusion-without-label-skipped", "Thus, the answer is FALSE. So we are done.", F),
        (
            "label-must-be-in-same-sentence",
            "FALSE.\nTherefore, we check r = 4.\nThe exponent there is positive, which is true.",
            F,
        ),
        ("conclusion-question-ignored", "The claim is false. So, is it true?", F),
    ),
)
def test_step2_conclusion_phrases(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        # SmolLM2's own replies (issue 28): the answer, then discussion naming the other word
        (
            "to-this-question-then-the-other-word",
            "The answer to this question is: FALSE.\n\nThis statement contradicts the fundamental assumption of a "
            "TRUE dynamical system, which requires a known initial state.",
            F,
        ),
        (
            "title-case-then-adjective",
            "The answer to this question is: False.\n\nIn a TRUE dynamical system, the trajectories leave every bounded region.",
            F,
        ),
        ("bare-no", "The answer to this question is no. The TRUE or FALSE statement in the TRUE/FALSE model holds.", F),
        ("true", "The answer to this question is: TRUE. Still, a FALSE reading is common.", T),
        ("for-the-statement", "The answer for the statement is true. Some would say false.", T),
        ("as-the-answer-is", "The answer is: FALSE.\n\nIn a TRUE system the orbit would be periodic.", F),
        # a supposition concludes nothing, and a bare colon with no label reads nothing
        ("supposition", "To determine if the answer to this question is TRUE or FALSE, we need to examine it.", None),
        ("no-label-after-it", "The answer to this question is: Both indicators point to chaotic behaviour.", None),
    ),
)
def test_step2_the_answer_to_this_question_is(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 3: revisions ---------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("yes-actually-no", "Yes... actually no", F),
        ("no-actually-yes", "No. Actually, yes.", T),
        ("wait", "TRUE. Wait, no. The orbit is periodic.", F),
        ("on-second-thought", "It's true. On second thought, it's false.", F),
        ("i-was-wrong", "No. I was wrong: the statement is true.", T),
        ("correction", "FALSE\nCorrection: TRUE", T),
        ("answer-in-later-sentence", "Hmm, true.\n\nActually, wait: r = 2.9 is below the onset. False.", F),
        (
            "later-sentence-question-ignored",
            "Yes.\nWait, is that true? The orbit converges, so it is periodic.\nNo.",
            F,
        ),
        ("last-cue-with-label", "Yes... actually no. Wait, let me double-check the exponent.", F),
        ("revision-after-conclusion", "So the answer is TRUE. Wait, no. FALSE.", F),
        ("conclusion-after-revision", "Yes... actually no. Let me redo it. Therefore, the answer is TRUE.", T),
        ("actually-not-a-cue-before-words", "TRUE.\nActually, no periodic orbit is stable here.", T),
    ),
)
def test_step3_revisions(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 4: label variants, single letters, negation ---------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("true-lower", "true", T),
        ("false-title", "False.", F),
        ("yes-upper", "YES", T),
        ("no-bang", "No!", F),
        ("yeah", "yeah", T),
        ("nope", "Nope.", F),
        ("untrue", "That is untrue.", F),
        ("letter-t", "T", T),
        ("letter-f-dot", "f.", F),
        ("letter-y-bang", "Y!", T),
        ("letter-n-spaces", "  N  ", F),
        ("letter-bold", "**F**", F),
        ("not-true", "Not true.", F),
        ("isnt-true", "That isn't true.", F),
        ("is-not-the-case", "It is not the case.", F),
        ("not-false", "It is not false.", T),
        ("not-necessarily-true", "It's not necessarily true.", F),
        ("not-untrue", "The claim is not untrue.", T),
        ("letter-inside-word", "The attractor forms a T-shaped orbit.", None),
        ("letter-in-formula", "y = 3x + 1", None),
        ("letter-in-sentence", "Consider point F on the orbit.", None),
    ),
)
def test_step4_label_variants(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 5: markdown ---------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("bold", "**TRUE**", T),
        ("bold-underscore", "__FALSE__", F),
        ("italic-star", "*true*", T),
        ("italic-underscore", "_false_", F),
        ("heading", "# TRUE", T),
        ("blockquote", "> FALSE", F),
        ("nested-blockquote-bold", "> > **No.**", F),
        ("table", "| Question | Answer |\n|---|---|\n| Is it chaotic? | FALSE |", F),
        ("inline-code", "`TRUE`", T),
        ("bold-negation", "It is **not** true.", F),
    ),
)
def test_step5_markdown_ignored(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 6: opening label, then last line ---------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("opening-beats-not", "TRUE.\n\nExplanation: the orbit is not periodic and it is not stable.", T),
        ("opening-beats-last-line", "FALSE.\n\nSome would call it true chaos.\nTrue", F),
        ("opening-no-comma", "No, the map contracts. It is true that orbits converge.", F),
        ("opening-both-not-bare", "Yes, and no.", None),
        (
            "last-line-label",
            "Some would say true, since the orbit looks irregular.\nBut the exponent is negative.\nFALSE",
            F,
        ),
        ("last-line-negated", "One might say it is true.\nThe exponent is negative though.\nIt is not true.", F),
        ("last-line-bold", "It looks false at first.\nThe exponent is positive.\n**TRUE**", T),
        ("last-line-not-a-label", "It is false for r = 2.\nIt is true for r = 4 in the chaotic band.", None),
    ),
)
def test_step6_opening_and_last_line(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 7: whole-word keywords -------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("keyword-true", "The statement about the Lorenz attractor is true for these parameters.", T),
        ("keywords-agree", "That is false; the orbit converges and no, it is not chaotic.", F),
        ("keywords-disagree", "The first part is true but the second part is false, overall.", None),
        ("know-is-not-no", "I know the orbit is bounded and the claim is true.", T),
        ("not-none-nothing", "Nothing diverges and none of the orbits are unbounded.", None),
        ("yesterday-is-not-yes", "Yesterday's simulation showed bounded orbits.", None),
        ("no-determiner", "There is no periodic orbit here.", None),
        ("question-ignored", "Is this true? The exponent is negative and the claim is false.", F),
    ),
)
def test_step7_keywords(reply, expected):
    assert normalize_answer(reply) == expected


# --- step 8: unclear, both labels, hedges -----------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("nothing-clear", "Interesting question about bifurcations.", None),
        ("yes-and-no", "yes and no", None),
        ("true-or-false", "TRUE or FALSE", None),
        ("both", "It is both true and false.", None),
        ("it-depends", "It depends.", None),
        ("cannot-be-determined", "This cannot be determined from the given information.", None),
        ("unclear", "It is unclear.", None),
        ("not-sure", "Not sure, maybe true.", None),
        ("hedge-with-marker", "It depends on r. Final answer: FALSE", F),
        ("hedge-with-final-answer-marker", "It cannot be determined in general.\n\nFINAL_ANSWER: TRUE", T),
        ("depends-sensitively-is-not-a-hedge", "TRUE. Chaos means it depends sensitively on initial conditions.", T),
    ),
)
def test_step8_unknown_and_hedges(reply, expected):
    assert normalize_answer(reply) == expected


# --- upstream defects: one named regression test each -------------------------------


def test_regression_negation_not_ignored():
    assert normalize_answer("The statement is not true.") == F
    assert normalize_answer("Final answer: not true") == F


def test_regression_also_is_not_the_conclusion_word_so():
    # Upstream read "also" as "so" and took "true" after it as the conclusion.
    reply = (
        "FALSE. The fixed point is stable; it is also true that the Jacobian's eigenvalues lie inside the unit circle."
    )
    assert normalize_answer(reply) == F


def test_regression_last_final_answer_marker_wins():
    reply = "Final answer: TRUE\n\nHmm, let me recheck: r = 2.8 gives a stable fixed point.\n\nFinal answer: FALSE"
    assert normalize_answer(reply) == F


def test_regression_leading_label_not_flipped_by_not_in_explanation():
    reply = "TRUE.\n\nExplanation: The logistic map at r = 4 is not periodic, and its orbits do not settle."
    assert normalize_answer(reply) == T
    # The explanation alone reads FALSE-ish ("not true"); the opening label must still win.
    reply = (
        "TRUE.\n\nExplanation: A periodic orbit would need a negative Lyapunov exponent, "
        "which is not true here: the exponent is ln 2."
    )
    assert normalize_answer(reply) == T


def test_regression_single_letter_whole_response():
    assert normalize_answer("T") == T
    assert normalize_answer("n.") == F


def test_regression_letters_inside_words_are_not_answers():
    assert normalize_answer("The orbit traces a T-shaped curve near the F-point.") is None


def test_regression_hedge_without_marker_is_unknown():
    reply = "It depends on the initial condition; for most initial conditions the claim is true."
    assert normalize_answer(reply) is None
    assert normalize_answer("It depends on r, so the statement is true for r = 4.") is None


def test_regression_hedge_with_marker_uses_marker():
    assert normalize_answer("It depends on r. Final answer: FALSE") == F


# --- realistic chain-of-thought replies from small models ----------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        (
            "logistic-period-two",
            "Okay, let's see. The logistic map x_{n+1} = r x_n (1 - x_n) at r = 3.2... hmm, so at r = 3.2 we "
            "get a period-2 cycle, not chaos. The statement says it's chaotic. That's not right. "
            "So the answer is FALSE.",
            F,
        ),
        (
            "lorenz-also-therefore",
            "The Lorenz system with sigma=10, rho=28, beta=8/3 has a strange attractor. It is also sensitive "
            "to initial conditions, which means nearby trajectories diverge. Also the Lyapunov exponent is "
            "positive. Therefore, the statement is TRUE.",
            T,
        ),
        (
            "think-then-bold-answer",
            "<think>\nThe user asks if the Henon map is chaotic... I think it's false... no wait, it's true.\n"
            "</think>\n\n**Answer:** TRUE",
            T,
        ),
        (
            "pendulum-rambling-revision",
            "Let me think. A pendulum without friction is integrable, so no chaos. So yes... actually no, "
            "the statement claims chaos, so it's FALSE.",
            F,
        ),
        (
            "tent-map-steps",
            "Step 1: The claim is that the tent map with slope 1.5 is not chaotic.\n"
            "Step 2: Its Lyapunov exponent is ln(1.5) > 0, which is true for any slope above 1.\n"
            "Step 3: So the claim is false.\nSo the answer is FALSE.",
            F,
        ),
        (
            "henon-last-line",
            "Hmm. Is it true? The Henon map with a=1.4, b=0.3 is the classic chaotic case. The largest "
            "Lyapunov exponent is about 0.42 which is positive.\n\nTRUE",
            T,
        ),
        (
            "hedging-then-marker",
            "This one is tricky. The behaviour depends on the parameter regime and it is unclear from the "
            "prompt which regime is meant. Assuming the standard parameters, the system is chaotic.\n"
            "FINAL_ANSWER: TRUE",
            T,
        ),
        (
            "duffing-markdown-list",
            "## Analysis\n- The damped Duffing oscillator without forcing has no chaos (2D autonomous).\n"
            "- Poincare-Bendixson applies.\n\n> **Conclusion:** the claim is **not true**.",
            F,
        ),
        (
            "rambling-wait-restart",
            "The double pendulum is chaotic, true. Wait, the question says *linearised* double pendulum. "
            "Linear systems cannot be chaotic. Hmm so the answer is no.",
            F,
        ),
    ),
)
def test_realistic_chain_of_thought(reply, expected):
    assert normalize_answer(reply) == expected


# --- review fixes: one group per defect class -------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("even-so", "TRUE. Even so, it is not true that every trajectory is chaotic.", T),
        ("if-so", "FALSE. The orbit settles on a cycle; if so, the statement would be true.", F),
        ("so-called", "FALSE. This so-called true randomness is deterministic.", F),
        ("and-so-on", "FALSE. Periods 2, 4, 8 and so on, true to Feigenbaum scaling, stay periodic.", F),
        ("so-before-a-sub-claim", "TRUE. The exponent is positive, so not true that the orbit is periodic.", T),
        # "so" still concludes before the statement or a bare label.
        ("so-the-statement-is", "It looks true at r = 3.2, but the orbit is periodic, so the statement is false.", F),
        ("so-bare-label", "The orbit never settles. So, TRUE.", T),
        ("so-its-label", "It seems chaotic, yes, but the orbit is periodic, so it's FALSE.", F),
    ),
)
def test_bare_so_is_not_a_conclusion(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("if-so-answer-would-be", "FALSE. If so, the answer would be true.", F),
        ("otherwise", "FALSE. Otherwise the answer would be TRUE.", F),
        ("assuming", "TRUE. Assuming the orbit were periodic, the answer would be false.", T),
        # a conclusion that only opens with a clause, no supposition, still concludes
        ("therefore-after-reasoning", "The exponent is negative. Therefore, FALSE.", F),
    ),
)
def test_a_supposition_is_not_a_conclusion(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        (
            "opening-label-beats-hedge",
            "TRUE. The exact long-term state cannot be known, but the exponent is positive.",
            T,
        ),
        (
            "opening-false-beats-unclear",
            "FALSE.\n\nHow long the transient lasts is unclear, but the orbit is periodic.",
            F,
        ),
        ("last-line-beats-hedge", "The long-term state cannot be known exactly.\nTRUE", T),
        ("last-line-after-it-depends", "It depends on how you read the claim.\nFALSE", F),
        ("conclusion-beats-earlier-hedge", "The transient length is unclear. Therefore, TRUE.", T),
        # A reply that only hedges, or hedges around its keywords, stays unknown.
        ("only-hedge", "It depends on the initial condition.", None),
        ("hedge-around-keywords", "It depends; for r = 4 it is true.", None),
        ("hedge-with-questions", "Is it chaotic? It depends. Could it be true? Maybe.", None),
    ),
)
def test_hedge_only_blocks_a_reply_that_only_hedges(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        # Upstream's own revision tests.
        ("upstream-yes-wait-no-yes", "I think YES... wait, NO, that's wrong. YES is correct.", T),
        ("upstream-yes-initially-after-thinking-no", "I would say yes initially, but after thinking, no.", F),
        ("upstream-several-revisions", "Initially no, but actually yes, wait no, upon reflection yes.", T),
        ("upstream-answer-is-initially", "The answer is YES initially, but actually NO.", F),
        ("upstream-correct-answer-is", "One might think yes at first, but the correct answer is no.", F),
        ("upstream-initially-but", "I initially thought yes, but the final determination is no", F),
        # More of the same class.
        ("yes-actually-no", "Yes. Actually, no.", F),
        ("at-first-on-reflection", "At first I thought FALSE, but on reflection TRUE.", T),
        ("dash-i-was-wrong", "No -- I was wrong, it is true.", T),
        ("wait-actually-the-answer", "wait, actually the answer is FALSE", F),
        ("wait-no-without-comma", "TRUE... wait no, the orbit is periodic.", F),
        ("after-reconsidering", "Yes. After reconsidering, no: the exponent is negative.", F),
        ("at-first-glance-but", "At first glance it looks true, but it is false.", F),
        ("that-is-incorrect", "FALSE. Hmm, that is incorrect. The claim is true.", T),
        # "actually" inside a negation is no cue: "not actually false" is TRUE.
        ("not-actually-false", "It is not actually false.", T),
    ),
)
def test_revision_last_committed_answer_wins(reply, expected):
    assert normalize_answer(reply) == expected


def test_megabyte_adversarial_reply_finishes():
    # Each segment made one pattern of the old code quadratic: an orphan-closing-tag
    # scan with no closing tag, questions and sentences that never end, a rule-like
    # punctuation line, cues without labels, "yes no" runs. Quadratic code would need
    # minutes here; linear code a fraction of a second. No timing is asserted.
    segments = [
        _adversarial("the user wants TRUE </think ", 200_000),
        _adversarial("is it true or not ", 150_000) + ".\n",
        _adversarial("-=", 100_000) + "x\n",
        _adversarial("wait, so even so therefore, final answer: at first ", 200_000) + "\n",
        _adversarial("it depends, ", 50_000) + "\n",
        _adversarial("yes no ", 150_000) + "\n",
        _adversarial("not ", 50_000) + "\n",
        _adversarial("_*`|", 100_000) + "\n",
    ]
    reply = "TRUE.\n" + "".join(segments)
    assert len(reply) > 1_000_000
    assert normalize_answer(reply) == T  # the opening label; the rest hedges and conflicts


def test_a_short_reply_read_again_gives_what_the_cascade_gives():
    """Short replies are read once each (an LRU cache): asked again, in any order, each still
    gets its own label, and the long ones (never cached) too."""
    replies = {
        "TRUE": T,
        "False.": F,
        "**F**": F,
        "It is not false.": T,
        "unclear": None,
        "": None,
        "yes " * 20 + "no": None,
        "FALSE. " + "The orbit diverges. " * 5: F,
    }
    for _ in range(2):
        for reply, expected in reversed(replies.items()):
            assert normalize_answer(reply) == expected, reply


# --- issue 40: forms an expert reads one way ------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("yes-thats-false", "Yes, that's false.", None),
        ("no-thats-true", "No, that's true.", None),
        ("yes-false", "Yes, FALSE.", None),
        ("yes-then-false", "Yes. FALSE.", None),
        # a label and its agreeing restatement stay that label
        ("no-it-is-not-true", "No, it is not true.", F),
        ("yes-its-true", "Yes, it's true.", T),
        ("no-then-false", "No. FALSE.", F),
        ("yes-it-is-not-false", "Yes, it is not false.", T),
        # to "Is it false that ...?": a negated restatement echoes the answer (SmolLM2's replies)
        ("no-it-is-not-false", "No, it is not false. The Rossler system is indeed dissipative.", F),
        # a sub-claim after the opening label is no second label
        ("yes-sub-claim-not-true", "Yes, it is not true that the orbit is periodic.", T),
        ("true-concession", "True, the orbit looks irregular, but it is chaotic.", T),
    ),
)
def test_a_reply_asserting_both_labels_is_unknown(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("depends-but-here", "It depends on the initial condition in general, but here the answer is FALSE.", F),
        ("depends-colon-label", "It depends: TRUE for the standard parameters.", T),
        ("unclear-but-therefore", "The transient is unclear, but the exponent is positive; therefore, TRUE.", T),
        # a hedge that is not conceded still hides what follows it
        ("depends-so", "It depends on r, so the statement is true for r = 4.", None),
        ("depends-colon-both", "It depends: TRUE for r = 4, FALSE for r = 3.", None),
        ("depends-semicolon", "It depends; for r = 4 it is true.", None),
    ),
)
def test_a_hedge_on_the_answers_line_does_not_hide_it(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("true-slash-false", "True/False: False", F),
        ("true-or-false", "True or False: True", T),
        ("answer-parenthesised", "Answer (True/False): FALSE", F),
        ("t-slash-f-letter", "T/F: T", T),
        ("upper", "TRUE/FALSE: FALSE", F),
        ("yes-slash-no", "Yes/No: no", F),
        ("header-then-reasoning", "True/False: the map is chaotic, so it is true.", T),
        ("header-without-label", "True/False: see the exponent.", None),
    ),
)
def test_a_true_false_header_names_no_label(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("verdict-bool", '{"verdict": false, "reason": "the flow is not chaotic, true of every Hamiltonian flow"}', F),
        ("answer-string", '{"answer": "TRUE", "explanation": "it is false that the orbit is periodic"}', T),
        ("fenced", 'Here it is:\n```json\n{"reasoning": "yes, bounded", "final_answer": "FALSE"}\n```', F),
        ("label", '{"label": "true"}', T),
        ("is-true", '{"is_true": false, "note": "TRUE would need a positive exponent"}', F),
        ("result-negated-string", '{"result": "not true"}', F),
        ("upper-key", '{"Answer": "yes", "why": "no periodic orbit"}', T),
        ("last-object-wins", '{"answer": true}\nOn reflection:\n{"answer": false, "note": "true only at r=4"}', F),
        ("keys-disagree", '{"answer": true, "verdict": false}', None),
        # no answer key, or no parsable object: the cascade reads the words
        ("no-answer-key", '{"reason": "chaotic"}\nTRUE', T),
        ("unparsable", '{"answer": TRUE, oops\nFinal answer: FALSE', F),
        ("braces-in-prose", "The set {x : x > 0} is invariant. FALSE.", F),
    ),
)
def test_a_json_reply_is_read_by_its_answer_key(reply, expected):
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("neither-nor-then-label", "The statement is neither false nor misleading; it is TRUE.", T),
        ("neither-true-nor-false", "It is neither true nor false.", None),
        ("neither-alone", "The claim is neither false nor misleading.", None),
    ),
)
def test_neither_nor_asserts_neither_label(reply, expected):
    assert normalize_answer(reply) == expected


def test_a_megabyte_of_json_like_text_finishes():
    # unclosed objects from every brace: each failed parse may not rescan the rest of the reply
    reply = "TRUE.\n" + _adversarial('{"answer": {"a": [1, ', 1_000_000) + "\n" + _adversarial("{", 500_000)
    assert normalize_answer(reply) == T


# --- a team's own answer words (eval_answer_words) --------------------------------------

SPANISH = parse_answer_words("TRUE = verdadero, cierto, sí; FALSE = falso, no es verdadero")
GERMAN = parse_answer_words("TRUE = wahr, richtig, ja; FALSE = falsch, nein, nicht wahr")


def test_the_words_option_is_parsed_per_label_lower_cased_and_without_repeats():
    words = parse_answer_words(" true = Wahr,  richtig ; FALSE=falsch;TRUE = wahr, Stimmt ;")
    assert words == AnswerWords(true=("wahr", "richtig", "stimmt"), false=("falsch",))
    assert parse_answer_words("") == ENGLISH
    assert parse_answer_words("TRUE = es  ist wahr") == AnswerWords(true=("es ist wahr",))


@pytest.mark.parametrize(
    "value, message",
    [
        ("TRUE wahr", "'TRUE wahr' has no '='"),
        ("MAYBE = vielleicht", "unknown label 'MAYBE'"),
        ("TRUE = wahr,, ja", "an empty word in 'TRUE = wahr,, ja'"),
        ("TRUE = ", "an empty word in 'TRUE ='"),
        ("TRUE = ja; FALSE = nein, JA", "'ja' is given for TRUE but is a FALSE word"),
        ("FALSE = yes", "'yes' is given for FALSE but is a TRUE word"),
    ],
)
def test_a_malformed_words_option_says_what_is_wrong_in_one_line(value, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")) as raised:
        parse_answer_words(value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("falso", "Falso.", F),
        ("verdadero", "VERDADERO", T),
        ("sentence", "La afirmación es falsa? No: la afirmación es falso.", F),
        ("bold-opening", "**Verdadero.**\n\nEl exponente de Lyapunov es positivo.", T),
        ("marker", "Respuesta final: cierto. Final answer: verdadero", T),
        ("english-negation", "It is not verdadero.", F),
        ("negated-phrase-as-a-word", "No es verdadero.", F),
        ("both", "Verdadero o falso.", None),
        ("accent", "Sí.", T),
        ("inside-a-word", "Falsone", None),
        ("english-still-read", "FALSE", F),
    ),
)
def test_spanish_answer_words(reply, expected):
    assert normalize_answer(reply, SPANISH) == expected


@pytest.mark.parametrize(
    "reply, expected",
    cases(
        ("falsch", "Falsch.", F),
        ("wahr", "Wahr.", T),
        ("ja-richtig", "Ja, das ist richtig.", T),
        ("nein-falsch", "Nein. FALSCH.", F),
        ("contradiction", "Ja, falsch.", None),
        ("nicht-wahr-as-a-word", "Nicht wahr.", F),
        ("last-line", "Der Lyapunov-Exponent ist negativ.\nFalsch", F),
        ("so-conclusion", "Die Bahn ist periodisch, so falsch.", F),
        ("json", '{"antwort": "x", "answer": "wahr"}', T),
    ),
)
def test_german_answer_words(reply, expected):
    assert normalize_answer(reply, GERMAN) == expected


def test_without_the_words_a_foreign_reply_is_unknown():
    assert [normalize_answer(r) for r in ("Falsch.", "Wahr.", "Verdadero.", "falso")] == [None] * 4
