"""eval_answer_words: a team's own answer words per label score a question set in its own language,
are part of the run's configuration, and a malformed value is one usage error (issue 40, item 2).
Real HTTP against the fake provider on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from fakeprovider import FakeProvider
from helpers import EVAL_MODULE, fake_run_args, named_run, question, write_jsonl

GERMAN_WORDS = "TRUE = wahr, richtig, ja; FALSE = falsch, nein"

# question, gold, the model's reply: three right, one wrong
GERMAN = {
    "de-1": ("Ist das Lorenz-System mit rho = 28 chaotisch?", "TRUE", "Wahr."),
    "de-2": ("Ist die logistische Abbildung bei r = 4 chaotisch?", "TRUE", "Falsch."),
    "de-3": ("Ist ein gedämpftes Pendel ohne Antrieb chaotisch?", "FALSE", "Falsch."),
    "de-4": ("Ist der harmonische Oszillator chaotisch?", "FALSE", "Nein, das ist falsch."),
}


@pytest.fixture
def german_evals(recording_evals: pytest.Pytester) -> pytest.Pytester:
    """recording_evals with the German answer words in its ini."""
    recording_evals.makepyprojecttoml(f'[tool.pytest.ini_options]\neval_answer_words = "{GERMAN_WORDS}"\n')
    return recording_evals


def german_bank(pytester: pytest.Pytester) -> str:
    records = [question(id, gold, question=text) for id, (text, gold, _) in GERMAN.items()]
    return str(write_jsonl(pytester.path / "fragen.jsonl", records))


def reply_in_german(body: dict) -> str:
    asked = body["messages"][-1]["content"]
    return next(reply for text, _, reply in GERMAN.values() if text in asked)


def the_run(pytester: pytest.Pytester) -> tuple[dict, dict, dict]:
    """The last run's summary, its records by id and its manifest."""
    folder = named_run(pytester.path / "results", "fake_zeroshot")
    records = {r["id"]: r for r in map(json.loads, (folder / "completions.jsonl").read_text().splitlines())}
    summary = json.loads((folder / "summary.json").read_text())
    return summary, records, json.loads((folder / "run_manifest.json").read_text())


def test_a_german_question_set_is_scored_with_its_own_answer_words(german_evals: pytest.Pytester) -> None:
    with FakeProvider() as server:
        server.responder = reply_in_german
        args = fake_run_args(german_evals, server.openai_base, german_bank(german_evals))
        result = german_evals.runpytest_subprocess(*args)
        assert len(server.requests) == 4, "every reply has a label: nothing is asked again"
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()  # a wrong answer fails its item, not the run
    summary, records, manifest = the_run(german_evals)
    assert (summary["overall_accuracy"], summary["coverage"]) == (0.75, 1.0)
    assert {id: r["label"] for id, r in records.items()} == {
        "de-1": "TRUE",
        "de-2": "FALSE",
        "de-3": "FALSE",
        "de-4": "FALSE",
    }
    words = {"TRUE": ["wahr", "richtig", "ja"], "FALSE": ["falsch", "nein"]}
    assert manifest["prompt"]["answer_words"] == words
    hash_with_words = manifest["execution"]["config_hash"]

    # the same replies read without the words (the command line's empty value wins over the ini): no label,
    # in a run directory of its own with another configuration hash
    replay = german_evals.runpytest_subprocess(
        *args[:-4],
        "--eval-record-mode",
        "none",
        "-p",
        "no:cacheprovider",
        "--eval-answer-words",
        "",
        "--eval-reprompt",
        "0",
    )
    assert replay.ret == pytest.ExitCode.TESTS_FAILED, replay.stdout.str()  # the coverage floor
    summary, records, manifest = the_run(german_evals)
    assert (summary["overall_accuracy"], summary["coverage"]) == (None, 0.0)
    assert "answer_words" not in manifest["prompt"]
    assert manifest["execution"]["config_hash"] != hash_with_words
    assert len(list((german_evals.path / "results").glob("fake_zeroshot_fragen-*"))) == 2


@pytest.mark.parametrize(
    ("ini", "flag", "needle"),
    [
        ("TRUE = ja; FALSE = ja", None, "'ja' is given for TRUE but is a FALSE word"),
        (GERMAN_WORDS, "MAYBE = vielleicht", "unknown label 'MAYBE'"),
    ],
)
def test_a_malformed_value_is_one_usage_error_naming_the_option(
    pytester: pytest.Pytester, ini: str, flag: str | None, needle: str
) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makepyprojecttoml(f'[tool.pytest.ini_options]\neval_answer_words = "{ini}"\n')
    result = pytester.runpytest_subprocess(*(["--eval-answer-words", flag] if flag else []), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR")]
    assert errors == [f"ERROR: --eval-answer-words (ini eval_answer_words): {needle}" + errors[0].split(needle)[-1]]
    assert "Traceback" not in result.stderr.str()
