"""Issue 25, whole runs: nothing lost, nothing misreported. A baseline that is the run's own folder,
sessions that run nothing, items that die inside the harness, bad baselines, damaged locks and
run files, an unwritable output folder, and the exit status of an outage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakeprovider import FakeProvider, status
from helpers import (
    add_eval_module,
    cases_run,
    fake_run_args,
    oracle_shards,
    question,
    run_dir,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals import results


def all_true_bank(path, n: int = 10):
    return write_jsonl(path, [question(f"q-{i:02d}", "TRUE") for i in range(n)])


def fake_run(pytester, url: str, tag: str, *extra: str) -> list[str]:
    """Arguments of a recording run of the fake model over ten questions whose gold is TRUE, into results/fake_zeroshot."""
    return [
        "test_chaosbench.py",
        *fake_run_args(pytester, url, all_true_bank(pytester.path / "bank.jsonl"), tag),
        *extra,
    ]


def no_traceback(result) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.lines if line.startswith("ERROR")]


def files_of(directory) -> dict:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file() and p.name != ".lock"}


# --- (1) --eval-baseline at the run's own output folder ---


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_worse_run_compared_with_its_own_output_folder_fails_the_regression_gate(pytester, fake_key, workers) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = lambda body: "TRUE"
        assert pytester.runpytest(*fake_run(pytester, server.openai_base, "good")).ret == 0
        server.responder = lambda body: "FALSE"
        own = run_dir(pytester, "fake")
        result = pytester.runpytest(
            *fake_run(pytester, server.openai_base, "bad", "-n", workers),
            "--eval-baseline",
            str(own),
            "--eval-fail-on-regression",
        )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["gate no-regression: FAILED (paired accuracy 1.0000 -> 0.0000 (-1.0000), broken 10, *"]
    )
    comparison = json.loads((own / "comparison.json").read_text())
    assert comparison["accuracy_baseline"] == 1.0 and comparison["accuracy_current"] == 0.0 and comparison["regressed"]


def test_items_whose_calls_failed_in_the_baseline_are_not_paired(pytester, fake_key) -> None:
    """A baseline run whose calls failed (an outage, a stale recording) measured nothing of them:
    counting them as 'not right' would make any later run look fixed. They are left out, and a
    baseline that measured nothing fails the regression gate."""
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = lambda body: "TRUE"  # every answer right
        assert pytester.runpytest(*fake_run(pytester, server.openai_base, "good")).ret == 0
        own = run_dir(pytester, "fake")
        # then a replay from a folder with no cassettes (a stale recording): every item a cassette miss
        stale = pytester.runpytest(*fake_run(pytester, server.openai_base, "stale", "--eval-record-mode", "none"))
        assert stale.ret == pytest.ExitCode.TESTS_FAILED
        result = pytester.runpytest(
            *fake_run(pytester, server.openai_base, "again"), "--eval-baseline", str(own), "--eval-fail-on-regression"
        )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    comparison = json.loads((own / "comparison.json").read_text())
    assert comparison["n_paired"] == 0 and comparison["n_baseline_failed"] == 10 and comparison["fixed"] == 0, (
        comparison
    )
    result.stdout.fnmatch_lines(
        ["*10 items left out: their calls failed in the baseline*", "gate no-regression: FAILED*"]
    )


@pytest.mark.slow
def test_a_worse_dialectic_run_compared_with_its_own_output_folder_fails_the_regression_gate(pytester) -> None:
    from helpers import DIALECTIC_MODULE

    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    assert pytester.runpytest_subprocess("--eval-variant", "dialectic").ret == 0
    own = pytester.path / "results" / "smollm2-135m_dialectic"
    per_response = own / "per_response.jsonl"
    # a better previous run
    better = [{**r, "score": 100.0} for r in map(json.loads, per_response.read_text().splitlines())]
    per_response.write_text("".join(json.dumps(r) + "\n" for r in better))
    result = pytester.runpytest_subprocess(
        "--eval-variant", "dialectic", f"--eval-dialectic-baseline={own}", "--eval-fail-on-regression"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["gate dialectic-no-regression: FAILED (regressed: dialectic)"])

    per_response.write_text(per_response.read_text() + '{"query_id": "c1", "variant": "dialectic", "score": "high"}\n')
    result = pytester.runpytest_subprocess(
        "--eval-variant", "dialectic", f"--eval-dialectic-baseline={own}", "--eval-fail-on-regression"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    (line,) = error_lines(result)
    assert (
        line
        == f"ERROR: --eval-dialectic-baseline {per_response}:{len(better) + 1}: 'score' is 'high', not a number or null"
    ), line


# --- (2) a session that runs no eval item touches no run directory ---


def finished_run_with_a_gate(pytester):
    """A finished run of the random baseline, with a gate set in the ini: (args, its directory, its files)."""
    add_eval_module(pytester)
    use_repo_cassettes(pytester, "eval_min_accuracy = 0.0\n")
    cases = all_true_bank(pytester.path / "bank.jsonl")
    args = ["--model", "random", "--eval-cases", str(cases), "-p", "no:cacheprovider"]
    assert pytester.runpytest(*args).ret == 0
    directory = run_dir(pytester, "random")
    return args, directory, files_of(directory)


def test_collect_only_with_a_gate_in_the_ini_leaves_the_last_run_intact(pytester) -> None:
    args, directory, before = finished_run_with_a_gate(pytester)
    assert before["completions.jsonl"]
    result = pytester.runpytest(*args, "--collect-only")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    no_traceback(result)
    assert files_of(directory) == before


def test_a_malformed_question_file_with_a_gate_set_leaves_the_last_run_intact(pytester) -> None:
    args, directory, before = finished_run_with_a_gate(pytester)
    bad = pytester.path / "bad.jsonl"
    bad.write_text('{"id": "q-1", "question": \n')
    result = pytester.runpytest("--model", "random", "--eval-cases", str(bad), "-p", "no:cacheprovider")
    assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.INTERNAL_ERROR), result.stdout.str()
    result.stdout.fnmatch_lines([f"*{bad}:1: invalid JSON*"])
    no_traceback(result)
    assert files_of(directory) == before


def test_a_missing_prompt_file_with_a_gate_set_is_the_same_usage_error(pytester) -> None:
    args, directory, before = finished_run_with_a_gate(pytester)
    prompts = pytester.path / "prompts"
    prompts.mkdir()
    result = pytester.runpytest(*args, "--eval-prompts", str(prompts))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert len(error_lines(result)) == 1 and "zeroshot" in error_lines(result)[0], result.stderr.str()
    no_traceback(result)
    assert files_of(directory) == before


def test_a_gate_with_no_item_run_still_fails_and_writes_nothing(pytester) -> None:
    args, directory, before = finished_run_with_a_gate(pytester)
    result = pytester.runpytest(*args, "-k", "no-such-item")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*= chaosbench: no item ran, no run directory written =*",
            "gate min-accuracy: FAILED (overall accuracy n/a (nothing evaluated), required >= 0.0)",
        ]
    )
    assert files_of(directory) == before
    subset = run_dir(pytester, "random", subset=True)  # (its lock is taken when the items are made, before -k)
    assert not subset.exists() or not files_of(subset)


# --- issue 39, item 4: ini gates judge what the session selected ---


def two_protocols_with_ini_gates(pytester, gates: str = "eval_min_coverage = 0.2\neval_min_accuracy = 0.1\n") -> None:
    """The project's two eval modules replaying the committed cassettes, with ChaosBench `gates` in
    the ini file (as this repository's pyproject.toml sets its coverage floor)."""
    from helpers import DIALECTIC_MODULE, REPO_CASSETTES

    add_eval_module(pytester)
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    pytester.makeini(f"[pytest]\neval_cassette_dir = {REPO_CASSETTES}\n{gates}eval_max_failed_judge_share = 1\n")


NOT_JUDGED = (
    "chaosbench: none of its items selected: its ini gates are not judged (eval_min_accuracy, eval_min_coverage)"
)


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_ini_gate_of_a_protocol_whose_file_was_not_selected_is_not_judged(pytester, workers: str) -> None:
    two_protocols_with_ini_gates(pytester)
    result = pytester.runpytest_subprocess("test_dialectic.py", "--eval-variant", "dialectic", "-n", workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines([NOT_JUDGED])
    assert "gate min-coverage" not in result.stdout.str() and "no item ran" not in result.stdout.str()
    assert not run_dir(pytester, "smollm2-135m").exists()


def test_an_ini_gate_of_a_protocol_deselected_by_k_is_not_judged(pytester) -> None:
    two_protocols_with_ini_gates(pytester)
    result = pytester.runpytest("-k", "test_dialectic and dx_whistleblow", "--eval-variant", "dialectic")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines([NOT_JUDGED])


def test_a_command_line_gate_of_a_protocol_not_selected_still_fails(pytester) -> None:
    """Nothing measured is not a pass: a gate asked for on the command line judges the protocol anyway."""
    two_protocols_with_ini_gates(pytester)
    args = ["test_dialectic.py", "-k", "dx_whistleblow", "--eval-variant", "dialectic", "--eval-min-coverage", "0.2"]
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*= chaosbench: no item ran, no run directory written =*",
            "gate min-coverage: FAILED (coverage n/a (no item) (answers with a TRUE/FALSE), required >= 0.2)",
        ]
    )


