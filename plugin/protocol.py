"""What the session asks of an evaluation protocol (ProtocolInfo, EvalProtocol), how protocols are
found (the entry points), and how an item's result rides on its report to the controller
(docs/design.md, "How a result travels")."""

from __future__ import annotations

import functools
import importlib
import json
import sys
import weakref
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, ClassVar, NamedTuple, TypedDict

import pytest

if TYPE_CHECKING:
    from pytest_reasoning_evals.estimate import CallEstimate
    from pytest_reasoning_evals.gates import GateResult
    from pytest_reasoning_evals.providers.base import Request
    from pytest_reasoning_evals.session import EvalSession

PAYLOAD = pytest.StashKey[dict]()  # an item's payload: {"protocol": name, ...}
FAILURE = pytest.StashKey[str]()  # why the item fails (a wrong answer, an unmet check), one line
CALLS = pytest.StashKey["CallCounts"]()  # the item's model calls so far (spend.py): sent as payload["calls"]
NOT_ASKED = pytest.StashKey[str]()  # the item id of the request the spent --eval-max-cost budget refused
SERIALIZED_KEY = "pytest_reasoning_evals"  # where a serialized report carries it (a dict)
SERIALIZED_TEXT_KEY = "pytest_reasoning_evals_json"  # ... or carries it as JSON text (serialized_payload)
# pytest's report category of a wrong answer or an unmet rubric check without -v: not "failed",
# so pytest does not print a failure section each; the session lists them one line each.
WRONG = "wrong"
HARNESS = "harness error"  # how the error of an item that raised inside the harness starts (session.py)
HARNESS_ERROR = "harness_error"  # a payload's flag: the item raised before sending its record
STOPPED = "stopped"  # ... while the session was stopping (a refused key): not a bug of the harness
UNKNOWN = "unknown"  # the category of an answer with no TRUE/FALSE (or a failed call): counted apart
_payloads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CallCounts(TypedDict):
    """An item's model calls (spend.no_calls): payload["calls"], for the controller's spend ledger."""

    live: int
    cassette: int
    errors: int
    spent: float


class _NotAskedPayload(TypedDict):
    protocol: str
    # the id of the request the spent budget refused (session.py)
    not_asked: str


class NotAskedPayload(_NotAskedPayload, total=False):
    """An item the spent --eval-max-cost budget skipped; `calls`: what its calls had paid before."""

    calls: CallCounts


def send(
    item: pytest.Item, payload: dict, properties: list[tuple[str, object]] = (), failure: str | None = None
) -> None:
    """From inside an item: its result for the controller, a few scalars for junitxml, and when
    the answer is wrong, the one-line reason that fails the item (session.py sets it on the
    report: no exception, so pytest builds no traceback for an expected outcome)."""
    item.stash[PAYLOAD] = payload
    if failure is not None:
        item.stash[FAILURE] = failure
    item.user_properties.extend(properties)


def attach(report: pytest.TestReport, payload: dict) -> None:
    _payloads[report] = payload


def payload_of(report: pytest.BaseReport) -> dict | None:
    return _payloads.get(report)


def serialized_payload(payload: dict) -> tuple[str, object]:
    """(key, value) that carries `payload` in a serialized report: its JSON text when that reads
    back equal (execnet's pure-Python serializer takes ~40 us per nested record, JSON ~5), else
    the dict itself (a tuple, a NaN or a non-text key inside)."""
    try:
        text = json.dumps(payload, separators=(",", ":"))
        if json.loads(text) == payload:
            return SERIALIZED_TEXT_KEY, text
    except (TypeError, ValueError, RecursionError):
        pass
    return SERIALIZED_KEY, payload


def deserialized_payload(data: dict) -> dict | None:
    """The payload serialized_payload put in `data` (removed from it), or None."""
    text = data.pop(SERIALIZED_TEXT_KEY, None)
    if text is not None:
        return json.loads(text)
    return data.pop(SERIALIZED_KEY, None)


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


class ProtocolInfo(NamedTuple):
    """A protocol's declaration: what the plugin knows of it without importing its code (an unused
    plugin stays cheap). A package declares one under the entry-point group ENTRY_POINTS."""

    name: str  # its marker, its option group, the "protocol" of its payloads
    protocol: str  # "module:Class", a subclass of EvalProtocol, imported on first use
    fixtures: tuple[str, ...]  # the parametrized fixtures whose use makes an item the protocol's
    marker: str  # the marker line registered at configure
    title: str  # its option group's heading in --help
    options: tuple = ()  # its rows of options.Option (--eval-<name>, ini eval_<name>)
    settings: Callable | None = None  # (option reader, generic Settings) -> its own settings (EvalProtocol.own)
    fixture_plugin: str | None = None  # "module:function": (session) -> a plugin object holding its fixtures
    commands: str | None = None  # "module:function": (argparse subparsers) adds its reasoning-evals commands
    report_view: str | None = None  # "module:function": (run_dir, baseline, cleanup) -> its report view, or None
    # its fixtures whose items share a worker by group (EvalProtocol.groups names the groups; grouping.py)
    grouped: tuple[str, ...] = ()
    # its fixtures whose items' calls run ahead (EvalProtocol.item_ids): under xdist, enough of them are
    # kept queued on each worker (grouping.AheadScheduling)
    runs_ahead: tuple[str, ...] = ()
    eager_options: tuple[str, ...] = ()  # fields of its settings that make the controller start it before any item
    # its options that are gates (Option.name): given on the command line, or set in the ini file of a
    # session that selected none of any protocol's items, they judge it even with no item of it
    gate_options: tuple[str, ...] = ()
    baseline_option: str | None = None  # the option naming its regression baseline (--eval-fail-on-regression)
    # "module:function": (run directories) -> its tables of `reasoning-evals runs` (runs_table.py), or []
    runs: str | None = None
    # "module:function": (config) at pytest_cmdline_main -> the exit status of a command it ran as
    # several runs of its own (ChaosBench's several --eval-prompts folders), or None: pytest goes on
    cmdline_main: str | None = None


