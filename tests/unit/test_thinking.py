"""Tests for plugin.thinking: the one think-tag stripper (used by the ChaosBench normaliser and the
dialectic judge parser; dialectic extraction reads reasoning blocks as visible process)."""

import pytest

from pytest_reasoning_evals.thinking import strip_thinking


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
