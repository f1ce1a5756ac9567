"""lean_reports.py: lean call reports share their repeated strings; a setup report is dropped only
when it is silent, passed and just kept."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.lean_reports import make_lean


def test_a_lean_call_report_shares_its_repeated_strings_and_says_the_same() -> None:
    """Under xdist each report arrives as new strings: the kept ones share them (interned)."""

    def arrived(i: int) -> pytest.TestReport:  # the same fields, each string a new object
        fresh = lambda text: "".join(list(text))  # noqa: E731
        return pytest.TestReport(
            fresh(f"test_x.py::test_q[q{i}]"),
            (fresh("test_x.py"), 3, fresh(f"test_q[q{i}]")),
            {fresh("chaosbench"): 1, fresh(f"q{i}"): 1},
            fresh("passed"),
            None,
            "call",
            worker_id=fresh("gw0"),
        )

    first, second = arrived(1), arrived(2)
    assert first.outcome is not second.outcome
    before = (first.nodeid, first.location, first.keywords, first.outcome, first.worker_id)
    make_lean(first, {}, from_worker=False)  # in one process the strings are shared already
    assert first.outcome is not second.outcome
    for report in (first, second):
        make_lean(report, {}, from_worker=True)
    assert (first.nodeid, first.location, first.keywords, first.outcome, first.worker_id) == before
    assert first.outcome is second.outcome and first.worker_id is second.worker_id
    assert first.location[0] is second.location[0]
    assert [k for k in first.keywords if k == "chaosbench"][0] is [k for k in second.keywords if k == "chaosbench"][0]


def test_a_setup_report_is_dropped_only_when_it_is_silent_passed_and_just_kept() -> None:
    def setup(outcome="passed", sections=()) -> pytest.TestReport:
        return pytest.TestReport("t.py::t", ("t.py", 0, "t"), {}, outcome, None, "setup", sections=list(sections))

    silent, spoke, failed, earlier = (
        setup(),
        setup(sections=[("Captured stdout setup", "hi")]),
        setup("failed"),
        setup(),
    )
    for report in (silent, spoke, failed):
        stats = {"": [report]}
        make_lean(report, stats, from_worker=True)
        assert stats[""] == ([] if report is silent else [report])
    stats = {"": [earlier, silent]}
    make_lean(earlier, stats, from_worker=True)  # not the one the terminal reporter just added: left where it is
    assert stats[""] == [earlier, silent]
