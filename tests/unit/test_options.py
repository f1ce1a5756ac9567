"""options.py: shards are disjoint, cover everything and do not depend on order."""

from __future__ import annotations

from helpers import DEFAULT_CASES

from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.options import shard_of

# --- shards ---


def test_shards_are_disjoint_cover_everything_and_do_not_depend_on_order() -> None:
    ids = [q.id for q in load_questions(DEFAULT_CASES)]
    shards = [{i for i in ids if shard_of(i, 3) == k} for k in range(3)]
    assert set().union(*shards) == set(ids) and sum(map(len, shards)) == len(ids)
    assert all(len(s) > len(ids) / 4 for s in shards), "roughly even"
    assert [shard_of(i, 3) for i in reversed(ids)] == [shard_of(i, 3) for i in ids][::-1]
