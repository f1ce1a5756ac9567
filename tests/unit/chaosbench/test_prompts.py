"""Every ChaosBench prompt, rendered for a fixed input and pinned with syrupy: a wording change
shows up here as a readable diff (and in replay as cassette misses). After a deliberate change:
pytest tests/unit/chaosbench/test_prompts.py --snapshot-update, and re-record the cassettes."""

from __future__ import annotations

from helpers import DEFAULT_PROMPTS

from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Question

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
