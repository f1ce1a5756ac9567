"""Runs never replace each other (issue 28 item 4): a run directory is keyed by model, mode and
dataset (<model>_<mode>_<cases>-<hash8> for case files other than the shipped bank), a subset keeps
its own, and a directory holding the answers of another model, mode, prompt or data is refused,
not overwritten; shards and merge follow the names."""

from __future__ import annotations

import hashlib
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


def test_another_prompt_into_a_run_directory_is_refused_and_the_same_one_overwrites(pytester, server) -> None:
    add_eval_module(pytester)
    cases = bank(pytester.path / "bank.jsonl", "q")
    args = fake_run_args(pytester, server.openai_base, cases)
    assert pytester.runpytest(*args).ret == 0
    directory = pytester.path / "results" / f"fake_zeroshot_{tag(cases)}"
    before = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file() and p.name != ".lock"}
    prompts = pytester.path / "prompts"
    prompts.mkdir()
    (prompts / "zeroshot.txt").write_text("Answer TRUE or FALSE.\n\n{question}\n")
    result = pytester.runpytest(*args, "--eval-prompts", str(prompts))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    theirs = json.loads((directory / "checkpoints" / "config.json").read_text())["prompt_sha256"][:12]
    ours = hashlib.sha256((prompts / "zeroshot.txt").read_bytes()).hexdigest()[:12]
    result.stderr.fnmatch_lines(
        [
            f"*{directory} holds the run of another configuration (prompt_sha256: {theirs} there, {ours} now)*"
            "Move or delete that folder, or give another --eval-out-dir*"
        ]
    )
    after = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file() and p.name != ".lock"}
    assert after == before, "the refused run changed nothing"
    requests = len(server.requests)
    # the same configuration again: replayed over the last run, as before
    assert pytester.runpytest(*args).ret == 0
    assert len(server.requests) == requests
    # another folder takes the other prompt
    other = pytester.runpytest(
        *args, "--eval-prompts", str(prompts), "--eval-out-dir", "tries", "--eval-record-mode", "refresh"
    )
    assert other.ret == 0, other.stdout.str()


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
