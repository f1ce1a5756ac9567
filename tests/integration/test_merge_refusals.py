"""Merges that must not happen: a shard missing a key, an out dir it would overwrite, unreadable
completions, a shard or out dir a run still holds; each is one line naming the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import add_eval_module, oracle_shards, the_run
from helpers import small_bank as bank  # 12 questions and 2 dialogues of 3 turns

from pytest_reasoning_evals import results

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

# --- 8. quiet failures: merge ---


def merge_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture
def shards(pytester):
    """Two finished shards of the oracle over a small bank, and an unsharded run beside them."""
    add_eval_module(pytester)
    cases = str(bank(pytester.path / "bank.jsonl"))
    made = oracle_shards(pytester, cases)
    assert pytester.runpytest("--model", "oracle", "--eval-cases", cases).ret == 0
    return made


def assert_one_line_refusal(result: subprocess.CompletedProcess, *parts: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("merge: "), result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


@pytest.mark.parametrize(
    ("file", "path"),
    [
        ("run_manifest.json", ("execution", "config_hash")),
        ("run_manifest.json", ("execution",)),
        ("run_meta.json", ("timestamp",)),
        ("summary.json", ("not_asked",)),
    ],
)
def test_merge_of_a_shard_missing_a_key_is_one_line_naming_shard_and_key(shards, file, path) -> None:
    target = shards[1] / file
    data = json.loads(target.read_text())
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    target.write_text(json.dumps(data))
    result = merge_cli(*shards, "--out", shards[0].parent / "merged")
    assert_one_line_refusal(result, str(shards[1]), file, repr(".".join(path)))


def test_merge_refuses_an_out_dir_it_would_overwrite(shards) -> None:
    results = shards[0].parent
    unsharded = the_run(results, "oracle")
    kept = {f: f.read_bytes() for d in [*shards, unsharded] for f in d.iterdir() if f.is_file()}
    assert_one_line_refusal(merge_cli(*shards, "--out", shards[1]), f"{shards[1]} is one of the shard directories")
    assert_one_line_refusal(merge_cli(*shards, "--out", unsharded), f"{unsharded} holds a run directory")
    assert_one_line_refusal(merge_cli(*shards), f"{unsharded} holds a run directory", "--out")  # the default out dir
    (results / "notes").mkdir()
    (results / "notes" / "todo.txt").write_text("mine")
    assert_one_line_refusal(merge_cli(*shards, "--out", results / "notes"), "holds files that are not a merge's")
    assert {p: p.read_bytes() for p in kept} == kept, "nothing was overwritten"

    assert merge_cli(*shards, "--out", results / "merged").returncode == 0  # a new directory
    again = merge_cli(*shards, "--out", results / "merged")  # an earlier merge is merged again
    assert again.returncode == 0, again.stderr
    (results / "empty").mkdir()
    assert merge_cli(*shards, "--out", results / "empty").returncode == 0


def test_merge_refuses_a_shard_with_unreadable_completions(shards) -> None:
    completions = shards[0] / "completions.jsonl"
    lines = completions.read_bytes().splitlines()
    lines[1] = b'{"id": "cut short'
    completions.write_bytes(b"\n".join(lines) + b"\n")
    result = merge_cli(*shards, "--out", shards[0].parent / "merged")
    assert_one_line_refusal(result, f"{completions}: 1 unreadable line skipped (first at line 2)", "--eval-resume")
    assert not (shards[0].parent / "merged").exists()


def test_merge_refuses_while_a_run_holds_a_shard_or_the_out_dir(shards) -> None:
    out = shards[0].parent / "merged"
    for busy in (shards[1], out):
        lock = results.RunDirLock(busy, os.getpid(), "pytest evals --model oracle")
        assert lock.try_hold()
        try:
            result = merge_cli(*shards, "--out", out)
        finally:
            lock.release()
        assert_one_line_refusal(
            result, f"{busy} is in use by another run (pid {os.getpid()} on ", "pytest evals --model oracle"
        )
    assert not (out / "summary.json").exists()
    assert merge_cli(*shards, "--out", out).returncode == 0


def test_merge_refuses_a_shard_whose_completions_is_a_directory(shards) -> None:
    """Issue 38 (Low 15): a traceback."""
    completions = shards[0] / "completions.jsonl"
    completions.unlink()
    completions.mkdir()
    result = merge_cli(*shards, "--out", shards[0].parent / "merged")
    assert_one_line_refusal(result, f"{completions}: cannot be read")
    assert not (shards[0].parent / "merged").exists()
