"""pytest-reasoning-evals: language-model evaluations as pytest items.

The hooks here only delegate to EvalSession (session.py), registered as a plugin object per
session. Protocols (chaosbench/, dialectic/, or a package of a user's own) declare themselves
under the entry-point group `pytest_reasoning_evals.protocols` (protocol.ProtocolInfo); that
declaration is all the plugin knows of one until it is used.
"""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.declarations import declared_protocols, left_out_flag, load, warn_left_out
from pytest_reasoning_evals.options import add_model_flag, add_options
from pytest_reasoning_evals.session import EVAL_SESSION, EvalSession
from pytest_reasoning_evals.speed import SPEED_PLUGIN, SpeedPlugin


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser, declared_protocols())


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]):
    problem = left_out_flag(args)
    if problem:  # else argparse's "unrecognized arguments" would not say why
        raise pytest.UsageError(problem)
    yield
    add_model_flag(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """A command a protocol runs as several runs of its own (several --eval-prompts folders) ends here."""
    if config.option.help or config.option.version:
        return None
    for info in declared_protocols():
        code = load(info.cmdline_main)(config) if info.cmdline_main else None
        if code is not None:
            return code
    return None


@pytest.hookimpl(tryfirst=True)  # so the thaw below is the first cleanup on pytest's stack, run last
def pytest_configure(config: pytest.Config) -> None:
    protocols = declared_protocols()
    if not hasattr(config, "workerinput"):  # a worker's stderr would repeat it
        warn_left_out()
    for info in protocols:
        config.addinivalue_line("markers", info.marker)
    session = EvalSession(config, protocols)
    if session.settings.estimate and hasattr(config.option, "dist"):
        # an estimate runs in this process (before xdist's own configure): no worker is started
        config.option.dist, config.option.tx = "no", []
    config.stash[EVAL_SESSION] = session
    config.pluginmanager.register(session, "pytest-reasoning-evals-session")
    speed = SpeedPlugin(session)
    # registered unless `-p no:pytest-reasoning-evals-speed` blocked it
    if config.pluginmanager.register(speed, SPEED_PLUGIN):
        # after pytest's closing garbage collections (unraisableexception), which then need not walk every item
        config.add_cleanup(speed.freezer.thaw)
    for info in protocols:
        if info.fixture_plugin:
            config.pluginmanager.register(load(info.fixture_plugin)(session), f"pytest-reasoning-evals-{info.name}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    metafunc.config.stash[EVAL_SESSION].parametrize(metafunc)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    return config.stash[EVAL_SESSION].teststatus(report)
