"""EvalSession: the generic lifecycle behind the plugin's hooks, one per pytest process: protocols
created on first use, payloads routed to them, their gates combined into the exit status
(docs/design.md, "The shape")."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.declarations import ProtocolInfo, left_out_fixture, load
from pytest_reasoning_evals.options import Settings, is_set, settings_from
from pytest_reasoning_evals.protocol import EvalProtocol, harness_error_payload, not_asked_payload
from pytest_reasoning_evals.session_end import SessionEnd
from pytest_reasoning_evals.speed import SPEED_PLUGIN, SpeedPlugin
from pytest_reasoning_evals.spend import SpendLedger
from pytest_reasoning_evals.stash import (
    CALLS,
    FAILURE,
    HARNESS_ERROR,
    NOT_ASKED,
    PAYLOAD,
    attach,
    deserialized_payload,
    payload_of,
    serialized_payload,
)

if TYPE_CHECKING:
    from pytest_reasoning_evals.progress import Progress

EVAL_SESSION = pytest.StashKey["EvalSession"]()
UNCLAIMED = "eval_unclaimed_usd"  # workeroutput: per alias, what calls made ahead paid for items that never ran
SELECTION = "eval_selection"  # workeroutput: the protocols whose items the worker collected, and selected
STARTED_NS_KEY = "eval_started_ns"  # workerinput: when the run started (the controller's clock, in ns)
USAGE = "pytest-reasoning-evals: "  # starts the collection error of a usage problem (unknown model, missing key)


class EvalSession:
    def __init__(self, config: pytest.Config, protocols: tuple[ProtocolInfo, ...]):
        self.config = config
        self.settings: Settings = settings_from(config, protocols)  # options only: no file is read
        self.is_worker = hasattr(config, "workerinput")
        self.infos = {info.name: info for info in protocols}
        self.protocols: dict[str, EvalProtocol] = {}
        self.pytest_session: pytest.Session | None = None
        self.started = time.monotonic()
        # files' clock: what this run wrote is newer (a rewrite's cassettes); a worker takes the
        # controller's, whose batch may have saved cassettes before the worker started
        self.started_ns = getattr(config, "workerinput", {}).get(STARTED_NS_KEY) or time.time_ns()
        self.end = SessionEnd(self)  # controller: gates, exit status, closing lines
        self.collected: set[str] = set()  # protocols asked for items (they may all be deselected); every process's
        self.selected: set[str] = set()  # ... with an item the session selected (by file, -k, -m)
        self._reported: set[str] = set()  # collection errors already shown
        self.progress: Progress | None = None  # controller: the live run's progress line
        self.current_item: pytest.Item | None = None  # the item pytest is running in this process
        self.terminalreporter = None  # controller: pytest's, from the session's start
        self.ledger = SpendLedger()  # what this process paid and, on the controller, the run (spend.py)
        self._batched = False  # controller under xdist: the protocols' batches were sent (--eval-batch)

    # --- protocols and shared services, on first use ---

    def protocol(self, name: str) -> EvalProtocol:
        if name not in self.protocols:
            self.protocols[name] = load(self.infos[name].protocol)(self)
        return self.protocols[name]

    @functools.cached_property
    def models(self):
        """The call path of every model call of every protocol (models.py); the cassettes the items
        will read (the speed plugin's plan) are parsed ahead into the index (cassette_index.py)."""
        from pytest_reasoning_evals.models import Models

        return Models(
            self.settings,
            lambda: self.pytest_session,
            self.config,
            budget=self.budget,
            running=lambda: self.current_item,
            ahead=self.ahead_request,
            planned_cassettes=self.speed.planned_cassettes if self.speed is not None else None,
            run_started_ns=self.started_ns,
        )

    @property
    def speed(self) -> SpeedPlugin | None:
        """The speed plugin (speed.py), unless `-p no:` disabled it."""
        return self.config.pluginmanager.get_plugin(SPEED_PLUGIN)

    @functools.cached_property
    def budget(self):
        """--eval-max-cost (budget.py): each process spends its share of the ledger, the controller checks the run's."""
        from pytest_reasoning_evals.budget import Budget

        return Budget.of_process(self.settings, self.config, self.ledger)

    def ahead_request(self, item: pytest.Item):
        """The request `item` will send first, if its protocol can build it before any answer."""
        mine = (protocol for protocol in self.protocols.values() if protocol.parameter(item) is not None)
        return next((protocol.ahead_request(item) for protocol in mine), None)

    def num_workers(self) -> int:
        return int(self.config.getoption("numprocesses", None) or 0) or 1

    # --- collection (every process that collects) ---

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        defined = getattr(metafunc, "_arg2fixturedefs", {})  # pytest's: the fixtures something provides
        problem = left_out_fixture(metafunc.fixturenames, lambda name: name in defined or name == "request")
        if problem:
            self._collect_error(USAGE + problem)
        for info in self.infos.values():
            if not set(info.fixtures) & set(metafunc.fixturenames):
                continue
            from pytest_reasoning_evals.errors import UsageProblem  # an eval item's: a plain test imports no model

            protocol = self.protocol(info.name)
            self.collected.add(info.name)
            try:
                protocol.parametrize(metafunc)
            except (CaseFileError, UsageProblem) as exc:
                self._collect_error((USAGE if isinstance(exc, UsageProblem) else "") + str(exc))
                protocol.parametrize_nothing(metafunc)

    def _collect_error(self, message: str) -> None:
        """A collection error of `message`, shown once (it stops the run): later, nothing."""
        if message not in self._reported:
            self._reported.add(message)
            # CollectError prints just the message (file:line: what is wrong), no traceback
            raise pytest.Collector.CollectError(message) from None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A usage problem found while collecting ends the session as a usage error (exit 4),
        once: here in a single process, on the xdist controller when a worker reports it."""
        if not self.is_worker and report.failed and str(report.longrepr).startswith(USAGE):
            raise pytest.UsageError(str(report.longrepr))

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        """A protocol's placeholder for an empty parameter set is not collected (not counted, not deselected)."""
        report = yield
        if self.protocols and report.result:
            report.result = [node for node in report.result if not self._placeholder(node)]
        return report

    def _placeholder(self, node) -> bool:
        return isinstance(node, pytest.Item) and any(p.placeholder(node) for p in self.protocols.values())

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """Before -k / -m select: a protocol's items get their extra keywords."""
        params = getattr(item, "callspec", None)
        if params is not None:
            for info in self.infos.values():
                if info.name in self.protocols and set(info.fixtures) & set(params.params):
                    self.protocols[info.name].item_collected(item)

    @pytest.hookimpl(trylast=True)  # after -k / -m have deselected
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # what the person selected, before a protocol drops its own (items a resume already has)
        self.selected = {
            name for name, protocol in self.protocols.items() if any(protocol.parameter(i) is not None for i in items)
        }
        drop: list[pytest.Item] = []
        for protocol in self.protocols.values():
            drop += protocol.modify_items(items)
        if drop:
            dropped = set(map(id, drop))
            config.hook.pytest_deselected(items=drop)
            items[:] = [item for item in items if id(item) not in dropped]

    # --- the running item (what session-scoped eval fixtures act on) ---

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        self.current_item = item
        try:
            return (yield)
        finally:
            self.current_item = None
            calls = item.stash.get(CALLS, None)
            if calls is not None:  # paid, yet no report took it (Ctrl-C mid-item): the run still counts it
                del item.stash[CALLS]
                self.ledger.claim({self.settings.model: calls["spent"]})

    # --- reports: the payload rides on the call report ---

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        payload = _item_payload(self.protocols, item, call, report)
        if payload is not None and CALLS in item.stash:
            # every protocol's calls, for the controller's ledger
            payload["calls"] = item.stash[CALLS]
            del item.stash[CALLS]
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report):
        data = yield
        payload = payload_of(report)
        if payload is not None and data is not None:
            key, value = serialized_payload(payload)
            data[key] = value
        return data

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: dict):
        payload = deserialized_payload(data) if isinstance(data, dict) else None
        report = yield
        if payload is not None and report is not None:
            attach(report, payload)
        return report

    def teststatus(self, report: pytest.TestReport):
        payload = payload_of(report) if report.when == "call" else None
        if payload is None:
            return None
        status = None if payload.get(HARNESS_ERROR) else self.protocol(payload["protocol"]).teststatus(payload)
        return self.progress.teststatus(status, report) if self.progress else status

    # --- xdist (controller) ---

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """Controller -> worker: what started protocols tell workers (resumed ids...), the run's new folders."""
        from pytest_reasoning_evals.budget import TOKEN_KEY
        from pytest_reasoning_evals.results import NEW_FOLDERS_KEY

        node.workerinput[NEW_FOLDERS_KEY] = self.new_folders
        node.workerinput[TOKEN_KEY] = self.budget.run_token
        node.workerinput[STARTED_NS_KEY] = self.started_ns
        for protocol in self.protocols.values():
            node.workerinput.update(protocol.worker_input())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        """With --dist load, the protocols' scheduling (grouping.scheduler_for)."""
        from pytest_reasoning_evals.grouping import scheduler_for

        return scheduler_for(self, config, log)

    @functools.cached_property
    def new_folders(self) -> list[str]:
        """Controller, before its first worker starts: the output folders that do not exist yet
        (a run that writes nothing removes those it made, results.RunDirLock)."""
        from pytest_reasoning_evals.results import missing_folders

        return [str(p) for p in missing_folders(self.settings.out_dir)]

    # --- the run (controller) ---

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.pytest_session = session
        if self.is_worker:
            return
        from pytest_reasoning_evals.progress import Progress

        self.terminalreporter = self.config.pluginmanager.get_plugin("terminalreporter")
        self.progress = Progress(self.terminalreporter, self.settings.max_cost, self.ledger)
        for info in self.infos.values():  # options such as a resume need the controller first
            own = self.settings.own.get(info.name)
            if own is not None and any(is_set(getattr(own, name)) for name in info.eager_options):
                self.protocol(info.name).start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session):
        """--eval-estimate prices the items (estimate.py), none runs; else protocols' work before them (--eval-batch)."""
        if self.is_worker:
            return None
        if self.settings.estimate:
            self.end.price(session)
            return True  # no item runs; pytest's exit status is 0
        for protocol in list(self.protocols.values()):  # (under xdist the controller has no items)
            protocol.before_items(session.items)
        return None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """Controller under xdist, at the first worker's collection (xdist schedules no item before
        this returns): the protocols' batches (--eval-batch), from the collected ids."""
        if not self.settings.batch or self._batched:
            return
        self._batched = True
        for name, info in self.infos.items():
            # a protocol not started here is only looked at: the one its results start is another
            (self.protocols.get(name) or load(info.protocol)(self)).before_collected(ids)
        self.budget.tell_workers(self.ledger.run_spent())  # what the batches left out and paid
        self.budget.mark_if_spent()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport):
        if self.is_worker:
            return (yield)
        payload = payload_of(report) if report.when in ("setup", "call") else None
        if payload is not None:
            if "calls" in payload:  # once, before the protocol's outputs read the ledger
                answered = "not_asked" not in payload and not payload.get(HARNESS_ERROR)
                self.ledger.add_item(payload["protocol"], payload["calls"], answered)
                self.budget.mark_if_spent()
            protocol = self.protocol(payload["protocol"])
            protocol.active = True
            protocol.add(payload)
            self.progress.add(self.pytest_session.testscollected)
            self.end.harness_failures += bool(payload.get(HARNESS_ERROR))
        elif report.failed:
            self.end.harness_failures += 1
        return (yield)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """Controller: what a worker's calls made ahead paid for items that never ran, and which
        protocols it collected and selected (before the controller's own sessionfinish: xdist's
        loop ends once every worker is down)."""
        output = getattr(node, "workeroutput", {})
        self.ledger.claim(output.get(UNCLAIMED, {}))
        collected, selected = output.get(SELECTION, ((), ()))
        self.collected.update(collected)
        self.selected.update(selected)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if "models" in self.__dict__:  # built: calls still running ahead end before the outputs are written
            self.ledger.claim(self.models.close(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED))
        if self.is_worker:
            self.config.workeroutput[UNCLAIMED] = self.ledger.unclaimed  # xdist sends it after this hook
            self.config.workeroutput[SELECTION] = (sorted(self.collected), sorted(self.selected))
            return
        if "budget" in self.__dict__:
            self.budget.close()
        if self.progress is not None:
            self.progress.close()  # the last line shows all that was paid, calls made ahead too
        self.end.finish(session)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        self.end.terminal_summary(terminalreporter)


def _item_payload(protocols: dict, item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> dict | None:
    """The payload the report carries, attached: the item's record (a call report), or why it was
    not asked (skipped by the budget), or its harness error; None for any other report."""
    payload = item.stash.get(PAYLOAD, None) if call.when == "call" else None
    if payload is not None:
        del item.stash[PAYLOAD]  # the report carries it now; the item (kept to the end) need not
        failure = item.stash.get(FAILURE, None)
        if failure is not None and report.outcome == "passed":
            report.outcome, report.longrepr = "failed", failure  # the item's one-line reason
    elif report.skipped and call.when in ("setup", "call") and NOT_ASKED in item.stash:
        payload = not_asked_payload(protocols, item, item.stash[NOT_ASKED])
    elif report.failed and call.when in ("setup", "call") and call.excinfo is not None:
        payload = harness_error_payload(protocols, item, call.excinfo)
    if payload is not None:
        attach(report, payload)
    return payload
