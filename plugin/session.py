"""EvalSession: the generic lifecycle behind the plugin's hooks, one per pytest process: protocols
created on first use, payloads routed to them, their gates combined into the exit status
(docs/design.md, "The shape")."""

from __future__ import annotations

import functools
import shlex
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.options import Settings, is_set, settings_from
from pytest_reasoning_evals.progress import Tally
from pytest_reasoning_evals.protocol import (
    CALLS,
    FAILURE,
    HARNESS,
    HARNESS_ERROR,
    NOT_ASKED,
    PAYLOAD,
    STOPPED,
    UNKNOWN,
    WRONG,
    EvalProtocol,
    ProtocolInfo,
    attach,
    deserialized_payload,
    left_out_fixture,
    load,
    payload_of,
    serialized_payload,
)
from pytest_reasoning_evals.speed import SPEED_PLUGIN

if TYPE_CHECKING:
    from pytest_reasoning_evals.gates import GateResult
    from pytest_reasoning_evals.progress import Progress
    from pytest_reasoning_evals.report import PageWriter

EVAL_SESSION = pytest.StashKey["EvalSession"]()
SHOWN_WRONG = 30  # wrong answers and UNKNOWNs listed in the terminal without -v, one line each
UNCLAIMED = "eval_unclaimed_usd"  # workeroutput: per alias, what calls made ahead paid for items that never ran
SELECTION = "eval_selection"  # workeroutput: the protocols whose items the worker collected, and selected
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
        self.harness_failures = 0
        self.gates: list[GateResult] = []
        self.unrun: dict[str, list[GateResult]] = {}  # the gates of protocols none of whose items ran
        # protocol -> its ini gates left unjudged (none of its items selected)
        self.not_judged: dict[str, list[str]] = {}
        self.collected: set[str] = set()  # protocols asked for items (they may all be deselected); every process's
        self.selected: set[str] = set()  # ... with an item the session selected (by file, -k, -m)
        self._reported: set[str] = set()  # collection errors already shown
        self.progress: Progress | None = None  # controller: the live run's progress line
        self.current_item: pytest.Item | None = None  # the item pytest is running in this process
        self.terminalreporter = None  # controller: pytest's, from the session's start
        # controller: per alias, what every process's calls made ahead paid for no item
        self.unclaimed: dict[str, float] = {}
        self.estimate: list[str] | None = None  # --eval-estimate: the block to print instead of running

    # --- protocols and shared services, on first use ---

    def protocol(self, name: str) -> EvalProtocol:
        if name not in self.protocols:
            self.protocols[name] = load(self.infos[name].protocol)(self)
        return self.protocols[name]

    @functools.cached_property
    def models(self):
        """The call path of every model call of every protocol (models.py)."""
        from pytest_reasoning_evals.models import Models

        return Models(
            self.settings,
            lambda: self.pytest_session,
            self.config,
            budget=self.budget,
            running=lambda: self.current_item,
            ahead=self.ahead_request,
        )

    @functools.cached_property
    def budget(self):
        """--eval-max-cost (budget.py): each process spends its share, the controller counts every item's calls."""
        import secrets

        from pytest_reasoning_evals.budget import TOKEN_KEY, Budget

        workerinput = getattr(self.config, "workerinput", None)
        if workerinput is None:
            workers, token = 1, secrets.token_hex(8)
        else:
            workers, token = workerinput.get("workercount", 1), workerinput.get(TOKEN_KEY, "")
        return Budget(self.settings.max_cost, self.settings.out_dir, workers, token)

    def ahead_request(self, item: pytest.Item):
        """The request `item` will send first, if its protocol can build it before any answer."""
        for protocol in self.protocols.values():
            if protocol.parameter(item) is not None:
                return protocol.ahead_request(item)
        return None

    def record_command(self, misses: Iterable[str] = ()) -> str:
        """This run's own command line in the record mode that records these cassette misses (their
        errors; cassettes.rerecord_mode): `once` when none has a file, else `refresh` (the key
        variables of the models it used, if they have one, in front)."""
        from pytest_reasoning_evals.cassettes import rerecord_mode
        from pytest_reasoning_evals.providers.base import mask_url

        args, skip = [], False
        for arg in self.config.invocation_params.args:
            if skip:
                skip = False
            elif arg == "--eval-record-mode":
                skip = True
            elif not arg.startswith("--eval-record-mode="):
                args.append(mask_url(arg))  # a base URL's credentials stay out of the printed command
        aliases = {alias for protocol in self.protocols.values() for alias in protocol.aliases()}
        keys = sorted({spec.api_key_env for spec in map(self.models.spec, aliases) if spec.api_key_env})
        return " ".join(
            [
                *(f"{k}=..." for k in keys),
                "pytest",
                *map(shlex.quote, args),
                f"--eval-record-mode={rerecord_mode(misses)}",
            ]
        )

    def page_writer(self, protocol: str) -> PageWriter | None:
        """The speed plugin's writer of `protocol`'s page, started ahead (report.PageWriter), or None."""
        speed = self.config.pluginmanager.get_plugin(SPEED_PLUGIN)
        return speed.page_writer(protocol) if speed is not None else None

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
            from pytest_reasoning_evals.models import UsageProblem  # an eval item's: a plain test imports no model

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
        """A protocol's placeholder for an empty parameter set is left out of what a module
        collects, so pytest neither counts nor deselects it."""
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
                self._claim({self.settings.model: calls["spent"]})

    # --- reports: the payload rides on the call report ---

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        payload = item.stash.get(PAYLOAD, None) if call.when == "call" else None
        if payload is not None:
            attach(report, payload)
            del item.stash[PAYLOAD]  # the report carries it now; the item (kept to the end) need not
            failure = item.stash.get(FAILURE, None)
            if failure is not None and report.outcome == "passed":
                report.outcome, report.longrepr = "failed", failure  # the item's one-line reason
        elif report.skipped and call.when in ("setup", "call") and NOT_ASKED in item.stash:
            payload = self._not_asked(item, item.stash[NOT_ASKED])
            if payload is not None:
                attach(report, payload)
        elif report.failed and call.when in ("setup", "call") and call.excinfo is not None:
            payload = self._harness_error(item, call.excinfo)
            if payload is not None:
                attach(report, payload)
        if payload is not None and CALLS in item.stash:
            # every protocol's calls, for the controller's progress line and budget
            payload["calls"] = item.stash[CALLS]
            del item.stash[CALLS]
        return report

    def _not_asked(self, item: pytest.Item, item_id: str) -> dict | None:
        """An eval item the spent budget skipped: its protocol lists it (`item_id`: the id of the
        request the budget refused) with what its calls had paid."""
        for name, protocol in self.protocols.items():
            if protocol.parameter(item) is not None:
                return {"protocol": name, "not_asked": item_id}
        return None

    def _harness_error(self, item: pytest.Item, excinfo: pytest.ExceptionInfo) -> dict | None:
        """An eval item that raised before sending its record (a bug in the harness or a fixture):
        its protocol's error record, so the run counts it and is not complete. An item failed by a
        stop (a refused key) gets its error record too, but is not counted as a bug: the stop's own
        reason makes the run incomplete."""
        stopped = bool(item.session.shouldstop)
        for name, protocol in self.protocols.items():
            if protocol.parameter(item) is not None:
                error = str(excinfo.value) if stopped else f"{HARNESS}: {excinfo.typename}: {excinfo.value}"
                record = protocol.error_record(item, error)
                return {
                    "protocol": name,
                    HARNESS_ERROR: True,
                    STOPPED: stopped,
                    **({"record": record} if record is not None else {}),
                }
        return None

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
        if payload is None or payload.get(HARNESS_ERROR):
            status = None
        else:
            status = self.protocol(payload["protocol"]).teststatus(payload)
        if payload is not None and self.progress is not None and self.progress.in_place and self.progress.live:
            category, _, word = status or (report.outcome, "", report.outcome.upper())
            return category, "", word  # the progress line, rewritten in place, shows the items instead
        return status

    # --- xdist (controller) ---

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """Controller -> worker: what a started protocol tells its workers (resumed ids, say), and
        which output folders the run has made."""
        from pytest_reasoning_evals.budget import TOKEN_KEY
        from pytest_reasoning_evals.results import NEW_FOLDERS_KEY

        node.workerinput[NEW_FOLDERS_KEY] = self.new_folders
        node.workerinput[TOKEN_KEY] = self.budget.run_token
        for protocol in self.protocols.values():
            node.workerinput.update(protocol.worker_input())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        """With --dist load, keep the items that share a response on one worker (grouping.py);
        other items are scheduled as xdist's load scheduling does, with enough of them queued
        on each worker for its calls to run ahead."""
        if config.getvalue("dist") != "load":
            return None
        from pytest_reasoning_evals.grouping import EvalScheduling
        from pytest_reasoning_evals.prefetch import Prefetcher

        # calls running ahead need items queued on their worker (grouping.AheadScheduling)
        keep = Prefetcher.HORIZON * self.settings.concurrency if self.settings.concurrency > 1 else 0
        return EvalScheduling(config, log, self.grouped_items, keep, self.ahead_items)

    @functools.cached_property
    def new_folders(self) -> list[str]:
        """Controller, before its first worker starts: the output folders that do not exist yet
        (a run that writes nothing removes those it made, results.RunDirLock)."""
        from pytest_reasoning_evals.results import missing_folders

        return [str(p) for p in missing_folders(self.settings.out_dir)]

    def grouped_items(self) -> dict[str, str]:
        """Parametrize id -> group of the items that share a worker, as the protocols declare them
        (ProtocolInfo.grouped, EvalProtocol.groups)."""
        found: dict[str, str] = {}
        for info in self.infos.values():
            for fixture in info.grouped:
                found.update(self._declared(info.name, "groups", fixture))
        return found

    def ahead_items(self) -> set[str]:
        """The parametrize ids of the items whose calls run ahead, as the protocols declare them
        (ProtocolInfo.runs_ahead, EvalProtocol.item_ids)."""
        found: set[str] = set()
        for info in self.infos.values():
            for fixture in info.runs_ahead:
                found.update(self._declared(info.name, "item_ids", fixture))
        return found

    def _declared(self, name: str, question: str, fixture: str):
        """Protocol `name`'s answer to `question` (groups, item_ids) about `fixture`, or nothing
        when its items cannot be made."""
        from pytest_reasoning_evals.models import UsageProblem

        try:
            return getattr(self.protocol(name), question)(fixture)
        except (CaseFileError, UsageProblem):
            return ()  # the workers report the bad case file or selection when they collect

    # --- the run (controller) ---

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.pytest_session = session
        if self.is_worker:
            return
        from pytest_reasoning_evals.progress import Progress

        self.terminalreporter = self.config.pluginmanager.get_plugin("terminalreporter")
        self.progress = Progress(self.terminalreporter, self.settings.max_cost)
        for info in self.infos.values():  # options such as a resume need the controller first
            if self._given(info, info.eager_options):
                self.protocol(info.name).start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session):
        """--eval-estimate: price the selected items (estimate.py) instead of running them."""
        if not self.settings.estimate or self.is_worker:
            return None
        if session.testsfailed:
            raise session.Interrupted(f"{session.testsfailed} error(s) during collection: no estimate")
        from pytest_reasoning_evals.estimate import block

        estimates = {
            name: protocol.estimate([item for item in session.items if protocol.parameter(item) is not None])
            for name, protocol in sorted(self.protocols.items())
            if name in self.collected
        }
        aliases = dict.fromkeys(c.alias for calls in estimates.values() for c in calls or ())
        specs = {a: self.models.spec(a) for a in aliases}
        self.estimate = block(estimates, specs, self.settings.cassette_dir) if estimates else []
        return True  # no item runs; pytest's exit status is 0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport):
        if self.is_worker:
            return (yield)
        payload = payload_of(report) if report.when in ("setup", "call") else None
        if payload is not None:
            protocol = self.protocol(payload["protocol"])
            protocol.active = True
            protocol.add(payload)
            calls = Tally(**payload.get("calls", {}))
            self.budget.charge(calls.spent)
            self.progress.add(calls, self.pytest_session.testscollected)
            self.harness_failures += bool(payload.get(HARNESS_ERROR))
        elif report.failed:
            self.harness_failures += 1
        return (yield)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """Controller: what a worker's calls made ahead paid for items that never ran, and which
        protocols it collected and selected (before the controller's own sessionfinish: xdist's
        loop ends once every worker is down)."""
        output = getattr(node, "workeroutput", {})
        self._claim(output.get(UNCLAIMED, {}))
        collected, selected = output.get(SELECTION, ((), ()))
        self.collected.update(collected)
        self.selected.update(selected)

    def _claim(self, unclaimed: dict[str, float]) -> None:
        for alias, cost in unclaimed.items():
            self.unclaimed[alias] = self.unclaimed.get(alias, 0.0) + cost

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if "models" in self.__dict__:  # built: calls still running ahead end before the outputs are written
            self._claim(self.models.close(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED))
        if self.is_worker:
            self.config.workeroutput[UNCLAIMED] = self.unclaimed  # xdist sends it after this hook
            self.config.workeroutput[SELECTION] = (sorted(self.collected), sorted(self.selected))
            return
        if "budget" in self.__dict__:
            self.budget.close()
        if self.progress is not None:
            self.progress.add_spent(sum(self.unclaimed.values()))  # the last line shows all that was paid
            self.progress.close()
        active = [p for p in self.protocols.values() if p.active]
        if self.settings.estimate or not (active or self.collected):
            return  # an estimate, or a session without eval items: nothing is judged or written
        from pytest_reasoning_evals.results import NOTHING_RUNS

        if any(getattr(self.config.option, name, False) for name in NOTHING_RUNS):
            return  # --collect-only and the like run nothing: pytest's verdict, and no run directory is touched
        self._judge_unrun({p.name for p in active})
        for gates in self.unrun.values():
            self.gates += gates
        for protocol in active:
            self.gates += protocol.finish(session)
        if active or self.unrun:
            self._decide_exit_status(session)
            self._write_job_summary(active)

    def _judge_unrun(self, active: set[str]) -> None:
        """An eval session: a gate set for a protocol none of whose items ran judges nothing, and fails,
        without touching its run directory (the last full run's files stay as they are); unless the
        session selected another protocol's items and none of its own, and the gate is the ini file's:
        a project's floors of one protocol do not fail a run of the other (one line says so)."""
        for info in self.infos.values():
            if info.name in active:
                continue
            flags, keys = self._gates_given(info)
            if not flags and keys and self.selected | active and info.name not in self.selected:
                self.not_judged[info.name] = keys
            elif flags or keys:
                gates = self.protocol(info.name).judge_unrun()
                if gates:
                    self.unrun[info.name] = gates

    def _gates_given(self, info: ProtocolInfo) -> tuple[list[str], list[str]]:
        """(the flags, the ini keys) that set a gate of the protocol (ProtocolInfo.gate_options). A
        declared name that is not one of its options counts as a flag: its gate is always judged."""
        from pytest_reasoning_evals.options import Reader

        get = Reader(self.config, info.options)
        own = self.settings.own.get(info.name)
        flags, keys = [], []
        for name in info.gate_options:
            option = get.by_name.get(name.replace("_", "-"))
            if option is None:
                flags += [name] if own is not None and is_set(getattr(own, name, None)) else []
            elif self.config.getoption(option.dest) is not None:
                flags.append(option.flag)
            elif is_set(get(option.name)):
                keys.append(option.dest)
        return flags, sorted(keys)

    def _given(self, info: ProtocolInfo, fields: tuple[str, ...]) -> bool:
        """Any of these fields of a protocol's own settings is set."""
        own = self.settings.own.get(info.name)
        return own is not None and any(is_set(getattr(own, name)) for name in fields)

    def _write_job_summary(self, active: list[EvalProtocol]) -> None:
        """In GitHub Actions, append each protocol's block to the job summary page; a summary that
        cannot be written is one warning line: the run's results and exit status stand."""
        import sys

        from pytest_reasoning_evals.markdown import append_step_summary

        message = append_step_summary("".join(protocol.markdown() for protocol in active))
        if message is None:
            return
        if self.terminalreporter is not None:
            from pytest_reasoning_evals.progress import write_own_line

            write_own_line(self.terminalreporter, message)
        else:
            print(message, file=sys.stderr)

    def _decide_exit_status(self, session: pytest.Session) -> None:
        """Wrong answers fail their items but not the session: gates and harness errors decide.
        A resumed run with nothing left to ask (every item deselected) is judged the same way, and
        so is a run stopped by a provider outage or a missing server: a failed measurement (exit 1),
        not an interrupt (Ctrl-C, a refused key: exit 2)."""
        from pytest_reasoning_evals.models import NO_SERVER, OUTAGE

        settled = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
        dsession = self.config.pluginmanager.get_plugin("dsession")  # xdist's controller holds a worker's reason
        reason = session.shouldstop or getattr(dsession, "shouldstop", None)
        stopped = (
            session.exitstatus == pytest.ExitCode.INTERRUPTED
            and isinstance(reason, str)
            and reason.startswith((OUTAGE, NO_SERVER))
        )
        if session.exitstatus not in settled and not stopped:
            return  # interrupted, internal or usage error: leave pytest's verdict
        failed = self.harness_failures > 0 or not all(g.passed for g in self.gates)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """Wrong answers, UNKNOWNs and unmet checks one line each (all of them with -v), then each
        protocol's summary block: the last thing printed before pytest's own closing line."""
        stats = terminalreporter.stats
        listed = sorted(
            (
                r
                for category in (WRONG, "failed", UNKNOWN)
                for r in stats.get(category, [])
                if r.when == "call" and payload_of(r) is not None
            ),
            key=lambda r: r.nodeid,
        )
        if listed:
            shown = listed if self.config.option.verbose > 0 or len(listed) <= SHOWN_WRONG else listed[:SHOWN_WRONG]
            terminalreporter.write_sep(
                "_",
                f"wrong answers, UNKNOWNs and unmet checks: {len(listed)} (one line each"
                + ("" if shown is listed else f", the first {len(shown)}; -v lists all")
                + ")",
            )
            for report in shown:
                reason = str(report.longrepr).strip().splitlines()[0] if report.longrepr else ""
                terminalreporter.write_line(f"{report.nodeid} - {reason}")
            if len(listed) > len(shown):
                terminalreporter.write_line(
                    f"... and {len(listed) - len(shown)} more: every item is in report.html and the run's files"
                )
        for name in self.infos:  # in a fixed order, whichever protocol's items ran first
            protocol = self.protocols.get(name)
            if protocol is not None and protocol.active:
                title, lines = protocol.terminal()
                terminalreporter.write_sep("=", title)
                for line in lines:
                    terminalreporter.write_line(line)
        if self.estimate is not None:
            terminalreporter.write_sep("=", "eval estimate: no request sent, nothing written")
            for line in self.estimate or ["no eval item selected"]:
                terminalreporter.write_line(line)
        for name, keys in self.not_judged.items():
            terminalreporter.write_line(
                f"{name}: none of its items selected: its ini gates are not judged ({', '.join(keys)})"
            )
        for name, gates in self.unrun.items():
            from pytest_reasoning_evals.gates import gate_line

            terminalreporter.write_sep("=", f"{name}: no item ran, no run directory written")
            for gate in gates:
                terminalreporter.write_line(gate_line(gate))
