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


# Session-scoped: set up once per process, not once per item (a function-scoped fixture costs
# pytest a `request` fixture definition per item). Both act on the item running now.


@pytest.fixture(scope="session")
def chaosbench_model(pytestconfig: pytest.Config):
    """The model chosen with --model (built once per process), behind the key and budget checks."""
    return _protocol(pytestconfig).model_for_items()


@pytest.fixture(scope="session")
def chaosbench_outcome(pytestconfig: pytest.Config):
    """`chaosbench_outcome(record)`: send the running item's record to the controller; a wrong or
    UNKNOWN answer fails the item with a one-line reason."""
    protocol = _protocol(pytestconfig)
    return lambda record: protocol.report(protocol.session.current_item, record)
