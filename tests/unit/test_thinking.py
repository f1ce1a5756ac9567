"""plugin.thinking: the one think-tag scanner. strip_thinking keeps the answer (the ChaosBench
normaliser, the judge parser); thinking_of keeps the blocks (the dialectic record of reasoning
written into the answer, which extraction reads as visible process)."""

import time

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


# Every reasoning-tag shape, repeated to 10 MB: a scan that copies or rescans per tag is quadratic
# (a run of orphan closing tags took 12 s at 800 KB). CPU time, not wall time: 8x the text must
# cost about 8x, never the 64x of a quadratic scan.
TAG_SHAPES = cases(
    ("opening", "<think> x ", None),
    ("closing-orphan", "</think> x ", "TRUE"),
    ("paired", "<think>a</think> TRUE ", "TRUE"),
    ("nested", "<think>a<thinking>b</thinking>c</think> ", "TRUE"),
    ("attributes-any-case", '<Reasoning effort="high">c</REASONING> ', "TRUE"),
    ("unterminated-opening", "<think x ", "TRUE"),
)


def _cpu_seconds(unit: str, size: int, repeat: int) -> tuple[float, str | None, str]:
    from pytest_reasoning_evals.chaosbench.normalize import normalize_answer

    text = unit * (size // len(unit)) + " TRUE"
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        label, thought = normalize_answer(text), thinking_of(text)
        best = min(best, time.process_time() - start)
    return best, label, thought


@pytest.mark.parametrize("unit, label", TAG_SHAPES)
def test_a_10_megabyte_reply_of_any_tag_shape_costs_cpu_in_proportion_to_its_size(unit, label):
    small, small_label, _ = _cpu_seconds(unit, 1_250_000, repeat=3)
    large, large_label, thought = _cpu_seconds(unit, 10_000_000, repeat=1)
    assert small_label == large_label == label
    assert len(thought) > 0 or "<think " in unit  # the blocks were read as blocks, not skipped
    assert large / max(small, 1e-3) < 20, (small, large)
