"""ChaosBench-Logic: one pytest item per question and one per dialogue.

The plugin parametrizes `chaosbench_question` and `chaosbench_dialogue` from the bank (--cases,
--split, --family, --max-items, --num-shards/--shard-index, --resume); ids are the question and
dialogue ids, and each item carries its family and split as markers.
"""

from plugin.chaosbench.dialogues import run_dialogue
from plugin.chaosbench.scoring import score


def test_question(chaosbench_question, chaosbench_prompt, model, report_outcome):
    completion = model.complete(chaosbench_prompt.request(chaosbench_question))
    report_outcome(score(chaosbench_question, completion, chaosbench_prompt.sha256))


def test_dialogue(chaosbench_dialogue, chaosbench_prompt, model, report_outcome):
    report_outcome(run_dialogue(chaosbench_dialogue, chaosbench_prompt, model))
