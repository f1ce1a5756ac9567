"""dialectic/cases.py: the committed cases and variants, and bad case files named by file and line."""

from __future__ import annotations

import pytest
from helpers import DEFAULT_DIALECTIC_CASES, DEFAULT_VARIANT_PROMPTS

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.dialectic.cases import load_cases, load_variants

# --- cases and variants ---


def test_the_committed_cases_and_variants() -> None:
    cases = load_cases(DEFAULT_DIALECTIC_CASES)
    assert len(cases) >= 15
    modes = [c.expected_mode for c in cases]
    assert modes.count("dialectic") >= 12 and modes.count("bypass") >= 3
    assert {"decision", "strategy", "ethics", "architecture", "factual", "formatting"} <= {c.category for c in cases}
    variants = load_variants(DEFAULT_VARIANT_PROMPTS)
    assert [v.name for v in variants][:1] == ["baseline"] and variants[0].messages("q") == (
        {"role": "user", "content": "q"},
    )
    prompt = next(v for v in variants if v.name == "dialectic").system_prompt
    for part in (
        "## Hypotheses",
        "**H1:",
        "Post-Oscillation",
        "Stability: STABLE",
        "## Cruxes",
        "(empirical)",
        "**Confidence**",
    ):
        assert part in prompt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cases:\n  - id: a\n    category: c\n    query: q\n", r"bad\.yaml:2: case is missing expected_mode"),
        (
            "cases:\n  - id: a\n    category: c\n    query: q\n    expected_mode: maybe\n",
            r"bad\.yaml:2: expected_mode must be",
        ),
        (
            "cases:\n  - {id: a, category: c, query: q, expected_mode: bypass}\n  - {id: a, category: c, query: q, expected_mode: bypass}\n",
            r"bad\.yaml:3: duplicate case id 'a' \(first at .*bad\.yaml:2\)",
        ),
        ("cases: [\n", r"bad\.yaml:2: invalid YAML"),
    ],
)
def test_bad_case_files_name_file_and_line(tmp_path, text: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(CaseFileError, match=message):
        load_cases(tmp_path / "bad.yaml")


def test_unknown_variant_is_an_error() -> None:
    with pytest.raises(CaseFileError, match="unknown variant 'nope'"):
        load_variants(DEFAULT_VARIANT_PROMPTS, ["nope"])
