"""pytest plugin for language-model evaluations. Hooks here only delegate: the run's state and
logic live in EvalSession (plugin/session.py), registered as a plugin object per session."""

from __future__ import annotations

import pytest

from plugin.chaosbench.questions import FAMILIES, SPLITS, CaseFileError
from plugin.options import add_options
from plugin.session import EVAL_SESSION, EvalSession, record_of

pytest_plugins = ["plugin.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for family in FAMILIES:
        config.addinivalue_line("markers", f"{family}: ChaosBench-Logic question of the {family} family")
    for split in SPLITS:
        config.addinivalue_line("markers", f"{split}: ChaosBench-Logic question of the {split} split")
    session = EvalSession(config)
    config.stash[EVAL_SESSION] = session
    config.pluginmanager.register(session, "eval-session")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "chaosbench_question" not in metafunc.fixturenames:
        return
    try:
        questions = metafunc.config.stash[EVAL_SESSION].questions()
    except CaseFileError as exc:
        # CollectError prints just the message (file:line: what is wrong), not a traceback.
        raise pytest.Collector.CollectError(str(exc)) from None
    metafunc.parametrize(
        "chaosbench_question",
        [pytest.param(q, id=q.id, marks=[getattr(pytest.mark, q.family), getattr(pytest.mark, q.split)]) for q in questions],
    )


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    status = (record_of(report) or {}).get("status") if report.when == "call" else None
    if status == "unknown":
        return "unknown", "U", "UNKNOWN"
    if status == "wrong":
        return "failed", "F", "WRONG"
    return None
