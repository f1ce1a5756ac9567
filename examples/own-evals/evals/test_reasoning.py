"""The lab's reasoning evals: the plugin's ChaosBench items (our questions.jsonl) and its
dialectic items (our dialectic.yaml and prompts/), collected with one import line each."""

from pytest_reasoning_evals.chaosbench.items import test_question, test_dialogue  # noqa: F401, I001
from pytest_reasoning_evals.dialectic.items import *  # noqa: F401,F403
