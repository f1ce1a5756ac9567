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


def _marks(item) -> list[pytest.MarkDecorator]:
    return [getattr(pytest.mark, item.family), getattr(pytest.mark, item.split)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wanted = [name for name in ("chaosbench_question", "chaosbench_dialogue") if name in metafunc.fixturenames]
    if not wanted:
        return
    try:
        questions, dialogues = metafunc.config.stash[EVAL_SESSION].items()
    except CaseFileError as exc:
        # CollectError prints just the message (file:line: what is wrong), not a traceback.
        raise pytest.Collector.CollectError(str(exc)) from None
    for name in wanted:
        items = questions if name == "chaosbench_question" else dialogues
        metafunc.parametrize(name, [pytest.param(i, id=i.id, marks=_marks(i)) for i in items])


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    status = (record_of(report) or {}).get("status") if report.when == "call" else None
    if status == "unknown":
        return "unknown", "U", "UNKNOWN"
    if status == "wrong":
        return "failed", "F", "WRONG"
    return None
