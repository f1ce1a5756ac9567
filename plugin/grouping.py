"""Scheduling items over xdist workers (`--dist load`, what `-n N` uses): the items that read one
shared model response (a dialectic case's checks) on one worker; any other session exactly as
xdist schedules it.

xdist creates the scheduler before any worker has collected, so EvalScheduling starts as xdist's
own LoadScheduling and decides once every worker's collection is in: when some parametrize ids
belong to a grouped protocol (ids of the form `<group>@<rest>` that the protocol confirms), it
hands the same nodes and collections to CaseGroupScheduling; otherwise it stays LoadScheduling.

xdist's own `--dist loadgroup` carries the `xdist_group` mark by appending "@group" to each node
id on the workers; on pytest >= 9.2 that mutation no longer takes effect and the groups are
silently ignored (pytest-xdist#1386), hence the ids here.

Scope scheduling as xdist implements it costs O(items^2) with one scope per item (a list
search per item sent, a scan of every unit ever assigned per item finished): 40,000 replayed
items took 3x longer than with plain load scheduling (benchmarks/replay_throughput.py). So
ungrouped items travel in units of up to CHUNK items, item positions are looked up in a dict,
and finished units are dropped from the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdist.scheduler import LoadGroupScheduling, LoadScheduling

CHUNK = 50  # ungrouped items per unit of work, at most


def param_id(nodeid: str) -> str | None:
    if nodeid.endswith("]") and "[" in nodeid:
        return nodeid[nodeid.rfind("[") + 1 : -1]
    return None


class EvalScheduling:
    """LoadScheduling until the collection shows grouped items, then CaseGroupScheduling."""

    def __init__(self, config: pytest.Config, log, groups: Callable[[set[str]], dict[str, str]]):
        self._config, self._log, self._groups = config, log, groups
        self._impl = LoadScheduling(config, log)
        self._decided = False

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
        candidates = {pid for pid in map(param_id, collection) if pid and "@" in pid}
        groups = self._groups(candidates) if candidates else {}
        if not groups:
            return
        grouped = CaseGroupScheduling(self._config, self._log, groups)
        for node, nodeids in self._impl.node2collection.items():
            grouped.add_node(node)
            grouped.add_node_collection(node, nodeids)
        for node in self._impl.nodes:
            if node not in self._impl.node2collection:
                grouped.add_node(node)
        self._impl = grouped

    def __getattr__(self, name: str):
        return getattr(self._impl, name)


class CaseGroupScheduling(LoadGroupScheduling):
    def __init__(self, config: pytest.Config, log, groups: dict[str, str]):
        super().__init__(config, log)
        self.groups = groups  # parametrize id -> group name
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
