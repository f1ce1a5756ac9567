"""The judge reply parser (SPEC 6.4): the first complete JSON object is the verdict, whatever
prose or fences surround it; a reply without one is a judge error."""

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
        pytest.param(f"{OBJ}\n{OTHER}", id="two-objects-first-wins"),
        pytest.param(f"```json\n{OBJ}\n```", id="fenced"),
        pytest.param(f"```json\n{OBJ}\n```\nHope this helps {{:}}", id="fenced-then-prose"),
        pytest.param(f"Sure.\n```\n{json.dumps(SCORES, indent=2)}\n```", id="fenced-no-language"),
    ],
)
def test_the_first_complete_json_object_is_parsed(reply):
    assert judge.parse(reply) == SCORES


def test_the_first_object_is_the_verdict_even_without_scores():
    with pytest.raises(judge.JudgeError, match="no 0-10 score for 'h_quality'"):
        judge.parse(f'{{"verdict": "good"}} and then {OBJ}')


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
