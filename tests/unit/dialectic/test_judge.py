"""The judge reply parser (SPEC 6.4): the last complete JSON object is the verdict (a final answer
comes after drafts), whatever prose, fences or reasoning blocks surround it; a reply without one is
a judge error."""

import json

import pytest

from pytest_reasoning_evals.dialectic import judge

SCORES = {
    "h_quality": 8,
    "oscillation_depth": 7,
    "crux_precision": 6,
    "epistemic_calibration": 5,
    "actionability": 9,
    "rationale": "clear",
}
OBJ = json.dumps(SCORES)
OTHER = json.dumps({**SCORES, "h_quality": 1})


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(OBJ, id="bare"),
        pytest.param(f"{OBJ}\n\nOverall a solid response; the cruxes are well typed.", id="prose-after"),
        pytest.param(f"Here is my evaluation:\n{OBJ}\nNote: I was strict on calibration.", id="prose-around"),
        pytest.param(f"{OBJ}\nThe rationale {{in short}}: fine.", id="brace-in-prose-after"),
        pytest.param(f"Scores {{see below}}:\n{OBJ}", id="non-json-brace-before"),
        pytest.param(f"{OTHER}\n{OBJ}", id="two-objects-last-wins"),
        pytest.param(f"```json\n{OBJ}\n```", id="fenced"),
        pytest.param(f"```json\n{OBJ}\n```\nHope this helps {{:}}", id="fenced-then-prose"),
        pytest.param(f"Sure.\n```\n{json.dumps(SCORES, indent=2)}\n```", id="fenced-no-language"),
    ],
)
def test_the_last_complete_json_object_is_parsed(reply):
    assert judge.parse(reply) == SCORES


def test_the_last_object_is_the_verdict_even_without_scores():
    with pytest.raises(judge.JudgeError, match="no 0-10 score for 'h_quality'"):
        judge.parse(f'{OBJ} and then {{"verdict": "good"}}')


DRAFT = json.dumps({**SCORES, "h_quality": 2})


@pytest.mark.parametrize(
    "reply, expected",
    [
        pytest.param(json.dumps({k: str(v) for k, v in SCORES.items()}), SCORES, id="numeric-strings"),
        pytest.param(OBJ.replace('"h_quality": 8', '"h_quality": "8/10"'), SCORES, id="n-of-10"),
        pytest.param(
            OBJ.replace('"h_quality": 8', '"h_quality": "7.5"'), {**SCORES, "h_quality": 7.5}, id="decimal-string"
        ),
        pytest.param(OBJ.replace('"clear"}', '"clear",}'), SCORES, id="trailing-comma"),
        pytest.param(OBJ.replace('"', "'"), SCORES, id="single-quotes"),
        pytest.param(
            json.dumps({"scores": {k: v for k, v in SCORES.items() if k != "rationale"}, "rationale": "clear"}),
            SCORES,
            id="nested-scores",
        ),
        pytest.param(f"<think>draft: {DRAFT}</think>\n{OBJ}", SCORES, id="draft-in-think-block"),
        pytest.param(f"<think>{OBJ}</think>", None, id="only-a-draft"),
        pytest.param(f"{DRAFT}\nOn reflection, final:\n```json\n{OBJ}\n```", SCORES, id="draft-then-final"),
        pytest.param(f"{OBJ}\n{{'h_quality': 3, ", SCORES, id="truncated-after-final"),
    ],
)
def test_common_judge_formats_are_read(reply, expected):
    if expected is None:
        with pytest.raises(judge.JudgeError, match="no JSON object"):
            judge.parse(reply)
    else:
        assert judge.parse(reply) == expected


@pytest.mark.parametrize(
    "value, shown",
    [
        pytest.param(11, "11", id="above-10"),
        pytest.param("-1", "'-1'", id="negative"),
        pytest.param("12/10", "'12/10'", id="12-of-10"),
        pytest.param(True, "True", id="bool"),
    ],
)
def test_a_score_outside_0_to_10_stays_a_judge_error_naming_the_dimension(value, shown):
    reply = json.dumps({**SCORES, "crux_precision": value})
    with pytest.raises(judge.JudgeError, match=rf"no 0-10 score for 'crux_precision' \(got {shown}\): '\{{"):
        judge.parse(reply)


def test_a_missing_dimension_is_a_judge_error_naming_it():
    reply = json.dumps({k: v for k, v in SCORES.items() if k != "actionability"})
    with pytest.raises(judge.JudgeError, match=r"no 0-10 score for 'actionability' \(got None\)"):
        judge.parse(reply)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("I think it is fine.", id="prose"),
        pytest.param('{"h_quality": 8, "oscillation_depth": ', id="truncated"),
        pytest.param("[1, 2, 3]", id="array"),
        pytest.param("", id="empty"),
    ],
)
def test_a_reply_without_a_json_object_is_a_judge_error(reply):
    with pytest.raises(judge.JudgeError, match="no JSON object"):
        judge.parse(reply)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param('{"a": ' * 50_000 + "1" + "}" * 50_000, id="objects"),
        pytest.param('{"h_quality": ' + "[" * 50_000 + "]" * 50_000 + "}", id="arrays-inside"),
        pytest.param("{a: " * 50_000 + "1" + "}" * 50_000, id="json5-objects"),
    ],
)
def test_a_reply_nested_50000_deep_is_an_unreadable_reply_on_one_line(reply):
    with pytest.raises(judge.JudgeError, match="no JSON object") as raised:
        judge.parse(reply)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 300
