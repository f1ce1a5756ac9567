"""Keeping a dialectic case's items on one xdist worker.

Every check item of a case reads one generated response, so they must run in one process.
xdist's own `--dist loadgroup` carries the `xdist_group` mark to the controller by appending
"@group" to each node id on the workers; on pytest >= 9.2 that mutation no longer takes effect
and the groups are silently ignored (pytest-xdist#1386). This scheduler finds the group from
the item's parametrize id instead, which the controller can map to its case on its own, and
still honours an "@group" suffix where xdist manages to add one.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadGroupScheduling


class CaseGroupScheduling(LoadGroupScheduling):
    def __init__(self, config: pytest.Config, log, groups: dict[str, str]):
        super().__init__(config, log)
        self.groups = groups  # parametrize id -> group name

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[1]
        if nodeid.endswith("]") and "[" in nodeid:
            group = self.groups.get(nodeid[nodeid.rfind("[") + 1 : -1])
            if group is not None:
                return group
        return nodeid  # ungrouped: every item is its own unit, as with plain load scheduling


def dialectic_groups(cases, variants) -> dict[str, str]:
    """The parametrize ids of a case's items (see pytest_generate_tests) -> the case id."""
    groups = {case.id: case.id for case in cases}
    groups.update({f"{case.id}-{variant.name}": case.id for case in cases for variant in variants})
    return groups
