"""thinking_of: the reasoning a model wrote into its answer text, the part strip_thinking drops."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.thinking import strip_thinking, thinking_of


@pytest.mark.parametrize(
    ("text", "answer", "thought"),
    [
        ("plain answer", "plain answer", ""),
        ("<thinking>H1 vs H2</thinking>\nFinal: H1", "\nFinal: H1", "H1 vs H2"),
        ("a<think>one</think>b<think>two</think>c", "abc", "one\n\ntwo"),
        ("a<think>b<think>c</think>d", "ad", "bc"),  # nested: one block, inner tags dropped
        ("shown<thinking>draft to the end", "shown", "draft to the end"),  # unclosed
        ("its opener was in the prompt</think>answer", "answer", "its opener was in the prompt"),
    ],
    ids=["none", "one-block", "two-blocks", "nested", "unclosed", "orphan-close"],
)
def test_every_piece_is_either_answer_or_thinking(text, answer, thought):
    assert strip_thinking(text) == answer
    assert thinking_of(text) == thought
