"""Fixtures the eval modules use: the model under test, the prompt, and the outcome reporter."""

from __future__ import annotations

import pytest

from plugin.chaosbench.prompts import PromptTemplate
from plugin.chaosbench.scoring import failure_reason
from plugin.guard import GuardedModel
from plugin.session import EVAL_SESSION, RECORD_KEY, EvalSession


@pytest.fixture(scope="session")
def eval_session(pytestconfig: pytest.Config) -> EvalSession:
    return pytestconfig.stash[EVAL_SESSION]


@pytest.fixture
def model(eval_session: EvalSession, request: pytest.FixtureRequest) -> GuardedModel:
    """The model chosen with --model (built once per process), behind the key and budget checks."""
    return eval_session.guard.for_item(request.node)


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


@pytest.fixture
def dialectic_runner(eval_session: EvalSession):
    """The dialectic protocol of this process (responses and verdicts generated once, cached)."""
    if eval_session.spec.provider == "baseline":
        # oracle / always-true / random answer TRUE-FALSE questions; there is nothing to judge
        pytest.skip(f"dialectic items need a language model; {eval_session.spec.alias!r} is a TRUE/FALSE baseline")
    return eval_session.dialectic_runner


@pytest.fixture
def dialectic_response(dialectic_item, dialectic_runner) -> dict:
    """The response to this item's (case, variant) from the model under test."""
    case, variant = dialectic_item
    return dialectic_runner.response(case, variant)


@pytest.fixture
def resolution_variant(eval_session: EvalSession):
    return eval_session.resolution_variant()


@pytest.fixture
def compare_models(eval_session: EvalSession) -> list[str]:
    return list(eval_session.settings.compare_models)
