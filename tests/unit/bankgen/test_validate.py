"""bankgen/validate.py: validate-cases passes the committed bank and names file and line of a bad record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import PROJECT_ROOT as ROOT

from bankgen.bank import (
    CASES_DIR,
)
from bankgen.systems import load_all
from bankgen.validate import validate

CATALOG = {s.id: s for s in load_all()}


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    # bankgen runs from a checkout (it is not installed): the repository root on the path
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bankgen", *args], capture_output=True, text=True, cwd=cwd, env=env)


def _planted(tmp_path, line_number: int, replace) -> tuple:
    bank = tmp_path / "bank"
    # manifest.json comes along: the copy is a built bank, checked by the bank-building rules
    shutil.copytree(
        CASES_DIR, bank, ignore=shutil.ignore_patterns("prompts", "systems", "indicators.json", "sweeps.json")
    )
    target = bank / "atomic.jsonl"
    lines = target.read_text().splitlines()
    record = json.loads(lines[line_number - 1])
    lines[line_number - 1] = replace(record)
    target.write_text("\n".join(lines) + "\n")
    return bank, target


def _flip(record: dict) -> str:
    record["ground_truth"] = "FALSE" if record["ground_truth"] == "TRUE" else "TRUE"
    return json.dumps(record)


# --- validate-cases ---


def test_validate_passes_on_the_committed_bank() -> None:
    assert validate(CASES_DIR, {s.id: s.truth for s in CATALOG.values()}) == []
    result = run_cli("validate-cases")
    assert result.returncode == 0, result.stdout
    assert "is valid" in result.stdout


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        (lambda r: json.dumps({k: v for k, v in r.items() if k != "family"}), "missing field(s) family"),
        (lambda r: "{broken", "invalid JSON"),
        (lambda r: json.dumps({**r, "question": "Is the Lorenz-63 system PosLyap?"}), "raw predicate token 'PosLyap'"),
        (lambda r: json.dumps({**r, "question": "Is the the logistic map chaotic?"}), "doubled word 'the the'"),
        (_flip, "the systems catalog says"),
    ],
    ids=["schema", "json", "raw-token", "doubled-word", "contradicts-catalog"],
)
def test_validate_names_file_and_line_of_a_planted_bad_record(tmp_path, replace, message) -> None:
    bank, target = _planted(tmp_path, 7, replace)
    result = run_cli("validate-cases", str(bank))
    assert result.returncode == 1
    assert f"{target}:7: " in result.stdout and message in result.stdout, result.stdout


def test_validate_reports_duplicates_and_balance(tmp_path) -> None:
    bank, target = _planted(tmp_path, 9, lambda r: json.dumps(r))
    lines = target.read_text().splitlines()
    duplicate = json.loads(lines[2])
    duplicate["id"] = "atomic-99999"
    duplicate["question"] = duplicate["question"].upper()
    target.write_text("\n".join(lines) + "\n" + json.dumps(duplicate) + "\n")
    result = run_cli("validate-cases", str(bank))
    assert result.returncode == 1
    assert f"{target}:{len(lines) + 1}: near-duplicate question of {target}:3" in result.stdout
    skewed = tmp_path / "skewed"
    skewed.mkdir()
    (skewed / "manifest.json").write_text("{}")  # a built bank: balance is one of its rules
    records = [json.loads(line) for line in lines if json.loads(line)["ground_truth"] == "TRUE"][:10]
    (skewed / "atomic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = run_cli("validate-cases", str(skewed)).stdout
    assert "family atomic: 100.0% TRUE of 10 (allowed 45%-55%)" in out
    assert "(each label must be at least 35%)" in out
