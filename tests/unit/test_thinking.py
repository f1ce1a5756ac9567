"""plugin.thinking: the one think-tag scanner. strip_thinking keeps the answer (the ChaosBench
normaliser, the judge parser); thinking_of keeps the blocks (the dialectic record of reasoning
written into the answer, which extraction reads as visible process)."""

import pytest

from pytest_reasoning_evals.thinking import strip_thinking, thinking_of


def cases(*rows):
    """rows of (id, *values) -> pytest.param list with ids."""
    return [pytest.param(*values, id=case_id) for case_id, *values in rows]


@pytest.mark.parametrize(
    "text, expected",
    cases(
        ("thinking", "<thinking>hidden</thinking>shown", "shown"),
        ("extended-thinking", "<extended_thinking>\nhidden\n</extended_thinking>shown", "shown"),
        ("think", "<think>hidden\nmore</think>shown", "shown"),
        ("reasoning", "<reasoning>hidden</reasoning>shown", "shown"),
        ("upper-case", "<THINKING>hidden</THINKING>shown", "shown"),
        ("mixed-case", "<Think>hidden</tHINK>shown", "shown"),
        ("attributes", '<thinking type="draft">hidden</thinking>shown', "shown"),
        ("two-blocks-keep-middle", "<think>a</think>shown<think>b</think>", "shown"),
        ("unclosed-strips-to-end", "shown<thinking>hidden\nforever", "shown"),
        ("orphan-close", "hidden reasoning</think>shown", "shown"),
        ("no-tags", "shown", "shown"),
        ("other-tags-kept", "<answer>shown</answer>", "<answer>shown</answer>"),
        ("nested-blocks", "<think>a<think>b</think>c</think>shown", "shown"),
        ("any-tag-closes", "kept <think>a</reasoning>shown", "kept shown"),
        ("no-runaway-scan", "<think" + "<" * 10_000 + "shown", "<think" + "<" * 10_000 + "shown"),
    ),
)
def test_strip_thinking(text, expected):
    assert strip_thinking(text) == expected


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
