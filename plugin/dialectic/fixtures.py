"""The fixtures of dialectic items. `dialectic_item` ((case, variant)) and `dialectic_case` are
parametrized by the plugin from the cases and variants (--eval-dialectic-cases,
--eval-variant-prompts, --eval-variant)."""

from __future__ import annotations

import pytest


def _protocol(config: pytest.Config):
    from pytest_reasoning_evals.session import EVAL_SESSION

    return config.stash[EVAL_SESSION].protocol("dialectic")


@pytest.fixture
def dialectic_runner(request: pytest.FixtureRequest):
    """The dialectic protocol of this process (responses and verdicts generated once, cached)."""
    protocol = _protocol(request.config)
    if protocol.runner is None:
        pytest.skip(f"dialectic items need a language model; {protocol.settings.model!r} is a TRUE/FALSE baseline")
    return protocol.runner


@pytest.fixture
def dialectic_response(dialectic_item, dialectic_runner) -> dict:
    """The response to this item's (case, variant) from the model under test."""
    case, variant = dialectic_item
    return dialectic_runner.response(case, variant)


@pytest.fixture
def dialectic_resolution_variant(request: pytest.FixtureRequest):
    """The variant the resolution and cross-provider items use (the first prompted one)."""
    return _protocol(request.config).resolution_variant


@pytest.fixture
def dialectic_compare_models(request: pytest.FixtureRequest) -> list[str]:
    return list(_protocol(request.config).settings.compare_models)


@pytest.fixture
def dialectic_outcome(request: pytest.FixtureRequest):
    """`dialectic_outcome(record)`: send a check's record to the controller; a check that does not
    pass fails its item with its one-line reason."""
    protocol = _protocol(request.config)
    return lambda record: protocol.report(request.node, record)
