"""Every dialectic prompt (variants, judge, resolution), rendered for a fixed input and pinned with
syrupy: a wording change shows up here as a readable diff (and in replay as cassette misses). After
a deliberate change: pytest tests/unit/dialectic/test_prompts.py --snapshot-update, and re-record."""

from __future__ import annotations

from helpers import DEFAULT_VARIANT_PROMPTS

from pytest_reasoning_evals.dialectic import judge, multiturn
from pytest_reasoning_evals.dialectic.cases import load_variants


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