def test_a_dialogues_only_run_meets_an_ini_floor_over_its_turns(pytester) -> None:
    two_protocols_with_ini_gates(pytester, "eval_min_coverage = 0.2\n")
    result = pytester.runpytest("test_chaosbench.py", "-k", "test_dialogue", "--model", "oracle")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate min-coverage: passed (coverage 1.0000 (dialogue turns answered TRUE/FALSE; no question asked), "
            "required >= 0.2)"
        ]
    )


# --- (3) an item that dies inside the harness makes the run incomplete ---

RAISING_OUTCOME = """
import pytest

@pytest.fixture(scope="session")
def chaosbench_outcome(chaosbench_outcome):
    def outcome(record):
        if record["id"] in ("q-02", "q-05", "q-07"):
            raise ValueError("a parser bug")
        chaosbench_outcome(record)
    return outcome
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_item_raising_in_the_harness_makes_the_run_incomplete_and_is_an_error_record(pytester, workers) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(RAISING_OUTCOME)
    cases = all_true_bank(pytester.path / "bank.jsonl")
    result = pytester.runpytest(
        "--model", "oracle", "--eval-cases", str(cases), "-p", "no:cacheprovider", "-n", workers
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    directory = run_dir(pytester, "oracle")
    summary = json.loads((directory / "summary.json").read_text())
    assert summary["complete"] is False and "3 items ended in a harness error" in summary["incomplete_reason"]
    assert summary["total_questions"] == 10 and summary["num_errors"] == 3
    assert json.loads((directory / "gates.json").read_text())["passed"] is False
    records = {r["id"]: r for r in map(json.loads, (directory / "completions.jsonl").read_text().splitlines())}
    assert len(records) == 10
    assert records["q-05"]["error"].startswith("harness error: ValueError: a parser bug")
    result.stdout.fnmatch_lines(["gate complete: FAILED (the run is incomplete: 3 items ended in a harness error*"])
    result.stdout.fnmatch_lines(["*ValueError: a parser bug*"])  # the harness bug keeps its traceback


# --- (5) a bad baseline is a usage error before any call; the run's outputs are never lost ---


def baseline_file(tmp, items_text: str):
    path = tmp / "base.json"
    path.write_text(
        '{\n  "format": "pytest-reasoning-evals/chaosbench-baseline/1",\n  "items": {\n' + items_text + "\n  }\n}\n"
    )
    return path


GOOD = '"family": "atomic", "gold": true, "split": "core"'


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (f'    "q-00": {{"correct": "yes", {GOOD}}}', "{path}:4: item 'q-00': 'correct' is 'yes', not true or false"),
        ('    "q-00": {"correct": true, "family": "atomic", "split": "core"}', "{path}:4: item 'q-00' has no 'gold'"),
        (
            f'    "q-00": {{"correct": true, {GOOD}}},\n    "q-01": {{"correct": true, {GOOD}}},\n    "q-00": {{"correct": false, {GOOD}}}',
            "{path}:6: item 'q-00' is given twice (first at line 4)",
        ),
        ('    "q-00": ' + "[" * 100_000, "{path}: not valid JSON (nested too deeply to read)"),
        ('    "q-00": {"correct": tru', "{path}:4: not valid JSON (Expecting value*"),
    ],
    ids=["not-a-bool", "no-gold", "duplicate", "deep", "not-json"],
)
def test_a_bad_baseline_file_is_a_usage_error_before_any_call(pytester, fake_key, items, message) -> None:
    add_eval_module(pytester)
    path = baseline_file(pytester.path, items)
    with FakeProvider() as server:
        server.responder = lambda body: "TRUE"
        result = pytester.runpytest(
            *fake_run(pytester, server.openai_base, "b"), "--eval-baseline", str(path), "--eval-fail-on-regression"
        )
        asked = len(server.requests)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    (line,) = error_lines(result)
    from fnmatch import fnmatch

    assert fnmatch(line, "ERROR: --eval-baseline " + message.format(path=path)), line
    assert asked == 0
    no_traceback(result)
    assert not run_dir(pytester, "fake").exists()


def test_a_baseline_that_cannot_be_compared_still_writes_the_run_and_fails_one_gate(pytester, fake_key) -> None:
    """Whatever goes wrong comparing (a bug), the run's outputs are written and the gate says why in one line."""
    add_eval_module(pytester)
    pytester.makeconftest("""
from pytest_reasoning_evals.chaosbench import finish
def broken(*args, **kwargs):
    raise KeyError("family")
finish.compare = broken
""")
    path = baseline_file(pytester.path, f'    "q-00": {{"correct": true, {GOOD}}}')
    with FakeProvider() as server:
        server.responder = lambda body: "TRUE"
        result = pytester.runpytest_subprocess(
            *fake_run(pytester, server.openai_base, "c"), "--eval-baseline", str(path), "--eval-fail-on-regression"
        )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    directory = run_dir(pytester, "fake")
    assert (directory / "summary.json").exists() and (directory / "report.html").exists()
    gates = json.loads((directory / "gates.json").read_text())
    (gate,) = [g for g in gates["gates"] if g["name"] == "baseline"]
    assert not gate["passed"] and "KeyError" in gate["detail"] and str(path) in gate["detail"]
    no_traceback(result)


