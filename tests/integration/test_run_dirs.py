"""Runs never replace each other (issue 28 item 4, issue 39 item 1): a run directory is keyed by
model, mode, dataset (<model>_<mode>_<cases>-<hash8> for case files other than the shipped bank) and
prompt (_<folder>-<hash8> for a prompt or option other than the defaults), a subset keeps its own;
shards and merge follow the names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import (
    PROJECT_ROOT,
    add_eval_module,
    answer_by_text,
    fake_run_args,
    question,
    write_jsonl,
)

from pytest_reasoning_evals.__main__ import main
from pytest_reasoning_evals.chaosbench.questions import files_digest

DIALECTIC_MODULE = (PROJECT_ROOT / "evals" / "test_dialectic.py").read_text(encoding="utf-8")


@pytest.fixture
def server(server):
    server.responder = answer_by_text
    return server


def bank(path, prefix: str, n: int = 3):
    return write_jsonl(path, [question(f"{prefix}-{i}", "TRUE" if i % 2 else "FALSE") for i in range(n)])


def ids(directory) -> list[str]:
    return sorted(json.loads(line)["id"] for line in (directory / "completions.jsonl").read_text().splitlines())


def tag(path) -> str:
    return f"{path.stem}-{files_digest(path)['sha256'][:8]}"


def test_two_question_files_in_one_out_dir_leave_two_runs(pytester, server) -> None:
    add_eval_module(pytester)
    first, second = bank(pytester.path / "billing.jsonl", "bill"), bank(pytester.path / "refunds.jsonl", "ref", 4)
    assert pytester.runpytest(*fake_run_args(pytester, server.openai_base, first)).ret == 0
    one = pytester.path / "results" / f"fake_zeroshot_{tag(first)}"
    before = (one / "summary.json").read_text()
    result = pytester.runpytest(*fake_run_args(pytester, server.openai_base, second))
    assert result.ret == 0, result.stdout.str()
    two = pytester.path / "results" / f"fake_zeroshot_{tag(second)}"
    result.stdout.fnmatch_lines([f"results: {two}"])
    assert sorted(p.name for p in (pytester.path / "results").iterdir()) == sorted([one.name, two.name])
    assert ids(one) == ["bill-0", "bill-1", "bill-2"] and (one / "summary.json").read_text() == before
    assert ids(two) == ["ref-0", "ref-1", "ref-2", "ref-3"]
    manifest = json.loads((two / "run_manifest.json").read_text())
    assert two.name.endswith(manifest["dataset_config"]["version"][:8])


def test_files_of_one_name_in_two_folders_are_two_datasets(pytester, server) -> None:
    add_eval_module(pytester)
    (pytester.path / "a").mkdir()
    (pytester.path / "b").mkdir()
    first, second = bank(pytester.path / "a" / "bank.jsonl", "a"), bank(pytester.path / "b" / "bank.jsonl", "b")
    for cases in (first, second):
        assert pytester.runpytest(*fake_run_args(pytester, server.openai_base, cases)).ret == 0
    names = sorted(p.name for p in (pytester.path / "results").iterdir())
    assert names == sorted([f"fake_zeroshot_{tag(first)}", f"fake_zeroshot_{tag(second)}"]) and len(set(names)) == 2


def test_the_shipped_bank_keeps_its_folder_and_a_subset_its_own(pytester) -> None:
    add_eval_module(pytester)
    assert pytester.runpytest("--model", "oracle", "-k", "atomic-0000").ret == 0
    # the shipped bank named explicitly is the shipped bank
    shipped = PROJECT_ROOT / "cases" / "chaosbench"
    # one word: a path outside the pytester folder would move pytest's rootdir (README)
    assert pytester.runpytest("--model", "oracle", f"--eval-cases={shipped}", "--eval-max-items", "3").ret == 0
    assert sorted(p.name for p in (pytester.path / "results").iterdir()) == ["oracle_zeroshot-subset"]


def test_an_edited_prompt_or_option_runs_in_a_directory_of_its_own_and_the_same_one_overwrites(
    pytester, server, capsys
) -> None:
    """Issue 39 item 1: editing a prompt (or --eval-max-tokens) never refuses the run; each
    configuration keeps its directory, named by its prompt folder and a short hash, a rerun of
    one compares with its own previous run, and `reasoning-evals runs` lists them all."""
    add_eval_module(pytester)
    cases = bank(pytester.path / "bank.jsonl", "q")
    args = [*fake_run_args(pytester, server.openai_base, cases)[:-4], "-p", "no:cacheprovider"]
    assert pytester.runpytest(*args, "--eval-record-mode", "once").ret == 0
    first = pytester.path / "results" / f"fake_zeroshot_{tag(cases)}"
    before = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file() and p.name != ".lock"}
    prompts = pytester.path / "mine"
    prompts.mkdir()
    (prompts / "zeroshot.txt").write_text("Answer TRUE or FALSE.\n\n{question}\n")
    mine = [*args, "--eval-prompts", str(prompts), "--eval-record-mode", "refresh"]
    result = pytester.runpytest(*mine)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    (second,) = [p for p in (pytester.path / "results").iterdir() if p.name.startswith(f"{first.name}_mine-")]
    result.stdout.fnmatch_lines([f"results: {second}"])
    assert "another configuration" not in result.stdout.str() + result.stderr.str()
    after = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file() and p.name != ".lock"}
    assert after == before, "the first prompt's run is left as it was"
    # the prompt edited again, and another max_tokens: a directory each
    (prompts / "zeroshot.txt").write_text("Reply TRUE or FALSE only.\n\n{question}\n")
    assert pytester.runpytest(*mine).ret == 0
    assert pytester.runpytest(*mine, "--eval-max-tokens", "32").ret == 0
    names = sorted(p.name for p in (pytester.path / "results").iterdir())
    assert len(names) == 4 and len({n.rsplit("-", 1)[-1] for n in names[1:]}) == 3, names
    # the same configuration again: a replay over its own last run, compared with it
    third = max((pytester.path / "results").iterdir(), key=lambda p: (p / "run_meta.json").stat().st_mtime_ns)
    requests = len(server.requests)
    again = pytester.runpytest(*mine, "--eval-max-tokens", "32", "--eval-baseline", str(third))
    assert again.ret == 0, again.stdout.str()
    assert len(server.requests) == requests
    assert json.loads((third / "comparison.json").read_text())["n_paired"] == 3
    code, out = main(["runs", str(pytester.path / "results")]), capsys.readouterr().out
    assert code == 0 and all(name in out for name in names), out


def test_shards_of_a_named_dataset_merge_into_its_folder(pytester) -> None:
    add_eval_module(pytester)
    cases = bank(pytester.path / "faq.jsonl", "faq", 6)
    for index in range(2):
        shard = ("--eval-num-shards", "2", "--eval-shard-index", str(index))
        assert pytester.runpytest("--model", "oracle", "--eval-cases", str(cases), *shard).ret == 0
    shards = [pytester.path / "results" / f"oracle_zeroshot_{tag(cases)}_shard{i}of2" for i in range(2)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", *map(str, shards)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert ids(pytester.path / "results" / f"oracle_zeroshot_{tag(cases)}") == [f"faq-{i}" for i in range(6)]


DIALECTIC_CASES = "cases:\n  - id: {id}\n    category: test\n    expected_mode: bypass\n    query: What is {id}?\n"


def test_two_dialectic_case_files_leave_two_runs(pytester, server) -> None:
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    pytester.makeini("[pytest]\n")  # the rootdir, where results/ goes
    server.responder = lambda body: "Canberra."
    files = []
    for name in ("geo", "maths"):
        path = pytester.path / f"{name}.yaml"
        path.write_text(DIALECTIC_CASES.format(id=name))
        files.append(path)
        args = fake_run_args(pytester, server.openai_base, bank(pytester.path / "bank.jsonl", "q"))
        result = pytester.runpytest(
            *args, "--eval-dialectic-cases", str(path), "--eval-variant", "baseline", "-k", "structure"
        )
        assert result.ret == 0, result.stdout.str()
    names = sorted(p.name for p in (pytester.path / "results").iterdir())
    assert (
        len(names) == 2 and names[0].startswith("fake_dialectic_geo-") and names[1].startswith("fake_dialectic_maths-")
    )
    assert all(name.endswith("-subset") for name in names)
