"""Fixtures the eval modules use: the model under test, the prompt, and the outcome reporter."""

from __future__ import annotations

import pytest

from plugin.chaosbench.prompts import PromptTemplate
from plugin.chaosbench.scoring import failure_reason
from plugin.providers import AuthError, Model
from plugin.providers.base import Completion, Request
from plugin.session import EVAL_SESSION, RECORD_KEY, EvalSession


@pytest.fixture(scope="session")
def eval_session(pytestconfig: pytest.Config) -> EvalSession:
    return pytestconfig.stash[EVAL_SESSION]


class StopOnAuthError:
    """A refused key stops the whole session after the first item that sees it (also under
    xdist: the worker's shouldstop reaches the controller), and this process sends no more
    requests; no thousands of items failing one by one."""

    def __init__(self, model: Model, session: pytest.Session):
        self.model = model
        self.session = session
        self.refused: str | None = None

    def complete(self, request: Request) -> Completion:
        if self.refused is None:
            try:
                return self.model.complete(request)
            except AuthError as exc:
                self.refused = str(exc)
                self.session.shouldstop = f"model key refused: {exc}"
        pytest.fail(self.refused, pytrace=False)


@pytest.fixture(scope="session")
def model(eval_session: EvalSession, request: pytest.FixtureRequest) -> Model:
    """The model chosen with --model (built once per process)."""
    return StopOnAuthError(eval_session.model, request.session)


@pytest.fixture(scope="session")
def chaosbench_prompt(eval_session: EvalSession) -> PromptTemplate:
    """The ChaosBench prompt template chosen with --mode."""
    return eval_session.prompt


@pytest.fixture
def report_outcome(request: pytest.FixtureRequest):
    """Send an item's record to the controller; a wrong or UNKNOWN answer fails the item with
    a one-line reason (no traceback). Whether the session fails is up to the gates."""

    def report(record: dict) -> None:
        request.node.user_properties.append((RECORD_KEY, record))
        reason = failure_reason(record)
        if reason:
            pytest.fail(reason, pytrace=False)

    return report
