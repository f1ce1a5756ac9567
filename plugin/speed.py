"""The speed machinery of a long eval run, one plugin object beside the session (SPEED_PLUGIN):
the garbage-collector freezer (frozen.py), lean kept reports (lean_reports.py), consumed payloads
let go, shared junit properties, and the cassettes this process will read, for the cassette
index's warmer (cassette_index.py), and a large run's page writers started ahead (report.PageWriter).
None of it changes what a run decides or writes:
`-p no:pytest-reasoning-evals-speed` turns it all off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.frozen import Freezer
from pytest_reasoning_evals.lean_reports import make_lean
from pytest_reasoning_evals.stash import PAYLOAD, attach, payload_of

if TYPE_CHECKING:
    from pytest_reasoning_evals.report import PageWriter
    from pytest_reasoning_evals.session import EvalSession

SPEED_PLUGIN = "pytest-reasoning-evals-speed"
STATUS = "teststatus"  # a consumed payload keeps only its pytest_report_teststatus answer
MOST_SHARED_PROPERTIES = 4096


class SpeedPlugin:
    def __init__(self, session: EvalSession):
        self.session = session
        self.freezer = Freezer()
        self.terminalreporter = None  # controller: pytest's, which keeps every report to the end
        self.from_workers = False  # controller: the reports arrive from xdist workers
        self._status_payloads: dict[tuple, dict] = {}
        self._properties: dict[tuple, tuple] = {}
        self._page_writers: dict[str, PageWriter | None] = {}  # protocol name -> its page's writer

    # --- the freezer: from the first eval items made (or, on the xdist controller, results) ---

    @pytest.hookimpl(tryfirst=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        # before the eval items are made: they are frozen as they come
        used = set(metafunc.fixturenames)
        if any(used.intersection(info.fixtures) for info in self.session.infos.values()):
            self.freezer.start()

    def pytest_itemcollected(self) -> None:
        self.freezer.tick()

    def pytest_runtest_logfinish(self) -> None:
        self.freezer.tick()

    # --- what pytest keeps of each item and report, to the end of the run ---

    # trylast: after the item ran, before its call report copies its properties
    @pytest.hookimpl(trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        if PAYLOAD in item.stash and item.user_properties:
            # every item and its call report keep their properties, and most values repeat
            item.user_properties[:] = map(self._shared_property, item.user_properties)

    def _shared_property(self, pair: tuple[str, object]) -> tuple[str, object]:
        # the value's type in the key: ("x", 1) == ("x", True) must not become one
        try:
            key = (pair, type(pair[1]))
            shared = self._properties.get(key)
        except TypeError:  # a value that cannot be hashed
            return pair
        if shared is None and len(self._properties) < MOST_SHARED_PROPERTIES:
            shared = self._properties[key] = pair
        return shared or pair

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.session.is_worker:
            self.terminalreporter = session.config.pluginmanager.get_plugin("terminalreporter")
            self.from_workers = session.config.pluginmanager.has_plugin("dsession")  # xdist's controller

    # trylast: every other hook sees the report whole first
    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.session.is_worker:
            return
        payload = payload_of(report) if report.when in ("setup", "call") else None
        if payload is not None:
            # the controller under xdist collects nothing: it freezes from its first result
            self.freezer.start()
            self._start_page_writer(payload["protocol"])
            self._let_go(report, payload)
        if self.terminalreporter is not None and not self.session.infos.keys().isdisjoint(report.keywords):
            # an eval item's: its protocol's marker is a keyword
            make_lean(report, self.terminalreporter.stats, self.from_workers)

    def _let_go(self, report: pytest.TestReport, payload: dict) -> None:
        """The protocol has consumed the payload: the kept report holds only its status answer,
        one payload per distinct answer."""
        config = self.session.config
        status = config.hook.pytest_report_teststatus(report=report, config=config)
        if status is None:
            return
        key = (payload["protocol"], status)
        try:
            swapped = self._status_payloads.setdefault(key, {"protocol": key[0], STATUS: status})
        except TypeError:  # an answer with markup (a dict): not shared
            swapped = {"protocol": key[0], STATUS: status}
        attach(report, swapped)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport):
        payload = payload_of(report)
        if payload is not None and STATUS in payload:
            return payload[STATUS]
        return None

    # --- a large run's page: its writer's start (Python, matplotlib) while the items run ---

    def _start_page_writer(self, protocol: str) -> None:
        from pytest_reasoning_evals import report as pages  # (lazy: an eval session's only)

        if protocol not in self._page_writers and self.session.pytest_session.testscollected >= pages.APART_FROM:
            self._page_writers[protocol] = pages.PageWriter.start()

    def page_writer(self, protocol: str) -> PageWriter | None:
        """The writer started for `protocol`'s page, handed over once."""
        return self._page_writers.pop(protocol, None)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # the writers of pages never written (an interrupted run, a protocol that wrote none) end
        for writer in filter(None, self._page_writers.values()):
            writer.close()
        self._page_writers.clear()

    # --- the cassette index's warmer ---

    def planned_cassettes(self) -> Iterator[tuple[str, str]]:
        """(cassette folder, item id) of the cassette each item of this process reads, in run order; none on
        an xdist worker, whose siblings keep the cores busy."""
        if self.session.is_worker or self.session.pytest_session is None:
            return
        protocols = list(self.session.protocols.values())
        for item in self.session.pytest_session.items:
            for protocol in protocols:
                cassette = protocol.cassette_of(item)
                if cassette is not None:
                    yield cassette
                    break
