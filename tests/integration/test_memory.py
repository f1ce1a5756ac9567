"""A good pytest citizen with memory: eval items kept out of the garbage collector's walk, no silent
reports kept, shared strings, and nothing frozen in a session without eval items."""

from __future__ import annotations

import gc

import pytest
from helpers import (
    four_questions,
    the_run,
)

FREEZE_PROBE = (
    "import gc, pathlib\n\ndef test_probe():\n    pathlib.Path('frozen.txt').write_text(str(gc.get_freeze_count()))\n"
)


PLAIN_TEST = "def test_plain():\n    pass\n"


def test_eval_items_are_kept_out_of_the_garbage_collectors_walk_until_the_session_ends(evals: pytest.Pytester) -> None:
    """session.py freezes what is alive after collecting eval items (a full collection would walk
    every item again and again), and hands it back when the session is over."""
    evals.makepyfile(test_probe=FREEZE_PROBE)
    assert gc.get_freeze_count() == 0
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals))
    assert result.ret == 0 and (the_run(evals.path / "results", "always-true") / "summary.json").exists()
    assert int((evals.path / "frozen.txt").read_text()) > 1000  # the items, among everything else alive
    assert gc.get_freeze_count() == 0  # this process's pytest run (in-process) gave them back


def test_under_xdist_the_controller_freezes_from_its_first_result_and_thaws_at_the_end(evals: pytest.Pytester) -> None:
    seen = []
    spy = type("Spy", (), {"pytest_terminal_summary": lambda self: seen.append(gc.get_freeze_count())})()
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals), "-n", "2", plugins=[spy])
    assert result.ret == 0
    assert seen and seen[0] > 1000 and gc.get_freeze_count() == 0


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_pytest_keeps_no_silent_setup_or_teardown_report_of_an_eval_item(evals: pytest.Pytester, workers) -> None:
    """lean_reports.py: the terminal reporter keeps every report to the end; of an eval item, a
    passed setup or teardown that captured nothing is dropped once every hook has seen it. A
    plain test's are kept, and so is the call report of every item, with what it said."""
    evals.makepyfile(test_plain=PLAIN_TEST)
    seen, kept, outcomes = [], {}, set()
    spy = type(
        "Spy",
        (),
        {
            "pytest_runtest_logreport": lambda self, report: seen.append((report.nodeid, report.when)),
            "pytest_terminal_summary": lambda self, terminalreporter: (
                kept.update(
                    {
                        k: [(r.nodeid, r.when) for r in v if hasattr(r, "when")]
                        for k, v in terminalreporter.stats.items()
                    }
                ),
                outcomes.update(id(r.outcome) for r in terminalreporter.stats["passed"] if "chaosbench" in r.keywords),
            ),
        },
    )()
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals), *workers, plugins=[spy])
    assert result.ret == 0
    result.stdout.re_match_lines([r"=+ 3 passed, (1 deselected, )?2 wrong in "])  # the summary line counts every item
    eval_ids = {nodeid for nodeid, when in seen if "test_chaosbench" in nodeid}
    assert len(eval_ids) == 4 and {(i, w) for i in eval_ids for w in ("setup", "call", "teardown")} <= set(seen)
    assert sorted(kept[""]) == [("test_plain.py::test_plain", "setup"), ("test_plain.py::test_plain", "teardown")]
    assert sorted(i for i, w in kept["passed"] + kept["wrong"] if w == "call") == sorted(
        eval_ids | {"test_plain.py::test_plain"}
    )
    assert len(outcomes) == 1  # the kept eval reports share one "passed", also when each came from a worker


def test_the_items_pytest_keeps_share_their_questions_words_and_junit_properties(evals: pytest.Pytester) -> None:
    """pytest keeps every item (with its question and its user_properties) to the end of the
    run: the words a bank repeats and the (name, value) properties are one object each."""
    kept = []
    spy = type("Spy", (), {"pytest_sessionfinish": lambda self, session: kept.extend(session.items)})()
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals), plugins=[spy])
    assert result.ret == 0
    items = {item.callspec.id: item for item in kept}
    true_1, true_2, false_1, false_2 = (items[i] for i in ("q-true-1", "q-true-2", "q-false-1", "q-false-2"))
    first, second = (item.callspec.params["chaosbench_question"] for item in (true_1, true_2))
    assert first.ground_truth is second.ground_truth and first.template is second.template
    assert first.extra is second.extra == {}
    assert not hasattr(first, "__dict__")  # slots
    assert true_1.user_properties == [("eval_status", "correct"), ("eval_label", "TRUE"), ("eval_gold", "TRUE")]
    assert all(a is b for a, b in zip(true_1.user_properties, true_2.user_properties))
    assert all(a is b for a, b in zip(false_1.user_properties, false_2.user_properties))


def test_a_session_without_eval_items_freezes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=FREEZE_PROBE)
    pytester.runpytest().assert_outcomes(passed=1)
    assert (pytester.path / "frozen.txt").read_text() == "0"
