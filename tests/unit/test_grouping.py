"""The xdist scheduler: a dialectic case's items form one unit of work; other items travel in
small units; a session without grouped items keeps xdist's LoadScheduling (the end-to-end check
that a case runs on one worker is in tests/integration/test_dialectic_run.py)."""

from __future__ import annotations

from collections import Counter

import pytest
from xdist.scheduler import LoadScheduling

from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.grouping import CHUNK, AheadScheduling, CaseGroupScheduling, EvalScheduling


class FakeNode:
    """What the scheduler needs of a worker controller: a name and a way to receive work."""

    def __init__(self, name: str):
        self.name, self.sent, self.done, self.shutting_down = name, [], [], False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


CASES = [Case("dx_a", "ethics", "q", "dialectic"), Case("bp_b", "factual", "q", "bypass")]
VARIANTS = [Variant("baseline", None), Variant("dialectic", "prompt")]
DIALECTIC = [
    f"test_dialectic.py::test_{check}[{c.id}@{v.name}]"
    for c in CASES
    for v in VARIANTS
    for check in ("structure", "pcc", "mode", "judge")
]
DIALECTIC += [
    f"test_dialectic.py::test_{check}[{c.id}@dialectic]" for c in CASES for check in ("resolution", "cross_provider")
]
GROUPS = {f"{c.id}@{v.name}": c.id for c in CASES for v in VARIANTS}


def declared_groups() -> dict[str, str]:
    """What the session answers: the grouped items the protocols declare (ProtocolInfo.grouped)."""
    return GROUPS


QUESTIONS = [f"test_chaosbench.py::test_question[atomic-{i:05d}]" for i in range(3000)]


@pytest.fixture(params=[0, 16], ids=["sequential", "calls-ahead"])
def scheduler(pytester, request) -> tuple[CaseGroupScheduling, list[FakeNode]]:
    """keep: the items each worker holds when calls run ahead (--eval-concurrency 4: 16), or 0."""
    config = pytester.parseconfig("--tx", "2*popen")
    sched = EvalScheduling(config, None, declared_groups, keep=request.param)
    nodes = [FakeNode("gw0"), FakeNode("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, QUESTIONS + DIALECTIC)
    sched.schedule()
    return sched, nodes


def test_a_case_is_one_unit_and_other_items_travel_in_small_units(scheduler) -> None:
    sched, _ = scheduler
    units = Counter(sched._split_scope(n) for n in QUESTIONS + DIALECTIC)
    assert units["group:dx_a"] == units["group:bp_b"] == 10
    chunks = [size for unit, size in units.items() if unit.startswith("chunk:")]
    assert max(chunks) <= CHUNK and sum(chunks) == len(QUESTIONS)
    assert len(chunks) >= 20 * 2, "enough units that the tail spreads over both workers"


def test_every_item_is_sent_once_and_finishing_them_ends_the_run(scheduler) -> None:
    sched, nodes = scheduler
    collection = QUESTIONS + DIALECTIC
    while not sched.tests_finished:
        for node in nodes:
            while node.sent:  # the worker runs what it was sent, reporting each item
                index = node.sent.pop(0)
                node.done.append(index)
                sched.mark_test_complete(node, index)
    assert sorted(i for node in nodes for i in node.done) == list(range(len(collection))), "every item exactly once"
    units = {n.name: {sched._split_scope(collection[i]) for i in n.done} for n in nodes}
    assert not ({"group:dx_a", "group:bp_b"} & units["gw0"] & units["gw1"]), "a case never spans workers"
    assert all(node.done for node in nodes), "both workers got work"
    assert all(not pending for pending in sched.assigned_work.values()), "finished units are dropped"


def test_when_calls_run_ahead_each_worker_holds_whole_cases_enough_for_them(pytester) -> None:
    # xdist sends a worker its next unit once it holds 2 items or fewer: the next case's
    # response could not run ahead of this case's judges
    config = pytester.parseconfig("--tx", "popen")
    sched = EvalScheduling(config, None, declared_groups, keep=16)
    node = FakeNode("gw0")
    sched.add_node(node)
    sched.add_node_collection(node, DIALECTIC)
    sched.schedule()
    held = Counter(sched._split_scope(DIALECTIC[i]) for i in node.sent)
    assert held == {"group:dx_a": 10, "group:bp_b": 10}, "both cases, whole"


def test_the_proxy_hands_over_to_the_case_scheduler_once_the_collection_shows_cases(scheduler) -> None:
    sched, _ = scheduler
    assert sched.__class__ is CaseGroupScheduling


@pytest.mark.parametrize(
    "collection",
    [QUESTIONS, QUESTIONS + ["test_other.py::test_mail[user@example.com]"]],
    ids=["no-ids-with-at", "an-unrelated-id-with-at"],
)
def test_a_session_without_cases_keeps_xdist_load_scheduling(pytester, collection) -> None:
    config = pytester.parseconfig("--tx", "2*popen")
    asked = []
    sched = EvalScheduling(config, None, lambda: asked.append("groups") or declared_groups())
    nodes = [FakeNode("gw0"), FakeNode("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    assert sched.collection_is_completed
    sched.schedule()
    assert sched.__class__ is LoadScheduling
    assert asked == ["groups"], "the declared groups, not a guess from the ids: an id with @ is no group"
    sent = [i for node in nodes for i in node.sent]
    assert all(node.sent for node in nodes) and len(sent) == len(set(sent)), "xdist's own initial distribution"


@pytest.mark.parametrize("asks_ahead", [True, False])
def test_questions_under_a_teams_own_test_name_are_kept_queued_when_their_protocol_says_they_run_ahead(
    pytester, asks_ahead: bool
) -> None:
    """A team imports test_question under its own name: the protocol, not the name, decides."""
    config = pytester.parseconfig("--tx", "2*popen")
    own = [f"evals/test_exam.py::test_pendulum_quiz[pl-{i:03d}]" for i in range(40)]
    asked = []
    ahead = {f"pl-{i:03d}" for i in range(40)} if asks_ahead else {"q-000"}
    sched = EvalScheduling(config, None, declared_groups, keep=8, ahead=lambda: asked.append("ahead") or ahead)
    for node in (FakeNode("gw0"), FakeNode("gw1")):
        sched.add_node(node)
        sched.add_node_collection(node, own)
    sched.schedule()
    assert asked == ["ahead"]
    assert sched.__class__ is (AheadScheduling if asks_ahead else LoadScheduling)


def test_items_a_protocol_declares_grouped_share_a_unit_whatever_their_ids_look_like(pytester) -> None:
    """A team's own protocol names its ids as it likes (no `@`): its declaration is what groups them."""
    config = pytester.parseconfig("--tx", "2*popen")
    own = [f"evals/test_essay.py::test_{check}[essay-{i}]" for i in range(3) for check in ("style", "facts")]
    sched = EvalScheduling(config, None, lambda: {f"essay-{i}": f"essay-{i}" for i in range(3)})
    for node in (FakeNode("gw0"), FakeNode("gw1")):
        sched.add_node(node)
        sched.add_node_collection(node, QUESTIONS + own)
    sched.schedule()
    assert sched.__class__ is CaseGroupScheduling
    units = Counter(sched._split_scope(n) for n in own)
    assert units == {f"group:essay-{i}": 2 for i in range(3)}