# --- (L11) an outage is a failed run ---


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_outage_exits_1_like_a_failed_run(pytester, fake_key, workers) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.script(*[status(503, retry_after=0)] * 200)
        result = pytester.runpytest_subprocess(*fake_run(pytester, server.openai_base, "o"), "-n", workers)
    result.stdout.fnmatch_lines(["*provider outage: 3 call(s) in a row failed*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()


# --- (L5) a damaged .lock is neither a traceback nor a way in ---


@pytest.mark.parametrize("damage", ["garbage", "directory", "deleted-while-held"])
def test_a_damaged_lock_file_neither_breaks_a_run_nor_lets_a_second_one_in(tmp_path, damage) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lock_file = run / ".lock"
    if damage == "garbage":
        lock_file.write_bytes(b"\x00\xff{not json" * 100)
    elif damage == "directory":
        lock_file.mkdir()
    first = results.RunDirLock(run, 4242, "pytest evals --model first")
    assert first.try_hold()
    try:
        if damage == "deleted-while-held":
            lock_file.unlink()
        second = results.RunDirLock(run, 4343, "pytest evals --model second")
        assert not second.try_hold(), "a second run is refused"
        with pytest.raises(results.RunDirBusy, match=f"^{run} is in use by another run"):
            second.acquire(patience=0.0)
        assert results.busy_holder(run).startswith(f"{run} is in use by another run")
    finally:
        first.release()
    assert results.busy_holder(run) is None
    assert second.try_hold(), "free again once the first run ends"
    second.release()


def test_a_run_whose_lock_file_is_a_directory_runs_normally(pytester) -> None:
    add_eval_module(pytester)
    cases = all_true_bank(pytester.path / "bank.jsonl")
    (cases_run(pytester.path / "results", "random", cases) / ".lock").mkdir(parents=True)
    result = pytester.runpytest("--model", "random", "--eval-cases", str(cases))
    assert result.ret == 0, result.stdout.str()
    no_traceback(result)
    assert json.loads((run_dir(pytester, "random") / "summary.json").read_text())["complete"]


# --- (extra) an output folder that cannot be written is a usage error ---


@pytest.mark.parametrize("where", ["read-only", "under-a-file"])
@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_unwritable_out_dir_is_a_usage_error_naming_the_option(pytester, where, workers) -> None:
    add_eval_module(pytester)
    if where == "read-only":
        out = Path("/proc/1/no-such-folder/results")  # not writable, whoever runs the tests (root included)
    else:
        (pytester.path / "afile").write_text("x")
        out = pytester.path / "afile" / "results"
    use_repo_cassettes(pytester, f"eval_out_dir = {out}\n")
    result = pytester.runpytest(
        "--model", "random", "--eval-cases", str(all_true_bank(pytester.path / "bank.jsonl")), "-n", workers
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    no_traceback(result)
    assert error_lines(result) and "eval_out_dir" in error_lines(result)[0]


# --- (L6) hand-damaged run files: one line naming the file, never a traceback ---


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", *map(str, args)], capture_output=True, text=True
    )


def edit_json(path, change) -> None:
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))


