"""The fixtures of ChaosBench items. `chaosbench_question` and `chaosbench_dialogue` are
parametrized by the plugin from the bank (--eval-cases and the selection options); the others
are made per session by `fixtures_for` and registered by the plugin's pytest_configure."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_reasoning_evals.session import EvalSession


def fixtures_for(session: EvalSession) -> types.ModuleType:
    """The session's ChaosBench fixtures, as a plugin module (pytest reads fixtures from a
    module's attributes). Session-scoped and without arguments (pytest resolves a fixture's
    arguments on every item), they reach the session through this closure. Override any of
    them in a conftest.py as usual."""

    def protocol():
        return session.protocol("chaosbench")

    @pytest.fixture(scope="session")
    def chaosbench_prompt():
        """The prompt template chosen with --eval-mode (from --eval-prompts)."""
        return protocol().prompt

    @pytest.fixture(scope="session")
    def chaosbench_model():
        """The model chosen with --model (built once per process), behind the key and budget
        checks; it acts on the item running now."""
        return protocol().model_for_items()

    @pytest.fixture(scope="session")
    def chaosbench_reprompt():
        """How many times an UNKNOWN answer to a question is asked again (--eval-reprompt)."""
        return protocol().own.reprompt

    @pytest.fixture(scope="session")
    def chaosbench_answer_words():
        """The team's own answer words per label (--eval-answer-words), read beside TRUE/FALSE/YES/NO."""
        return protocol().own.answer_words

    @pytest.fixture(scope="session")
    def chaosbench_outcome():
        """`chaosbench_outcome(record)`: send the running item's record to the controller; a
        wrong or UNKNOWN answer fails the item with a one-line reason."""
        chaosbench = protocol()
        return lambda record: chaosbench.send_record(session.current_item, record)

    plugin = types.ModuleType(f"{__name__}.session")
    plugin.chaosbench_prompt, plugin.chaosbench_model, plugin.chaosbench_reprompt = (
        chaosbench_prompt,
        chaosbench_model,
        chaosbench_reprompt,
    )
    plugin.chaosbench_answer_words, plugin.chaosbench_outcome = chaosbench_answer_words, chaosbench_outcome
    return plugin
