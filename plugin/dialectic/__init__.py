"""Dialectical-reasoning evaluation (SPEC 6): extraction, process-confidence coupling, mode,
LLM judges, multi-turn resolution, cross-provider comparison, human spot-check.

PROTOCOL is its declaration, found by the plugin through the entry point in pyproject.toml."""

from pytest_reasoning_evals.declarations import ProtocolInfo
from pytest_reasoning_evals.dialectic.settings import OPTIONS, dialectic_settings

PROTOCOL = ProtocolInfo(
    "dialectic",
    "pytest_reasoning_evals.dialectic.protocol:Protocol",
    ("dialectic_item", "dialectic_case"),
    "dialectic(case, variant): a dialectical-reasoning item of this case and prompt variant",
    "dialectical-reasoning evaluation",
    options=OPTIONS,
    settings=dialectic_settings,
    fixture_plugin="pytest_reasoning_evals.dialectic.fixtures:fixtures_for",
    commands="pytest_reasoning_evals.dialectic.commands:add_commands",
    report_view="pytest_reasoning_evals.dialectic.report_view:read_run",
    runs="pytest_reasoning_evals.dialectic.runs:runs_table",
    # every item of a case reads the case's one response per variant: they run in one process
    grouped=("dialectic_item", "dialectic_case"),
    eager_options=("baseline",),
    gate_options=("max-hard-fails", "require-variant-pass", "dialectic-baseline"),
    baseline_option="dialectic-baseline",
)