def assert_one_line(result: subprocess.CompletedProcess, *parts: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("file", "change", "said"),
    [
        ("summary.json", lambda d: {**d, "task_details": 5}, "'task_details' is 5, not an object"),
        ("summary.json", lambda d: [1, 2], "the file is [1, 2], not an object"),
        ("summary.json", lambda d: {k: v for k, v in d.items() if k != "cost_usd"}, "no 'cost_usd'"),
        (
            "run_meta.json",
            lambda d: {**d, "execution_time_seconds": "slow"},
            "'execution_time_seconds' is \"slow\", not a number",
        ),
        ("run_manifest.json", lambda d: {**d, "prompt": 5}, "'prompt' is 5, not an object"),
        ("gates.json", lambda d: {"gates": 5}, "not the file a run writes"),
        ("gates.json", lambda d: {"gates": [{"name": "x"}]}, "not the file a run writes"),
        ("comparison.json", lambda d: {"n_paired": "x"}, "no 'baseline'"),
    ],
    ids=[
        "summary-type",
        "summary-list",
        "summary-key",
        "meta-type",
        "manifest-type",
        "gates-type",
        "gates-entry",
        "comparison",
    ],
)
def test_report_of_a_hand_damaged_run_file_is_one_line_naming_it(pytester, file, change, said) -> None:
    add_eval_module(pytester)
    assert (
        pytester.runpytest("--model", "random", "--eval-cases", str(all_true_bank(pytester.path / "bank.jsonl"))).ret
        == 0
    )
    directory = run_dir(pytester, "random")
    path = directory / file
    if not path.exists():
        path.write_text("{}")
    edit_json(path, change)
    assert_one_line(cli("report", directory), f"{path}: ", said)
    path.write_text("not json")
    assert_one_line(cli("report", directory), f"{path}: ")


