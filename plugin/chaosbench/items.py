"""The ChaosBench-Logic items: one per question, one per dialogue.

Collect them in your own project with one line in a test module under your eval folder:

    from pytest_reasoning_evals.chaosbench.items import test_question, test_dialogue  # noqa: F401, I001

The plugin parametrizes `chaosbench_question` and `chaosbench_dialogue` from the bank
(--eval-cases, --eval-split, --eval-family, --eval-max-items, shards, --eval-resume); ids are the
question and dialogue ids, and each item carries `chaosbench(family=..., split=...)`.
"""

from pytest_reasoning_evals.chaosbench.dialogues import run_dialogue
from pytest_reasoning_evals.chaosbench.scoring import ask


def test_question(
    chaosbench_question,
    chaosbench_prompt,
    chaosbench_model,
    chaosbench_reprompt,
    chaosbench_answer_words,
    chaosbench_outcome,
):
    chaosbench_outcome(
        ask(chaosbench_question, chaosbench_prompt, chaosbench_model, chaosbench_reprompt, chaosbench_answer_words)
    )


def test_dialogue(
    chaosbench_dialogue, chaosbench_prompt, chaosbench_model, chaosbench_answer_words, chaosbench_outcome
):
    chaosbench_outcome(run_dialogue(chaosbench_dialogue, chaosbench_prompt, chaosbench_model, chaosbench_answer_words))