ENTRY_POINTS = "pytest_reasoning_evals.protocols"  # the entry-point group protocols declare themselves in


def load(target: str):
    """The object a "module:attribute" string names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class LeftOut(NamedTuple):
    """An installed protocol package the plugin leaves out, and why (one line)."""

    name: str  # its entry point's name
    why: str
    info: ProtocolInfo | None  # its declaration when it loaded (an option clash), else None

    def flags(self) -> tuple[str, ...]:
        """The flags that are its own: its declared options, or by the naming rule --eval-<name>-..."""
        return tuple(option.flag for option in self.info.options) if self.info else ()

    def owns_flag(self, flag: str) -> bool:
        return flag in self.flags() or flag.startswith(f"--eval-{self.name}-")

    def owns_fixture(self, fixture: str) -> bool:
        known = self.info.fixtures if self.info else ()
        return fixture in known or fixture == self.name or fixture.startswith(f"{self.name}_")

    def warning(self) -> str:
        return f"pytest-reasoning-evals: WARNING: protocol {self.name} is left out: {self.why}"

    def usage(self, used: str) -> str:
        return f"{used}: protocol {self.name} is left out ({self.why}); fix or uninstall its package"


@functools.cache
def _discovered() -> tuple[tuple[ProtocolInfo, ...], tuple[LeftOut, ...]]:
    """(the usable protocols by name, the installed ones left out), read from the entry points once."""
    from importlib.metadata import entry_points

    found: dict[str, ProtocolInfo] = {}
    left_out: dict[str, LeftOut] = {}
    for point in entry_points(group=ENTRY_POINTS):
        info = _declaration(point)
        if isinstance(info, str):
            left_out.setdefault(point.name, LeftOut(point.name, info, None))
        else:
            found.setdefault(info.name, info)  # a package installed twice (editable and not) declares it twice
    # the shipped protocols claim their options first: a user's package cannot push them out
    ordered = sorted(found.values(), key=lambda info: (not info.protocol.startswith(f"{__package__}."), info.name))
    for info, clash in zip(ordered, _option_clashes(ordered)):
        if clash:
            left_out[info.name] = LeftOut(info.name, clash, info)
    usable = tuple(found[name] for name in sorted(found) if name not in left_out)
    return usable, tuple(left_out[name] for name in sorted(left_out))


def _declaration(point) -> ProtocolInfo | str:
    """The ProtocolInfo an entry point names, or why it cannot be used (one line)."""
    try:
        info = point.load()
    except KeyboardInterrupt:
        raise
    # a package's crash or sys.exit at import must not end (or silence) every pytest run
    except BaseException as exc:  # noqa: BLE001
        said = str(exc).strip().splitlines()
        return f"{point.value!r} cannot be loaded: {type(exc).__name__}" + (f": {said[0][:300]}" if said else "")
    if not isinstance(info, ProtocolInfo) or info.name != point.name:
        return f"{point.value!r} must name a ProtocolInfo called {point.name!r}"
    return info


def declared_protocols() -> tuple[ProtocolInfo, ...]:
    """Every installed protocol's declaration that can be used, by name (a fixed order, whatever the install order)."""
    return _discovered()[0]


def left_out_protocols() -> tuple[LeftOut, ...]:
    """The installed protocol packages that are broken or clash: each is one warning line, not a failure."""
    return _discovered()[1]


def warn_left_out() -> None:
    """One line on stderr per protocol left out."""
    for left in left_out_protocols():
        print(left.warning(), file=sys.stderr)


def left_out_flag(args: list[str]) -> str | None:
    """The usage error of the first argument that is an option of a protocol left out, or None."""
    for arg in args:
        flag = arg.partition("=")[0]
        for left in left_out_protocols() if flag.startswith("--eval-") else ():
            if left.owns_flag(flag):
                return left.usage(f"option {flag}")
    return None


def left_out_fixture(fixtures: list[str], known: Callable[[str], bool]) -> str | None:
    """The usage error of the first fixture an item asks for, that nothing provides (`known` is
    False) and that a protocol left out would have, or None."""
    left_out = left_out_protocols()
    for fixture in fixtures if left_out else ():  # (every test function of a project is asked)
        for left in left_out if not known(fixture) else ():
            if left.owns_fixture(fixture):
                return left.usage(f"fixture {fixture!r}")
    return None


def _option_clashes(ordered: list[ProtocolInfo]) -> list[str | None]:
    """Per protocol in `ordered`: why one of its options is already another owner's, or None. Every
    --eval-<name> is one option of one owner; argparse's own error would name neither."""
    from pytest_reasoning_evals.options import OPTIONS

    owners = {option.name: "the plugin" for option in OPTIONS}
    clashes: list[str | None] = []
    for info in ordered:
        taken = [option.name for option in info.options if owners.get(option.name, info.name) != info.name]
        clashes.append(
            f"option --eval-{taken[0]} is already {_owner(owners[taken[0]])}'s; "
            f"start its options' names with its own ({info.name}-...)"
            if taken
            else None
        )
        if not taken:
            owners.update((option.name, info.name) for option in info.options)
    return clashes


def _owner(owner: str) -> str:
    return owner if owner == "the plugin" else f"protocol {owner}"


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
        from pytest_reasoning_evals.models import UsageProblem
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
