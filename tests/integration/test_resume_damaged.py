"""A resume that trusts nothing it reads back: unreadable lines are reported and asked again,
records outside the selection are ignored, an unreadable config is one usage error."""

from __future__ import annotations

import json

import pytest
from helpers import add_eval_module, run_dir
from helpers import small_bank as bank  # 12 questions and 2 dialogues of 3 turns

# --- 6. resume trusts nothing it reads back ---


def full_run(pytester, *extra: str):
    """A finished run of the random baseline over a small bank: (its directory, summary text, completions lines)."""
    add_eval_module(pytester)
    cases = bank(pytester.path / "bank.jsonl", questions=10, dialogues=1)
    args = ["--model", "random", "--eval-cases", str(cases), "-p", "no:cacheprovider", *extra]
    assert pytester.runpytest(*args).ret == 0
    directory = run_dir(pytester, "random")
    return (
        args,
        directory,
        (directory / "summary.json").read_text(),
        (directory / "completions.jsonl").read_bytes().splitlines(),
    )


def asked(result) -> int:
    outcomes = result.parseoutcomes()
    return outcomes.get("passed", 0) + outcomes.get("wrong", 0) + outcomes.get("failed", 0)


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_skips_unreadable_lines_reports_them_and_asks_their_items_again(pytester, workers) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    dialogue = next(i for i, line in enumerate(lines) if b'"kind": "dialogue"' in line)
    assert dialogue not in (2, 4, 6)
    wrong_type = json.loads(lines[4])
    wrong_type["input_tokens"] = "12"
    broken_dialogue = json.loads(lines[dialogue])
    broken_dialogue["turns"] = "three turns"
    lines[dialogue] = json.dumps(broken_dialogue).encode()
    lines[2] = b'{"id": "caf\xe9", "not": "utf-8"}'
    lines[4] = json.dumps(wrong_type).encode()
    lines[6] = b'["a list", "not a record"]'
    first = min(dialogue, 2) + 1
    (directory / "completions.jsonl").write_bytes(b"\n".join(lines) + b"\n")

    result = pytester.runpytest(*args, "--eval-resume", "-n", workers)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"WARNING {directory / 'completions.jsonl'}: 4 unreadable lines skipped (first at line {first}); "
            "their items are asked again"
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str()
    assert asked(result) == 4
    assert (directory / "summary.json").read_text() == full_summary
    assert len((directory / "completions.jsonl").read_text().splitlines()) == len(lines)


def test_resume_ignores_records_of_items_outside_the_selection(pytester) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    foreign = json.loads(lines[0])
    foreign["id"] = "zz-not-in-the-bank"
    dialogue = next(i for i, line in enumerate(lines) if b'"kind": "dialogue"' in line)
    gone = json.loads(lines[dialogue])
    gone["id"] = "zz-dialogue-not-in-the-bank"
    kind_mismatch = json.loads(lines[dialogue + 1])
    kind_mismatch["id"] = gone["turns"][0]["dialogue_id"]  # a question record under the dialogue's id
    del lines[dialogue]  # so the dialogue is asked again
    extra = [json.dumps(r).encode() for r in (foreign, gone, kind_mismatch)]
    (directory / "completions.jsonl").write_bytes(b"\n".join(lines + extra) + b"\n")

    result = pytester.runpytest(*args, "--eval-resume")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"WARNING {directory / 'completions.jsonl'}: 3 record(s) of items outside this run's "
            "selection ignored (first: 'd0'); not counted, and dropped when the file is rewritten"
        ]
    )
    assert asked(result) == 1
    assert (directory / "summary.json").read_text() == full_summary, "the foreign records are not counted"
    ids = {json.loads(line)["id"] for line in (directory / "completions.jsonl").read_text().splitlines()}
    assert not {"zz-not-in-the-bank", "zz-dialogue-not-in-the-bank"} & ids


@pytest.mark.parametrize(
    ("planted", "why"),
    [
        (lambda text: text[: len(text) // 2].encode(), "is not valid JSON (*)"),
        (lambda text: text.replace('"mode"', '"m\xe9de"').encode("latin-1"), "is unreadable (UnicodeDecodeError)"),
        (lambda text: b'["not", "an", "object"]', "is not a JSON object"),
        (lambda text: b"[" * 100_000, "is unreadable (RecursionError)"),
    ],
    ids=["truncated", "latin-1", "not-an-object", "nested"],
)
def test_resume_with_an_unreadable_config_is_one_usage_error(pytester, planted, why) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    config = directory / "checkpoints" / "config.json"
    config.write_bytes(planted(config.read_text()))
    before = (directory / "completions.jsonl").read_bytes()

    result = pytester.runpytest(*args, "--eval-resume")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(
        [
            f"*--eval-resume: {config} {why}, so the answers in {directory} cannot be matched to a "
            "configuration; run without --eval-resume (or with another --eval-out-dir)"
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert (directory / "completions.jsonl").read_bytes() == before, "nothing asked, nothing rewritten"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_of_a_completions_file_that_is_a_directory_is_one_usage_error(pytester, workers) -> None:
    """Issue 38 (Low 15): an INTERNALERROR."""
    args, directory, full_summary, _ = full_run(pytester)
    completions = directory / "completions.jsonl"
    completions.unlink()
    completions.mkdir()
    result = pytester.runpytest_subprocess(*args, "--eval-resume", "-n", workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    (error,) = [line for line in result.errlines if line.startswith("ERROR")]
    assert f"{completions}: cannot be read" in error and "--eval-resume" in error, error
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert (directory / "summary.json").read_text() == full_summary and completions.is_dir()
