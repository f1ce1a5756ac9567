"""What the session asks of an evaluation protocol (EvalProtocol). A protocol's author imports
from here: `EvalProtocol`, `ProtocolInfo` (declarations.py), `send` and the report categories
(stash.py)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, ClassVar

import pytest

from pytest_reasoning_evals.declarations import ProtocolInfo
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.stash import HARNESS, HARNESS_ERROR, STOPPED, UNKNOWN, WRONG, send

if TYPE_CHECKING:
    from pytest_reasoning_evals.estimate import CallEstimate
    from pytest_reasoning_evals.gates import GateResult
    from pytest_reasoning_evals.providers.base import Request
    from pytest_reasoning_evals.session import EvalSession

__all__ = ["UNKNOWN", "WRONG", "EvalProtocol", "ProtocolInfo", "send"]  # a protocol author's names


def not_asked_payload(protocols: dict[str, EvalProtocol], item: pytest.Item, item_id: str) -> dict | None:
    """An eval item the spent budget skipped: its protocol lists it (`item_id`: the id of the
    request the budget refused) with what its calls had paid."""
    for name, protocol in protocols.items():
        if protocol.parameter(item) is not None:
            return {"protocol": name, "not_asked": item_id}
    return None


def harness_error_payload(
    protocols: dict[str, EvalProtocol], item: pytest.Item, excinfo: pytest.ExceptionInfo
) -> dict | None:
    """An eval item that raised before sending its record (a bug in the harness or a fixture):
    its protocol's error record, so the run counts it and is not complete. An item failed by a
    stop (a refused key) gets its error record too, but is not counted as a bug: the stop's own
    reason makes the run incomplete."""
    stopped = bool(item.session.shouldstop)
    for name, protocol in protocols.items():
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


def stop_reason(session: pytest.Session) -> str | None:
    """Why the session ended before running every item, if it did (under xdist the controller's
    scheduler holds a worker's reason)."""
    dsession = session.config.pluginmanager.get_plugin("dsession")
    for reason in (session.shouldstop, session.shouldfail, getattr(dsession, "shouldstop", None)):
        if reason:
            return str(reason)
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    return None


class EvalProtocol:
    name: ClassVar[str]

    def __init__(self, session: EvalSession):
        self.session = session
        self.settings = session.settings  # the generic options (model, output folder, budget, ...)
        self.own = session.settings.own.get(self.name)  # its own options (ProtocolInfo.settings)
        self.fixtures = session.infos[self.name].fixtures  # the parametrized fixtures of its items
        self.active = False  # controller: it has results to summarize this run
        self.harness_errors = 0  # controller: its items that raised inside the harness (a bug, not an answer)

    # --- every process ---

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize this protocol's fixtures among metafunc.fixturenames, each item marked with
        its marker (`pytest.mark.<name>(...)`: the session tells eval items by it). Raise
        CaseFileError or UsageProblem when the items cannot be made (bad file, unknown model, missing key)."""
        raise NotImplementedError

    def parametrize_nothing(self, metafunc: pytest.Metafunc) -> None:
        """After a reported failure: no items (the collection error already stops the session)."""
        for name in self.fixtures:
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, [])

    def parameter(self, item: pytest.Item):
        """The value of this protocol's parametrized fixture on `item` (a question, a case...),
        or None for an item that is not one of its own."""
        params = getattr(item, "callspec", None)
        found = params.params if params is not None else {}
        return next((found[name] for name in self.fixtures if name in found), None)

    def aliases(self) -> tuple[str, ...]:
        """The model aliases its items call, the model under test first."""
        return (self.settings.model,)

    def item_collected(self, item: pytest.Item) -> None:
        """One of its items was collected (add -k keywords, say)."""

    def cassette_of(self, item: pytest.Item) -> tuple[str, str] | None:
        """(cassette folder, item id) of the cassette this item reads, or None."""
        return None

    def placeholder(self, item: pytest.Item) -> bool:
        """The item is pytest's placeholder for an empty parameter set of its own (a bank with no
        dialogue, say): it is not collected."""
        return False

    def modify_items(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """This protocol's collected items -> the ones to drop (already answered, say)."""
        return []

    def groups(self, fixture: str) -> dict[str, str]:
        """Controller: parametrize id -> group name of the items of `fixture`, one its ProtocolInfo
        declares `grouped`: the items of a group run in one process (they share one model response)."""
        return {}

    def item_ids(self, fixture: str) -> Collection[str]:
        """Controller: the parametrize ids of the items of `fixture`, one its ProtocolInfo declares
        `runs_ahead` (their ahead_request is sent ahead of them)."""
        return ()

    def ahead_request(self, item: pytest.Item) -> Request | None:
        """The request this item will send first, if it can be built before any answer; None
        otherwise. While recording with --eval-concurrency N, the requests of the items a process
        runs next are sent ahead of them (prefetch.py)."""
        return None

    def before_items(self, items: list[pytest.Item]) -> None:
        """Controller with -n 0, once the items are final and before the first runs (--eval-batch
        answers their first requests in batches, say)."""

    def before_collected(self, ids: list[str]) -> None:
        """Controller under xdist, once a worker has collected (every worker collects the same
        items: their node ids) and before xdist schedules any: before_items' work, from the ids."""

    def estimate(self, items: list[pytest.Item]) -> list[CallEstimate] | None:
        """--eval-estimate: every model call these selected items of its own would make, built
        without sending anything (worst case where the answers decide: every turn asked, every
        earlier reply as long as max_tokens allows); None: it gives no estimate (the printed table
        says so). estimate.py turns them into tokens and dollars."""
        return None

    def estimate_notes(self, items: list[pytest.Item]) -> list[str]:
        """--eval-estimate: lines this protocol adds under the priced calls (what a run could detect, say)."""
        return []

    def error_record(self, item: pytest.Item, error: str) -> dict | None:
        """The record of one of its items that raised before sending one (`error` says what), or
        None: the item is then only counted as a harness error."""
        return None

    def teststatus(self, payload: dict):
        """pytest_report_teststatus for this protocol's call reports (None: pytest's own)."""
        return None

    # --- controller ---

    def start(self) -> None:
        """Before any item (controller): work that does not wait for the first result."""

    def worker_input(self) -> dict:
        """Controller: what each xdist worker must know from it (workerinput entries)."""
        return {}

    def add(self, payload: dict) -> None:
        """One item's payload, as it arrives."""
        raise NotImplementedError

    def finish(self, session: pytest.Session) -> list[GateResult]:
        """Write the outputs; -> the gates' verdicts."""
        raise NotImplementedError

    # --- shared by the protocols (controller) ---

    def count_harness_error(self, payload: dict) -> bool:
        """Whether `payload` is of an item that raised before sending its record; counted unless
        the session was stopping then (a refused key's item: the stop says why)."""
        if not payload.get(HARNESS_ERROR):
            return False
        self.harness_errors += not payload.get(STOPPED)
        return True

    def harness_note(self) -> str | None:
        """Why the run is incomplete on the harness's side, or None."""
        n = self.harness_errors
        return f"{n} item{'s' if n > 1 else ''} ended in a harness error (see their tracebacks)" if n else None

    def incomplete_reason(self, session: pytest.Session) -> str | None:
        """Why the run is incomplete: the session's stop and the items that raised, or None."""
        return "; ".join(filter(None, (stop_reason(session), self.harness_note()))) or None

    def hold_run_dir(self) -> None:
        """Its run directory's lock (`self.lock`, results.RunDirLock), or a usage error naming the
        run that holds it, or why the directory cannot be made (run_dir.RunDirectory does the same
        for a protocol that keeps its directory in one)."""
        from pytest_reasoning_evals.results import lock_problem

        # an estimate writes nothing and may run beside the run it prices
        problem = None if self.settings.estimate else lock_problem(self.lock)
        if problem:
            raise UsageProblem(problem)

    def judge_unrun(self) -> list[GateResult]:
        """Gates of it are set but none of its items ran: -> their verdicts over nothing (a gate
        over zero items fails), writing nothing: the last run's directory stays as it was."""
        raise NotImplementedError

    def terminal(self) -> tuple[str, list[str]]:
        """(title, lines) of the summary block."""
        raise NotImplementedError

    def markdown(self) -> str:
        """The summary block as Markdown, for a CI job summary."""
        from pytest_reasoning_evals.markdown import fenced, inline

        title, lines = self.terminal()
        return f"### {inline(title)}\n\n" + fenced(lines) + "\n"


def parameter_ids(ids: list[str]) -> list[str]:
    """The parameter ids of collected node ids, in their order ("a.py::test_q[q-7]" -> "q-7")."""
    return [nid[nid.index("[") + 1 : -1] for nid in ids if nid.endswith("]") and "[" in nid]
