"""The fixtures of ChaosBench items. `chaosbench_question` and `chaosbench_dialogue` are
parametrized by the plugin from the bank (--eval-cases and the selection options)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate


def _protocol(config: pytest.Config):
    from pytest_reasoning_evals.session import EVAL_SESSION

    return config.stash[EVAL_SESSION].protocol("chaosbench")


@pytest.fixture(scope="session")
def chaosbench_prompt(pytestconfig: pytest.Config) -> "PromptTemplate":
    """The prompt template chosen with --eval-mode (from --eval-prompts)."""
    return _protocol(pytestconfig).prompt


@pytest.fixture
def chaosbench_model(request: pytest.FixtureRequest):
    """The model chosen with --model (built once per process), behind the key and budget checks."""
    return _protocol(request.config).model_for(request.node)


@pytest.fixture
def chaosbench_outcome(request: pytest.FixtureRequest):
    """`chaosbench_outcome(record)`: send the item's record to the controller; a wrong or UNKNOWN
    answer fails the item with a one-line reason."""
    protocol = _protocol(request.config)
    return lambda record: protocol.report(request.node, record)
