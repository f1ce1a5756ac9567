"""casefiles.py: ids checked once when the bank is loaded, case files that cannot be read named by
file and line, variant names that are not safe file names refused."""

from __future__ import annotations

import pytest
from helpers import question, write_jsonl

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.dialectic.cases import load_cases, load_variants


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (question("a..b"), "id 'a..b' is not filesystem-safe"),
        (question("q-1\n"), "id 'q-1\\n' is not filesystem-safe"),
        (question("x" * 129), "is 129 characters long; at most 128"),
        (question("d-t1", dialogue_id="../up", turn=1), "dialogue_id '../up' is not filesystem-safe"),
    ],
    ids=["dots", "newline", "long", "dialogue-id"],
)
def test_ids_are_checked_once_when_the_bank_is_loaded(tmp_path, record, message) -> None:
    cases = write_jsonl(tmp_path / "bank.jsonl", [question("q-0"), record])
    with pytest.raises(CaseFileError) as error:
        load_questions(cases)
    assert str(error.value).startswith(f"{cases}:2: ") and message in str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"bad\.yaml: no dialectic cases \(the case file is empty\)"),
        (b"cases: []\n", r"bad\.yaml:1: no dialectic cases \(the `cases:` list is empty\)"),
        (b"cases:\n  - id: a\n    category: caf\xe9\n", r"bad\.yaml:3: not UTF-8 text \(byte 0xe9 at column 18\)"),
        (b"cases: " + b"[" * 100_000 + b"\n", r"bad\.yaml:1: invalid YAML \(nested too deeply to read\)"),
        (
            b"cases:\n  - {id: a..b, category: c, query: q, expected_mode: bypass}\n",
            r"bad\.yaml:2: id 'a\.\.b' is not filesystem-safe",
        ),
    ],
    ids=["empty", "no-cases", "latin-1", "nested", "id"],
)
def test_a_dialectic_case_file_that_cannot_be_read_names_file_and_line(tmp_path, content: bytes, message: str) -> None:
    (tmp_path / "bad.yaml").write_bytes(content)
    with pytest.raises(CaseFileError, match=message):
        load_cases(tmp_path / "bad.yaml")


def test_a_variant_name_that_is_not_a_safe_file_name_is_refused(tmp_path) -> None:
    (tmp_path / "my variant.txt").write_text("Think first.")
    with pytest.raises(CaseFileError, match=r"my variant\.txt: variant name .*'my variant' is not filesystem-safe"):
        load_variants(tmp_path)
