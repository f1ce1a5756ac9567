"""Every prompt the harness sends, rendered for a fixed input and pinned with syrupy: a wording
change shows up here as a readable diff (and in replay as cassette misses). After a deliberate
change: pytest tests/test_prompts.py --snapshot-update, and re-record the cassettes."""

from __future__ import annotations

from helpers import DEFAULT_PROMPTS, DEFAULT_VARIANT_PROMPTS

from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.dialectic import judge, multiturn
from pytest_reasoning_evals.dialectic.cases import load_variants

QUESTION = Question(
    id="atomic-00001",
    question="Is the Lorenz-63 system chaotic?",
    ground_truth="TRUE",
    family="atomic",
    split="core",
    system_id="lorenz63",
    template="atomic.is_property.v1",
)


def test_chaosbench_prompts(snapshot) -> None:
    for mode in ("zeroshot", "cot"):
        request = PromptTemplate.load(DEFAULT_PROMPTS, mode).request(QUESTION)
        assert (mode, request.messages, request.max_tokens) == snapshot(name=mode)


def test_dialectic_variant_messages(snapshot) -> None:
    rendered = {
        v.name: v.messages("Should we open-source our core library?") for v in load_variants(DEFAULT_VARIANT_PROMPTS)
    }
    assert rendered == snapshot


def test_judge_and_resolution_prompts(snapshot) -> None:
    assert judge.prompt("Should we?", "## Hypotheses\n**H1: Yes**") == snapshot(name="judge")
    resolution = multiturn.TEMPLATE.format(
        query="Should we?", conversation_history="USER: Should we?", response="Yes, in two steps."
    )
    assert (resolution, multiturn.FOLLOW_UP, multiturn.MAX_TURNS) == snapshot(name="resolution")
