"""chaosbench/prompt_runs.py: what a prompt's own process is given of the command."""

from __future__ import annotations

from pathlib import Path

from pytest_reasoning_evals.chaosbench.prompt_runs import passed_on, prompt_folders


def test_each_prompt_process_gets_the_command_without_the_options_it_gets_its_own_value_of() -> None:
    args = [
        "evals",
        "--eval-prompts",
        "a,b",
        "--eval-out-dir=out",
        "-n",
        "2",
        "--eval-cassette-dir",
        "tapes",
        "--eval-baseline-prompt=a",
        "--eval-fail-on-regression",
        "--eval-max-items",
        "10",
    ]
    # every prompt replays from the command's own cassettes (issue 39: no cassette folder per prompt)
    assert passed_on(args) == ["evals", "-n", "2", "--eval-cassette-dir", "tapes", "--eval-max-items", "10"]


def test_prompt_folders_are_comma_separated_and_relative_to_where_pytest_started(tmp_path: Path) -> None:
    assert prompt_folders(" a, /abs/b ,", tmp_path) == [tmp_path / "a", Path("/abs/b")]
    assert prompt_folders(None, tmp_path) == []
