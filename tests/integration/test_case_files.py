"""Case files a run cannot read: one collection error naming the file (and line), never a traceback."""

from __future__ import annotations

import json

import pytest
from helpers import PROJECT_ROOT, add_eval_module, fake_models, question

# --- 8. quiet failures: case files ---


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "{bank}: no questions (the case file is empty)"),
        (b"\n  \n\n", "{bank}: no questions (the case file is empty)"),
        (
            json.dumps(question("q-1")).encode() + b'\n{"id": "q-2", "question": "Caf\xe9 chaos?"}\n',
            "{bank}:2: not UTF-8 text (byte 0xe9 at column 31); save the file as UTF-8",
        ),
        (b"[" * 100_000 + b"\n", "{bank}:1: invalid JSON: nested too deeply to read"),
    ],
    ids=["empty", "blank-lines", "latin-1", "nested"],
)
def test_a_case_file_that_cannot_be_read_is_one_collection_error_naming_it(
    pytester, content: bytes, message: str
) -> None:
    add_eval_module(pytester)
    cases = pytester.path / "bank.jsonl"
    cases.write_bytes(content)
    result = pytester.runpytest("--model", "oracle", "--eval-cases", str(cases))
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert message.format(bank=cases) in output
    assert "Traceback" not in output and "UnicodeDecodeError" not in output and "RecursionError" not in output
    assert not (pytester.path / "results").exists()


def test_a_case_id_too_long_for_its_cassette_names_is_one_collection_error(pytester, fake_key) -> None:
    pytester.makepyfile(
        test_long_dialectic_ids=(PROJECT_ROOT / "evals" / "test_dialectic.py").read_text(encoding="utf-8")
    )
    models = pytester.path / "models.yaml"
    models.write_text(fake_models("http://127.0.0.1:9/v1"))
    prompts = pytester.path / "prompts"
    prompts.mkdir()
    (prompts / ("v" * 120 + ".txt")).write_text("Think first.")
    cases = pytester.path / "cases.yaml"
    cases.write_text(f"cases:\n  - {{id: {'c' * 120}, category: c, query: q, expected_mode: bypass}}\n")
    result = pytester.runpytest(
        "--eval-models-file",
        str(models),
        "--model",
        "fake",
        "--eval-dialectic-cases",
        str(cases),
        "--eval-variant-prompts",
        str(prompts),
        "-p",
        "no:randomly",
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"*{cases}:2: case id 'ccc*' with variant 'vvv*' makes cassette file names of * bytes "
            "(at most 255); shorten the id or the variant's name*"
        ]
    )
