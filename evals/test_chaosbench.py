"""ChaosBench-Logic: one pytest item per question and one per dialogue (the shipped items; a user
project collects them the same way). Questions are collected first, then dialogues."""

from pytest_reasoning_evals.chaosbench.items import test_question, test_dialogue  # noqa: F401, I001
