"""Scheduling items over xdist workers: a dialectic case's items on one worker, everything else
in small units of work.

Every check item of a dialectic case reads one generated response, so they must run in one
process. xdist's own `--dist loadgroup` carries the `xdist_group` mark to the controller by
appending "@group" to each node id on the workers; on pytest >= 9.2 that mutation no longer
takes effect and the groups are silently ignored (pytest-xdist#1386). This scheduler finds the
group from the item's parametrize id instead, which the controller maps to its case on its own
(and still honours an "@group" suffix where xdist manages to add one).

Scope scheduling as xdist implements it costs O(items^2) with one scope per item (a list
search per item sent, a scan of every unit ever assigned per item finished): 40,000 replayed
items took 3x longer than with plain load scheduling (benchmarks/replay_throughput.py). So
ungrouped items travel in units of up to CHUNK items, item positions are looked up in a dict,
and finished units are dropped from the bookkeeping.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadGroupScheduling

CHUNK = 50  # ungrouped items per unit of work, at most


class CaseGroupScheduling(LoadGroupScheduling):
    def __init__(self, config: pytest.Config, log, groups: dict[str, str]):
        super().__init__(config, log)
        self.groups = groups  # parametrize id -> group name
        self._scopes: dict[str, str] = {}  # node id -> unit of work, planned once collection is known
        self._positions: dict = {}  # worker -> {node id: index in its collection}

    def _group_of(self, nodeid: str) -> str | None:
        if nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[1]
        if nodeid.endswith("]") and "[" in nodeid:
            return self.groups.get(nodeid[nodeid.rfind("[") + 1 : -1])
        return None

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


def dialectic_groups(cases, variants) -> dict[str, str]:
    """The parametrize ids of a case's items (see pytest_generate_tests) -> the case id."""
    groups = {case.id: case.id for case in cases}
    groups.update({f"{case.id}-{variant.name}": case.id for case in cases for variant in variants})
    return groups
