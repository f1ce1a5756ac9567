"""Options and collection through pytester: the options and markers, one item per question and
per dialogue, selection, bad records and models files, usage errors, sessions without eval items."""

from __future__ import annotations

import json

import pytest
from helpers import (
    DEFAULT_CASES,
    four_questions,
    question,
    read_summary,
    the_run,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS, group_dialogues, load_questions, sample
from pytest_reasoning_evals.session import EVAL_SESSION

LOADED = load_questions(DEFAULT_CASES)
BANK = [q for q in LOADED if q.dialogue_id is None]  # single questions; dialogues are one item each
BANK_SIZE = len(BANK)
DIALOGUES = group_dialogues(LOADED)


def sampled(n: int) -> list:
    """--eval-max-items n at the default seed: its questions, then its dialogues, in the bank's order."""
    questions, dialogues = sample(BANK, DIALOGUES, n, 42)
    return [*questions, *dialogues]


# --- options and collection ---


def test_help_lists_the_eval_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    for option in (
        "--model",
        "--eval-mode",
        "--eval-cases",
        "--eval-split",
        "--eval-family",
        "--eval-max-items",
        "--eval-out-dir",
        "--eval-models-file",
        "--eval-strict-items",
        "--eval-min-accuracy",
        "--eval-num-shards",
        "--eval-shard-index",
        "--eval-resume",
        "--eval-max-cost",
        "--eval-dialectic-cases",
        "--eval-variant",
        "--eval-judge-model",
        "--eval-n-judges",
        "--eval-compare-models",
        "--eval-max-hard-fails",
        "--eval-require-variant-pass",
    ):
        result.stdout.fnmatch_lines([f"*{option}*"])


def test_one_namespaced_marker_per_protocol_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.chaosbench(family, split):*", "@pytest.mark.dialectic(case, variant):*"])
    assert not any(
        line.startswith(f"@pytest.mark.{name}:") for name in FAMILIES + SPLITS for line in result.stdout.lines
    )


def test_default_bank_collects_one_item_per_question_and_per_dialogue(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--collect-only", "-q")
    assert len(DIALOGUES) >= 50
    result.stdout.fnmatch_lines([f"{BANK_SIZE + len(DIALOGUES)} tests collected*"])
    result.stdout.fnmatch_lines([f"test_chaosbench.py::test_dialogue[{DIALOGUES[0].id}]"])
    assert result.ret == 0


@pytest.mark.parametrize("n_workers", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_a_bank_without_dialogues_collects_no_dialogue_placeholder(evals: pytest.Pytester, n_workers) -> None:
    """pytest's placeholder for test_dialogue's empty parameter set is not an item: "collected 4
    items", not "5 items / 1 deselected" (a team's questions-only quiz)."""
    result = evals.runpytest("--model", "oracle", f"--eval-cases={four_questions(evals)}", *n_workers)
    assert result.ret == 0, result.stdout.str()
    assert "deselected" not in result.stdout.str() and "test_dialogue" not in result.stdout.str()
    result.stdout.re_match_lines([r"(collected 4 items|.*\[4 items\])$", r"=+ 4 passed in "])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-m", "chaosbench(family='atomic')"], [q for q in BANK if q.family == "atomic"]),
        (["-m", "chaosbench(split='hard')"], [q for q in BANK if q.split == "hard"]),
        (["-k", "atomic and core"], [q for q in BANK if q.family == "atomic" and q.split == "core"]),
        (
            ["-k", "lorenz63"],
            [q for q in BANK if "lorenz63" in q.system_id]
            + [d for d in DIALOGUES if "lorenz63" in d.turns[0].system_id],
        ),
        (
            ["--eval-family", "atomic", "--eval-family", "adversarial"],
            [q for q in BANK if q.family in ("atomic", "adversarial")],
        ),
        (["--eval-split", "robustness"], [q for q in BANK if q.split == "robustness"]),
        (["--eval-max-items", "7"], sampled(7)),
        (["--eval-max-items", str(BANK_SIZE + 2)], sampled(BANK_SIZE + 2)),
    ],
    ids=[
        "marker-family",
        "marker-split",
        "keyword",
        "keyword-system",
        "family-option",
        "split-option",
        "max-items",
        "max-items-dialogues",
    ],
)
def test_selection(evals: pytest.Pytester, args: list[str], expected: list) -> None:
    assert expected, "the bank must hold items for this selection"
    result = evals.runpytest("--collect-only", "-q", *args)
    items = ("::test_question[", "::test_dialogue[")
    collected = [line.split("[", 1)[1].rstrip("]") for line in result.stdout.lines if any(i in line for i in items)]
    assert collected == [q.id for q in expected]


def test_bad_record_stops_collection_with_file_and_line(evals: pytest.Pytester) -> None:
    bad = question("q-2")
    del bad["ground_truth"]
    bank = write_jsonl(evals.path / "bad.jsonl", [question("q-1"), bad])
    result = evals.runpytest("--eval-cases", str(bank))
    result.stdout.fnmatch_lines([f"*{bank}:2: missing field(s) ground_truth*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert not (evals.path / "results").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        # family and split are free names (a team's own), but names: non-empty strings
        (json.dumps(question("q-9", family="")), "field 'family' must be a non-empty string, got ''"),
        (json.dumps(question("q-9", split=["train"])), "field 'split' must be a non-empty string, got ['train']"),
        (json.dumps(question("q-9", truth="MAYBE")), "ground_truth must be TRUE or FALSE"),
        (json.dumps(question("q 9")), "id 'q 9' is not filesystem-safe"),
        (json.dumps(question("q-1")), "duplicate id 'q-1' (first at"),
    ],
    ids=["json", "family", "split", "gold", "id", "duplicate"],
)
def test_bad_record_messages(evals: pytest.Pytester, line: str, message: str) -> None:
    bank = evals.path / "bad.jsonl"
    bank.write_text(json.dumps(question("q-1")) + "\n\n" + line + "\n")
    result = evals.runpytest("--eval-cases", str(bank))
    assert f"{bank}:3: {message}" in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_unknown_model_is_one_usage_error(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "gpt5-turbo-max")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown model 'gpt5-turbo-max'; known models: *always-true*"])


def test_model_without_key_or_cassettes_is_one_usage_error(evals: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = evals.runpytest("--model", "gpt4", "--eval-cassette-dir", str(evals.path / "cassettes"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*OPENAI_API_KEY is not set and model 'gpt4' has no cassettes to replay under *cassettes/gpt4: "
            "set OPENAI_API_KEY and record them with `pytest evals --model=gpt4 --eval-record-mode=once`*"
        ]
    )
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


def test_models_file_adds_an_alias(evals: pytest.Pytester) -> None:
    models = evals.path / "models.yaml"
    models.write_text("models:\n  my-oracle:\n    provider: baseline\n    model_id: oracle\n")
    result = evals.runpytest(
        "--eval-models-file", str(models), "--model", "my-oracle", "--eval-cases", four_questions(evals)
    )
    assert result.ret == 0
    assert read_summary(evals, "my-oracle")["overall_accuracy"] == 1.0


def test_malformed_models_file_names_file_and_alias(evals: pytest.Pytester) -> None:
    models = evals.path / "models.yaml"
    models.write_text("models:\n  broken:\n    provider: telepathy\n    model_id: x\n")
    result = evals.runpytest("--eval-models-file", str(models), "--model", "broken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{models}: model 'broken': provider 'telepathy' is not one of*"])


def test_plain_test_sessions_write_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest()
    assert result.ret == 0
    assert not (pytester.path / "results").exists()
    assert "eval summary" not in result.stdout.str()


# --- a good pytest citizen ---


def test_a_session_without_eval_items_touches_nothing(pytester: pytest.Pytester) -> None:
    """Installed but unused: no protocol, no registry, no model, no file; exit status untouched."""
    pytester.makepyfile(test_app="def test_ok():\n    assert True\n\ndef test_fails():\n    assert False\n")
    pytester.makeini("[pytest]\neval_models_file = does-not-exist.yaml\neval_cases = nowhere.jsonl\n")
    sessions = []
    result = pytester.runpytest(
        plugins=[
            type(
                "Spy",
                (),
                {"pytest_sessionfinish": lambda self, session: sessions.append(session.config.stash[EVAL_SESSION])},
            )()
        ]
    )
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (session,) = sessions
    assert session.protocols == {} and "models" not in session.__dict__
    # pytest's own cache only: its cache folder, and (unless PYTHONDONTWRITEBYTECODE is set) its
    # assertion rewriter's bytecode of the test module
    made = sorted(p.name for p in pytester.path.iterdir())
    assert [name for name in made if name != "__pycache__"] == [".pytest_cache", "test_app.py", "tox.ini"]
    pycache = pytester.path / "__pycache__"
    if pycache.exists():
        assert [p.name.split(".")[0] for p in pycache.iterdir()] == ["test_app"], list(pycache.iterdir())
    assert "eval summary" not in result.stdout.str()


# what only an eval session needs: a session without eval items must not import it (its import
# time is the plugin's cost to every unrelated suite; benchmarks/plugin_overhead.py measures it)
EVAL_ONLY = (
    "pytest_reasoning_evals.models",
    "pytest_reasoning_evals.budget",
    "pytest_reasoning_evals.prefetch",
    "pytest_reasoning_evals.results",
    "pytest_reasoning_evals.cassettes",
    "pytest_reasoning_evals.registry",
    "pytest_reasoning_evals.providers.http",
    "pytest_reasoning_evals.runs_table",
    "pytest_reasoning_evals.report",
    "pytest_reasoning_evals.providers.base",
    "pytest_reasoning_evals.chaosbench.protocol",
    "pytest_reasoning_evals.dialectic.protocol",
)
THIRD_PARTY = ("requests", "yaml", "vcr", "jinja2", "matplotlib", "json5")
MODULES_SPY = """
import json, sys

def pytest_unconfigure(config):
    with open("modules.json", "w") as f:
        json.dump(sorted(sys.modules), f)
"""


@pytest.mark.slow
def test_a_session_without_eval_items_imports_nothing_only_eval_sessions_need(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        **{f"test_app_{m}": "".join(f"def test_{i}():\n    pass\n" for i in range(10)) for m in range(5)}
    )
    pytester.makeconftest(MODULES_SPY)
    loaded = {}
    for arm, args in (("with", ()), ("without", ("-p", "no:pytest_reasoning_evals"))):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        result.assert_outcomes(passed=50)
        loaded[arm] = set(json.loads((pytester.path / "modules.json").read_text()))
    assert "pytest_reasoning_evals.session" in loaded["with"], "the plugin was loaded"
    assert sorted(loaded["with"] & set(EVAL_ONLY)) == []
    added = {m.split(".")[0] for m in loaded["with"] - loaded["without"]}
    assert sorted(added & set(THIRD_PARTY)) == []


def test_settings_come_from_the_ini_file_relative_to_it(evals: pytest.Pytester) -> None:
    bank = four_questions(evals)
    use_repo_cassettes(
        evals,
        f"eval_model = oracle\neval_cases = {bank}\neval_out_dir = out\neval_min_accuracy = 0.5\n"
        "eval_family =\n    atomic\n    multi_hop\n",
    )
    result = evals.runpytest()
    assert result.ret == 0, result.stdout.str()
    summary = json.loads((the_run(evals.path / "out", "oracle", subset=True) / "summary.json").read_text())
    assert summary["total_questions"] == 3 and summary["overall_accuracy"] == 1.0
    result.stdout.fnmatch_lines(["gate min-accuracy: passed*", "subset run (--eval-family)*untouched"])
    assert evals.runpytest("--model", "always-false").ret == 1, "the command line wins over the ini file"


@pytest.mark.slow
def test_usage_problems_stop_the_session_once_under_xdist(evals: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = evals.runpytest_subprocess("--model", "gpt4", f"--eval-cassette-dir={evals.path / 'cassettes'}", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("OPENAI_API_KEY is not set") == 1
    assert "passed" not in result.stdout.str()


def test_an_empty_case_file_is_a_collection_error_naming_it(evals: pytest.Pytester) -> None:
    empty = evals.path / "empty.jsonl"
    empty.write_text("")
    result = evals.runpytest("--model", "oracle", "--eval-min-accuracy", "0.9", f"--eval-cases={empty}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert f"{empty}: no questions (the case file is empty)" in result.stdout.str()
