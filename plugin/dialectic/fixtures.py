"""The fixtures of dialectic items. `dialectic_item` ((case, variant)) and `dialectic_case` are
parametrized by the plugin from the cases and variants (--eval-dialectic-cases,
--eval-variant-prompts, --eval-variant); the others are made per session by `fixtures_for`."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_reasoning_evals.session import EvalSession


def fixtures_for(session: EvalSession) -> types.ModuleType:
    """The session's dialectic fixtures, as a plugin module (pytest reads fixtures from a module's
    attributes); they reach the session through this closure. Override any in a conftest.py."""

    def protocol():
        return session.protocol("dialectic")

    @pytest.fixture
    def dialectic_runner():
        """The dialectic protocol of this process (responses and verdicts generated once, cached)."""
        dialectic = protocol()
        if dialectic.runner is None:
            pytest.skip(f"dialectic items need a language model; {session.settings.model!r} is a TRUE/FALSE baseline")
        return dialectic.runner

    @pytest.fixture
    def dialectic_response(dialectic_item, dialectic_runner) -> dict:
        """The response to this item's (case, variant) from the model under test."""
        case, variant = dialectic_item
        return dialectic_runner.response(case, variant)

    @pytest.fixture
    def dialectic_resolution_variant():
        """The variant the resolution and cross-provider items use (the first prompted one)."""
        return protocol().resolution_variant

    @pytest.fixture
    def dialectic_compare_models() -> list[str]:
        return list(protocol().own.compare_models)

    @pytest.fixture
    def dialectic_pass_rule():
        """What a variant's pass and a judged response's need (settings.PASS_RULE)."""
        return protocol().own.pass_rule

    @pytest.fixture
    def dialectic_outcome(request: pytest.FixtureRequest):
        """`dialectic_outcome(record)`: send a check's record to the controller; a check that does not
        pass fails its item with its one-line reason."""
        dialectic = protocol()
        return lambda record: dialectic.send_record(request.node, record)

    plugin = types.ModuleType(f"{__name__}.session")
    plugin.dialectic_runner, plugin.dialectic_response = dialectic_runner, dialectic_response
    plugin.dialectic_resolution_variant, plugin.dialectic_compare_models = (
        dialectic_resolution_variant,
        dialectic_compare_models,
    )
    plugin.dialectic_pass_rule, plugin.dialectic_outcome = dialectic_pass_rule, dialectic_outcome
    return plugin
