"""Fair samples (issue 28 item 3): --eval-max-items N is a sample seeded by --eval-seed, stratified
by family and label, the same under xdist and across shards, recorded in the run manifest; resume
and merge keep working; a dialogue is one item."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from helpers import run_dir, small_bank

from pytest_reasoning_evals.chaosbench.questions import group_dialogues, load_questions, sample, select
from pytest_reasoning_evals.shipped import shipped


def asked(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]


def sampled_ids(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "20", *args)
    assert result.ret == 0, result.stdout.str()
    return sorted(r["id"] for r in asked(run_dir(pytester, "oracle", subset=True)))


def test_twenty_items_cover_the_families_the_same_twice_and_under_xdist(evals: pytest.Pytester) -> None:
    first = sampled_ids(evals)
    families = {r["family"] for r in asked(run_dir(evals, "oracle", subset=True))}
    labels = {r["gold"] for r in asked(run_dir(evals, "oracle", subset=True)) if r.get("gold")}
    assert len(first) == 20
    assert len(families) >= 8, families
    assert labels == {"TRUE", "FALSE"}
    assert sampled_ids(evals) == first
    assert sampled_ids(evals, "-n", "2") == first


def test_another_seed_draws_another_sample(evals: pytest.Pytester) -> None:
    assert sampled_ids(evals) != sampled_ids(evals, "--eval-seed", "7")


def test_the_manifest_records_the_sample(evals: pytest.Pytester) -> None:
    ids = sampled_ids(evals, "--eval-seed", "3")
    selection = json.loads((run_dir(evals, "oracle", subset=True) / "run_manifest.json").read_text())["selection"]
    recorded = selection["sample"]
    assert (recorded["n"], recorded["seed"], recorded["method"]) == (20, 3, "stratified-sha256-v1")
    assert recorded["strata"] == ["family", "label"]
    assert recorded["ids_sha256"] == hashlib.sha256("".join(f"{i}\n" for i in ids).encode()).hexdigest()
    assert recorded["questions"] + recorded["dialogues"] == 20
    assert selection["max_items"] == 20
    # without --eval-max-items there is no sample
    assert evals.runpytest("--model", "oracle", "-k", "atomic-0000").ret == 0
    manifest = json.loads((run_dir(evals, "oracle", subset=True) / "run_manifest.json").read_text())
    assert manifest["selection"]["sample"] is None


@pytest.mark.slow
def test_shards_of_a_sample_are_disjoint_and_make_it_up_and_merge(evals: pytest.Pytester) -> None:
    whole = sampled_ids(evals)
    parts = []
    shards = evals.path / "shards"
    for index in range(2):
        shard = ("--eval-num-shards", "2", "--eval-shard-index", str(index), "--eval-out-dir", str(shards))
        assert evals.runpytest("--model", "oracle", "--eval-max-items", "20", *shard).ret == 0
        parts.append({r["id"] for r in asked(shards / f"oracle_zeroshot_shard{index}of2-subset")})
    assert not parts[0] & parts[1]
    assert sorted(parts[0] | parts[1]) == whole
    merged = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge"]
        + [str(shards / f"oracle_zeroshot_shard{i}of2-subset") for i in range(2)],
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 0, merged.stderr
    # the shards' own run name: the subset's folder
    assert sorted(r["id"] for r in asked(shards / "oracle_zeroshot-subset")) == whole


def test_a_resumed_sample_asks_only_what_is_missing(evals: pytest.Pytester) -> None:
    whole = sampled_ids(evals)
    directory = run_dir(evals, "oracle", subset=True)
    lines = (directory / "completions.jsonl").read_text().splitlines()
    (directory / "completions.jsonl").write_text("".join(line + "\n" for line in lines[:12]))
    result = evals.runpytest("--model", "oracle", "--eval-max-items", "20", "--eval-resume")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*8 passed*"])
    assert sorted(r["id"] for r in asked(directory)) == whole


def test_a_dialogue_is_one_item_of_the_sample(evals: pytest.Pytester) -> None:
    bank = small_bank(evals.path / "bank.jsonl", dialogues=4, questions=12)
    result = evals.runpytest("--model", "oracle", "--eval-cases", str(bank), "--eval-max-items", "4")
    assert result.ret == 0, result.stdout.str()
    records = asked(next((evals.path / "results").glob("oracle_zeroshot_bank-*-subset")))
    kinds = sorted(r.get("kind", "question") for r in records)
    # two families (atomic questions, multi_hop dialogues): both covered, a dialogue counted once
    assert len(records) == 4 and "dialogue" in kinds and "question" in kinds
    questions = load_questions(bank)
    chosen = sample(select(questions), group_dialogues(questions), 4, 42)
    assert sorted(r["id"] for r in records) == sorted(i.id for part in chosen for i in part)


def test_the_shipped_bank_sample_of_twenty_covers_every_family() -> None:
    """The acceptance's number on the bank itself, at several seeds."""
    loaded = load_questions(shipped("chaosbench"))
    for seed in (0, 1, 42, 1234):
        questions, dialogues = sample(select(loaded), group_dialogues(loaded), 20, seed)
        assert len(questions) + len(dialogues) == 20
        assert len({i.family for i in (*questions, *dialogues)}) >= 8
