"""pytest-reasoning-evals: language-model evaluations as pytest items.

The hooks here only delegate to EvalSession (session.py), registered as a plugin object per
session. Each protocol lives in its own folder (chaosbench/, dialectic/) behind the interface of
protocol.py; PROTOCOLS is all the plugin knows of them until one is used.
"""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.chaosbench.fixtures import fixtures_for
from pytest_reasoning_evals.options import add_model_flag, add_options
from pytest_reasoning_evals.protocol import ProtocolInfo
from pytest_reasoning_evals.session import EVAL_SESSION, EvalSession
from pytest_reasoning_evals.speed import SPEED_PLUGIN, SpeedPlugin

pytest_plugins = ["pytest_reasoning_evals.dialectic.fixtures"]  # ChaosBench's are per session (pytest_configure)

PROTOCOLS = (
    ProtocolInfo(
        "chaosbench",
        "pytest_reasoning_evals.chaosbench.protocol",
        ("chaosbench_question", "chaosbench_dialogue"),
        "chaosbench(family, split): a ChaosBench-Logic question or dialogue of this family and split",
        eager_options=("resume", "max_cost", "baseline"),
        gate_options=("min_accuracy", "strict_items", "min_coverage", "max_fol_violation_rate", "fail_on_regression"),
    ),
    ProtocolInfo(
        "dialectic",
        "pytest_reasoning_evals.dialectic.protocol",
        ("dialectic_item", "dialectic_case"),
        "dialectic(case, variant): a dialectical-reasoning item of this case and prompt variant",
        grouped=True,
        eager_options=("dialectic_baseline",),
        gate_options=("max_hard_fails", "require_variant_pass", "dialectic_baseline"),
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]):
    yield
    add_model_flag(parser)


@pytest.hookimpl(tryfirst=True)  # so the thaw below is the first cleanup on pytest's stack, run last
def pytest_configure(config: pytest.Config) -> None:
    for info in PROTOCOLS:
        config.addinivalue_line("markers", info.marker)
    session = EvalSession(config, PROTOCOLS)
    config.stash[EVAL_SESSION] = session
    config.pluginmanager.register(session, "pytest-reasoning-evals-session")
    speed = SpeedPlugin(session)
    # registered unless `-p no:pytest-reasoning-evals-speed` blocked it
    if config.pluginmanager.register(speed, SPEED_PLUGIN):
        # after pytest's closing garbage collections (unraisableexception), which then need not walk every item
        config.add_cleanup(speed.freezer.thaw)
    config.pluginmanager.register(fixtures_for(session), "pytest-reasoning-evals-chaosbench-fixtures")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    metafunc.config.stash[EVAL_SESSION].parametrize(metafunc)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    return config.stash[EVAL_SESSION].teststatus(report)