@pytest.mark.parametrize(
    ("file", "change", "said"),
    [
        ("run_meta.json", lambda d: {**d, "resumed_items": "x"}, "run_meta.json has 'resumed_items' = 'x', not a int"),
        ("summary.json", lambda d: {**d, "complete": "no"}, "summary.json has 'complete' = 'no', not a bool"),
    ],
)
def test_merge_of_a_shard_with_a_wrongly_typed_value_is_one_line_naming_it(pytester, file, change, said) -> None:
    add_eval_module(pytester)
    shards = oracle_shards(pytester, str(all_true_bank(pytester.path / "bank.jsonl")))
    edit_json(shards[1] / file, change)
    assert_one_line(cli("merge", *shards, "--out", pytester.path / "merged"), str(shards[1]), said)
    assert not (pytester.path / "merged").exists()


NAN_COST = """
import pytest

@pytest.fixture(scope="session")
def chaosbench_outcome(chaosbench_outcome):
    return lambda record: chaosbench_outcome({**record, "cost_usd": float("nan") if record["id"] == "q-03" else float("inf")})
"""


def strict(text: str):
    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_costs_never_make_an_output_file_invalid_json(pytester) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(NAN_COST)
    result = pytester.runpytest("--model", "oracle", "--eval-cases", str(all_true_bank(pytester.path / "bank.jsonl")))
    no_traceback(result)
    directory = run_dir(pytester, "oracle")
    for name in ("summary.json", "run_meta.json", "run_manifest.json", "gates.json"):
        strict((directory / name).read_text())
    assert strict((directory / "summary.json").read_text())["cost_usd"] is None
    for line in (directory / "completions.jsonl").read_text().splitlines():
        assert strict(line)["cost_usd"] is None
    assert cli("report", directory).returncode == 0


