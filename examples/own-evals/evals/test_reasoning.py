"""The lab's reasoning evals: the plugin's ChaosBench items (our questions.jsonl) and its
dialectic items (our dialectic.yaml and prompts/), the question items under our own names."""

# questions first, then dialogues (collection follows these lines, so no import sorting)
from pytest_reasoning_evals.chaosbench.items import test_question as test_lab_question  # noqa: F401, I001
from pytest_reasoning_evals.chaosbench.items import test_dialogue as test_lab_dialogue  # noqa: F401
from pytest_reasoning_evals.dialectic.items import *  # noqa: F401,F403
