"""Scheduling items over xdist workers (`--dist load`), as the protocols declare their items
(ProtocolInfo.grouped, ProtocolInfo.runs_ahead): a group's items (a dialectic case's) on one
worker, items whose calls run ahead queued in enough number, any other session as xdist schedules
it (docs/design.md, "Scheduling over xdist")."""

from __future__ import annotations

from collections.abc import Callable, Collection

import pytest
from xdist.scheduler import LoadGroupScheduling, LoadScheduling

CHUNK = 50  # ungrouped items per unit of work, at most


def param_id(nodeid: str) -> str | None:
    if nodeid.endswith("]") and "[" in nodeid:
        return nodeid[nodeid.rfind("[") + 1 : -1]
    return None


def declared_groups(session) -> dict[str, str]:
    """Parametrize id -> group of the items that share a worker, as the session's protocols declare
    them (ProtocolInfo.grouped, EvalProtocol.groups)."""
    found: dict[str, str] = {}
    for info in session.infos.values():
        for fixture in info.grouped:
            found.update(_declared(session, info.name, "groups", fixture))
    return found


def declared_ahead(session) -> set[str]:
    """The parametrize ids of the items whose calls run ahead, as the session's protocols declare
    them (ProtocolInfo.runs_ahead, EvalProtocol.item_ids)."""
    found: set[str] = set()
    for info in session.infos.values():
        for fixture in info.runs_ahead:
            found.update(_declared(session, info.name, "item_ids", fixture))
    return found


def _declared(session, name: str, question: str, fixture: str):
    """Protocol `name`'s answer to `question` (groups, item_ids) about `fixture`, or nothing when
    its items cannot be made."""
    from pytest_reasoning_evals.casefiles import CaseFileError
    from pytest_reasoning_evals.errors import UsageProblem

    try:
        return getattr(session.protocol(name), question)(fixture)
    except (CaseFileError, UsageProblem):
        return ()  # the workers report the bad case file or selection when they collect


def scheduler_for(session, config: pytest.Config, log) -> EvalScheduling | None:
    """With --dist load, keep the items that share a response on one worker; other items are
    scheduled as xdist's load scheduling does, with enough of them queued on each worker for its
    calls to run ahead (`session`: the EvalSession)."""
    if config.getvalue("dist") != "load":
        return None
    from pytest_reasoning_evals.prefetch import Prefetcher

    # calls running ahead need items queued on their worker (AheadScheduling, CaseGroupScheduling)
    keep = Prefetcher.HORIZON * session.settings.concurrency if session.settings.concurrency > 1 else 0
    return EvalScheduling(config, log, lambda: declared_groups(session), keep, lambda: declared_ahead(session))


class EvalScheduling:
    """LoadScheduling until the collection is in; then CaseGroupScheduling when some collected
    items are grouped, or AheadScheduling when some collected items' calls run ahead. `groups()`:
    parametrize id -> group of every grouped item the protocols declare, `ahead()`: the parametrize
    ids of their items whose calls run ahead (declared_groups, declared_ahead)."""

    def __init__(
        self,
        config: pytest.Config,
        log,
        groups: Callable[[], dict[str, str]],
        keep: int = 0,
        ahead: Callable[[], Collection[str]] = tuple,
    ):
        self._config, self._log, self._groups, self._ahead = config, log, groups, ahead
        self._impl = LoadScheduling(config, log)
        self._decided = False
        self._keep = keep  # items to keep queued per worker when calls run ahead (0: no such thing)

    @property
    def __class__(self):  # xdist prints the scheduler's class name with -v
        return type(self._impl)

    @property
    def collection_is_completed(self) -> bool:
        done = self._impl.collection_is_completed
        if done and not self._decided:
            self._decide()
        return done

    def schedule(self) -> None:
        if not self._decided and self._impl.collection_is_completed:
            self._decide()
        self._impl.schedule()

    def _decide(self) -> None:
        self._decided = True
        collection = next(iter(self._impl.node2collection.values()), [])
        param_ids = set(map(param_id, collection)) - {None}
        declared = self._groups() if param_ids else {}
        groups = {pid: declared[pid] for pid in param_ids if pid in declared}
        if groups:
            replacement = CaseGroupScheduling(self._config, self._log, groups, self._keep)
        elif self._keep and not param_ids.isdisjoint(
            self._ahead()
        ):  # the protocols know their items, whatever the test's name
            replacement = AheadScheduling(self._config, self._log, self._keep)
        else:
            return
        for node, nodeids in self._impl.node2collection.items():
            replacement.add_node(node)
            replacement.add_node_collection(node, nodeids)
        for node in self._impl.nodes:
            if node not in self._impl.node2collection:
                replacement.add_node(node)
        self._impl = replacement

    def __getattr__(self, name: str):
        return getattr(self._impl, name)


