"""ChaosBench-Logic: one pytest item per question.

The plugin parametrizes `chaosbench_question` from the bank (--cases, --split, --family,
--max-items); ids are the question ids, and each item carries its family and split as markers.
"""

from plugin.chaosbench.scoring import score


def test_question(chaosbench_question, chaosbench_prompt, model, report_outcome):
    completion = model.complete(chaosbench_prompt.request(chaosbench_question))
    report_outcome(score(chaosbench_question, completion, chaosbench_prompt.sha256))
