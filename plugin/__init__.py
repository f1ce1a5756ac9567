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
    config.addinivalue_line("markers", "dialectic: dialectical-reasoning evaluation item")
    # A dialectic case's check items read one generated response: keep a case on one worker
    # (the controller's scheduler, plugin/grouping.py, does the grouping).
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    session = EvalSession(config)
    config.stash[EVAL_SESSION] = session
    config.pluginmanager.register(session, "eval-session")


def _marks(item) -> list[pytest.MarkDecorator]:
    return [getattr(pytest.mark, item.family), getattr(pytest.mark, item.split)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    session = metafunc.config.stash[EVAL_SESSION]
    names = metafunc.fixturenames
    try:
        if "chaosbench_question" in names or "chaosbench_dialogue" in names:
            questions, dialogues = session.items()
            for name, items in (("chaosbench_question", questions), ("chaosbench_dialogue", dialogues)):
                if name in names:
                    metafunc.parametrize(name, [pytest.param(i, id=i.id, marks=_marks(i)) for i in items])
        if "dialectic_item" in names or "dialectic_case" in names:
            cases, variants = session.dialectic_items()
            if "dialectic_item" in names:
                metafunc.parametrize("dialectic_item", [
                    pytest.param((c, v), id=f"{c.id}-{v.name}", marks=_dialectic_marks(c)) for c in cases for v in variants])
            if "dialectic_case" in names:
                metafunc.parametrize("dialectic_case", [pytest.param(c, id=c.id, marks=_dialectic_marks(c)) for c in cases])
    except CaseFileError as exc:
        # CollectError prints just the message (file:line: what is wrong), not a traceback.
        raise pytest.Collector.CollectError(str(exc)) from None


def _dialectic_marks(case) -> list[pytest.MarkDecorator]:
    return [pytest.mark.dialectic, pytest.mark.xdist_group(case.id)]


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    status = (record_of(report) or {}).get("status") if report.when == "call" else None
    if status == "unknown":
        return "unknown", "U", "UNKNOWN"
    if status == "wrong":
        return "failed", "F", "WRONG"
    return None