class AheadScheduling(LoadScheduling):
    """xdist's load scheduling when model calls run ahead of their items (--eval-concurrency N):
    a worker's queue is topped up to `keep` items whenever it has fewer, since its calls in
    flight are at most the items it holds. Left alone, xdist keeps about pending/8 items per
    worker (a handful near the end), and sends none to a worker holding 2 whose last item took
    0.1 s or more: an eval item's time is its wait for its call, so that hold would drain it."""

    def __init__(self, config: pytest.Config, log, keep: int):
        super().__init__(config, log)
        self.keep = keep

    def check_schedule(self, node, duration: float = 0) -> None:
        queued = len(self.node2pending.get(node, ()))
        if self.pending and not node.shutting_down and queued < self.keep:
            self._send_tests(node, self.keep - queued)
        super().check_schedule(node, 0)


class CaseGroupScheduling(LoadGroupScheduling):
    """A group's items on one worker. xdist sends a worker its next unit only once it holds 2
    items or fewer: when calls run ahead (`keep` > 0), each worker is topped up with whole units
    to `keep` items, as AheadScheduling does, so the next cases' responses are asked while this
    case's judges run."""

    def __init__(self, config: pytest.Config, log, groups: dict[str, str], keep: int = 0):
        super().__init__(config, log)
        self.groups = groups  # parametrize id -> group name
        self.keep = keep
        self._scopes: dict[str, str] = {}  # node id -> unit of work, planned once collection is known
        self._positions: dict = {}  # worker -> {node id: index in its collection}

    def _group_of(self, nodeid: str) -> str | None:
        pid = param_id(nodeid)
        return None if pid is None else self.groups.get(pid)

    def _plan(self, collection: list[str]) -> dict[str, str]:
        ungrouped = [nodeid for nodeid in collection if self._group_of(nodeid) is None]
        # small enough that the last units still spread over the workers (>= 20 units each)
        size = max(1, min(CHUNK, len(ungrouped) // (20 * max(1, len(self.nodes)))))
        scopes = {nodeid: f"chunk:{i // size}" for i, nodeid in enumerate(ungrouped)}
        for nodeid in collection:
            group = self._group_of(nodeid)
            if group is not None:
                scopes[nodeid] = f"group:{group}"
        return scopes

    def schedule(self) -> None:
        if not self._scopes and self.collection_is_completed and self.registered_collections:
            self._scopes = self._plan(next(iter(self.registered_collections.values())))
        super().schedule()
        for node in self.nodes:
            self._top_up(node)

    def _reschedule(self, node) -> None:
        super()._reschedule(node)
        self._top_up(node)

    def _top_up(self, node) -> None:
        while (
            self.keep
            and self.workqueue
            and not node.shutting_down
            and self._pending_of(self.assigned_work.get(node, {})) < self.keep
        ):
            self._assign_work_unit(node)

    def _split_scope(self, nodeid: str) -> str:
        return self._scopes.get(nodeid, nodeid)

    def _assign_work_unit(self, node) -> None:
        scope, work_unit = self.workqueue.popitem(last=False)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        positions = self._positions.get(node)
        if positions is None:
            positions = self._positions[node] = {n: i for i, n in enumerate(self.registered_collections[node])}
        node.send_runtest_some([positions[nodeid] for nodeid, done in work_unit.items() if not done])

    def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
        nodeid = self.registered_collections[node][item_index]
        scope = self._split_scope(nodeid)
        work_unit = self.assigned_work[node][scope]
        work_unit[nodeid] = True
        if all(work_unit.values()):
            del self.assigned_work[node][scope]  # nothing left to re-send if this worker dies
        self._reschedule(node)