RAISING_DIALECTIC_OUTCOME = """
import pytest

@pytest.fixture
def dialectic_outcome(dialectic_outcome, request):
    def outcome(record):
        if request.node.name.startswith("test_pcc["):
            raise ValueError("a checker bug")
        dialectic_outcome(record)
    return outcome
"""


@pytest.mark.slow
def test_a_dialectic_item_raising_in_the_harness_makes_the_run_incomplete(pytester) -> None:
    from helpers import DIALECTIC_MODULE

    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    pytester.makeconftest(RAISING_DIALECTIC_OUTCOME)
    result = pytester.runpytest_subprocess("--eval-variant", "dialectic")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["gate dialectic-complete: FAILED (16 items ended in a harness error (see their tracebacks))"]
    )
    meta = json.loads((pytester.path / "results" / "smollm2-135m_dialectic" / "run_meta.json").read_text())
    assert meta["complete"] is False and meta["incomplete_reason"].startswith("16 items ended in a harness error")
    assert (
        json.loads((pytester.path / "results" / "smollm2-135m_dialectic" / "gates.json").read_text())["passed"] is False
    )


def test_report_of_a_run_written_before_the_later_summary_keys_is_drawn(pytester) -> None:
    """A run directory of an earlier version has no effective_accuracy, invalid_rate, per_class or
    flip_rate: its report is still drawn (nothing reads them back); a key it did write stays required."""
    add_eval_module(pytester)
    bank = str(all_true_bank(pytester.path / "bank.jsonl"))
    assert pytester.runpytest("--model", "random", "--eval-cases", bank).ret == 0
    directory = run_dir(pytester, "random")
    later = {"effective_accuracy", "invalid_rate", "per_class", "flip_rate"}
    edit_json(directory / "summary.json", lambda d: {k: v for k, v in d.items() if k not in later})
    (directory / "report.html").unlink()
    drawn = cli("report", directory)
    assert drawn.returncode == 0 and (directory / "report.html").is_file(), drawn.stderr
