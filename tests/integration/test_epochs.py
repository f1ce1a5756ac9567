"""--eval-epochs K (issue 42): each question and dialogue asked K times, each epoch its own item and
its own request on the wire, recorded and replayed; the summary's epochs block; comparisons
paired by question. Real HTTP against the fake provider on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import (
    EVAL_MODULE,
    answer_by_text,
    cassette_path,
    fake_run_args,
    question,
    small_bank,
    the_run,
    write_jsonl,
)


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makeini("[pytest]\neval_min_coverage = 0\n")
    return pytester


def summary_of(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def record_run(evals: pytest.Pytester, server, bank: Path, *more: str) -> pytest.RunResult:
    args = fake_run_args(evals, server.openai_base, bank, out_dir=True)
    return evals.runpytest_subprocess(*args, "--eval-epochs", "3", *more)


def test_three_epochs_send_three_distinguishable_requests_per_question_and_the_replay_sends_none(
    evals: pytest.Pytester, server
) -> None:
    server.responder = answer_by_text
    bank = small_bank(evals.path / "bank.jsonl", dialogues=1, turns=2, questions=4)
    result = record_run(evals, server, bank)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=result.parseoutcomes().get("passed", 0), failed=0)
    asked = [(r["body"]["messages"][-1]["content"], r["body"]["seed"]) for r in server.requests]
    assert len(asked) == 3 * (4 + 2) and len(set(asked)) == len(asked)  # each epoch its own request
    assert {seed for _, seed in asked} == {0, 1, 2}
    cassettes = evals.path / "cassettes"
    for item in ("q-00", "q-00-e02", "q-00-e03", "d0", "d0-e02", "d0-e03"):
        assert cassette_path(cassettes, "fake", "bank-zeroshot", item).is_file(), item
    run = next((evals.path / "results").glob("fake_zeroshot_*"))
    recorded = summary_of(run)
    assert recorded["epochs"]["k"] == 3 and recorded["epochs"]["questions"] == 4
    assert recorded["total_questions"] == 12 and recorded["dialogue_details"]["total_dialogues"] == 3

    server.clear()
    replay = record_run(evals, server, bank, "--eval-record-mode", "none")
    assert replay.ret == 0, replay.stdout.str()
    assert server.requests == []
    replayed = summary_of(run)
    assert {k: v for k, v in replayed.items() if k != "calls"} == {k: v for k, v in recorded.items() if k != "calls"}
    replay.stdout.fnmatch_lines(["epochs 3 per question, 4 questions: accuracy * (clustered by question)*"])


def test_epoch_items_sort_under_their_question_and_k_selects_them(evals: pytest.Pytester) -> None:
    bank = small_bank(evals.path / "bank.jsonl", dialogues=0, questions=3)
    result = evals.runpytest(
        "--model", "oracle", "--eval-cases", str(bank), "--eval-epochs", "2", "--collect-only", "-q", "-k", "q-01"
    )
    assert [line for line in result.outlines if "::" in line] == [
        "test_chaosbench.py::test_question[q-01-e01]",
        "test_chaosbench.py::test_question[q-01-e02]",
    ]


def test_a_random_model_with_three_epochs_fails_the_regression_gate_against_an_oracle_baseline(
    evals: pytest.Pytester,
) -> None:
    bank = write_jsonl(
        evals.path / "bank.jsonl", [question(f"q-{i:02d}", "TRUE" if i % 2 else "FALSE") for i in range(30)]
    )
    common = ["--eval-cases", str(bank), "-p", "no:cacheprovider"]
    assert evals.runpytest("--model", "oracle", *common).ret == 0
    baseline = the_run(evals.path / "results", "oracle", mode="zeroshot")
    gate = ["--eval-baseline", str(baseline), "--eval-fail-on-regression", "--eval-epochs", "3"]

    random_run = evals.runpytest("--model", "random", *common, *gate)
    assert random_run.ret == 1
    random_run.stdout.fnmatch_lines(["gate no-regression: FAILED *sign-flip (questions, epochs 1 vs 3) p = *"])
    page = next((evals.path / "results").glob("random_zeroshot_*-e3-*")) / "report.html"
    html = page.read_text(encoding="utf-8")
    assert "sign-flip test p = " in html and 'id="epochs"' in html and "accuracy over 3 epochs" in html
    oracle_run = evals.runpytest("--model", "oracle", *common, *gate)
    assert oracle_run.ret == 0, oracle_run.stdout.str()
    oracle_run.stdout.fnmatch_lines(["gate no-regression: passed *broken 0*"])


def test_epochs_at_temperature_zero_on_a_model_that_takes_it_get_one_warning(evals: pytest.Pytester, server) -> None:
    server.responder = answer_by_text
    bank = small_bank(evals.path / "bank.jsonl", dialogues=0, questions=2)
    result = record_run(evals, server, bank)
    assert result.ret == 0, result.stdout.str()
    assert len([line for line in result.outlines if line.startswith("WARNING --eval-epochs 3 at temperature 0")]) == 1
    warm = record_run(evals, server, bank, "--eval-temperature", "0.7")
    assert not [line for line in warm.outlines if "WARNING --eval-epochs" in line]


@pytest.mark.parametrize("value", ["0", "101"])
def test_epochs_out_of_range_are_a_usage_error(evals: pytest.Pytester, value: str) -> None:
    result = evals.runpytest("--model", "oracle", "--eval-epochs", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--eval-epochs (ini eval_epochs) must be a number of epochs from 1 to 100, got {value}"]
    )


def test_an_epoch_item_names_the_cassette_it_reads(evals: pytest.Pytester) -> None:
    """What the speed plugin plans (and the index warmer parses ahead) is the file each epoch reads."""
    evals.makeconftest(
        "from pytest_reasoning_evals.session import EVAL_SESSION\n"
        "def pytest_collection_finish(session):\n"
        "    protocol = session.config.stash[EVAL_SESSION].protocol('chaosbench')\n"
        "    for item in session.items:\n"
        "        print('PLAN', item.callspec.id, protocol.cassette_of(item)[1])\n"
    )
    bank = small_bank(evals.path / "bank.jsonl", dialogues=0, questions=1)
    result = evals.runpytest(
        "--model", "oracle", "--eval-cases", str(bank), "--eval-epochs", "2", "--collect-only", "-s"
    )
    assert [line for line in result.outlines if line.startswith("PLAN")] == [
        "PLAN q-00-e01 q-00",
        "PLAN q-00-e02 q-00-e02",
    ]


def test_the_runs_table_shows_a_run_with_epochs_by_its_clustered_accuracy_and_flip_rate(evals, capsys) -> None:
    from pytest_reasoning_evals.__main__ import main

    bank = write_jsonl(
        evals.path / "bank.jsonl", [question(f"q-{i:02d}", "TRUE" if i % 2 else "FALSE") for i in range(20)]
    )
    for model, epochs in (("oracle", "1"), ("random", "3")):
        assert evals.runpytest("--model", model, "--eval-cases", str(bank), "--eval-epochs", epochs).ret in (0, 1)
    assert main(["runs", str(evals.path / "results")]) == 0
    (table,) = [t for t in json.loads((evals.path / "results" / "runs.json").read_text())["tables"] if "rows" in t]
    rows = {row["model"]: row for row in table["rows"]}
    random_summary = summary_of(next((evals.path / "results").glob("random_zeroshot_*-e3-*")))
    assert rows["random"]["epochs"] == 3 and rows["oracle"]["epochs"] == 1
    assert rows["random"]["accuracy"] == random_summary["epochs"]["accuracy"]
    assert rows["random"]["accuracy_ci95"] == random_summary["epochs"]["accuracy_ci95"]
    assert rows["random"]["flip_rate"] == random_summary["epochs"]["flip_rate"] and rows["oracle"]["flip_rate"] is None
    assert "epochs 3" in rows["random"]["label"]
    (pair,) = table["comparisons"]
    assert pair["n_paired"] == 20 and pair["test"].startswith("sign-flip")
