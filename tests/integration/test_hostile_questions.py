"""A team's own TRUE/FALSE questions need not pretend to be dynamical systems (issue 25, item 11).

A question needs only `id`, `question` and `ground_truth`; `family` is any name (default: the
file's name without .jsonl), `split` any name (default `core`), `system_id` and `template` are
optional. The team's own prompt folder (eval_prompts) is what the model is sent, and its families
flow through the summary, the CSV, the terminal block, -k, --eval-family and the dialogue metrics.
The bank's own rules stay in `python -m bankgen validate-cases` for a built bank.
"""

from __future__ import annotations

import contextlib
import csv
import json
import shutil
from pathlib import Path

import pytest
from fakeprovider import FakeProvider
from helpers import EVAL_MODULE, model_entry, models_yaml, question, read_summary, run_dir, write_jsonl

from bankgen.validate import validate
from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.merge import merge
from pytest_reasoning_evals.chaosbench.names import FAMILIES, SPLITS
from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.report.runs import read_run

PROMPT = "Billing desk check. Reply with TRUE or FALSE only.\n\nStatement: {question}\n\nVerdict:"
COT = "Billing desk check. Think it through, then end with TRUE or FALSE.\n\nStatement: {question}\n\nReasoning:"
OWN = [
    {"id": "b-1", "question": "Is an invoice due 30 days after issue?", "ground_truth": "TRUE", "family": "billing"},
    {
        "id": "b-2",
        "question": "Is VAT charged on exports outside the EU?",
        "ground_truth": "FALSE",
        "family": "billing",
    },
    {"id": "b-3", "question": "Is a credit note a kind of invoice?", "ground_truth": "TRUE", "family": "billing"},
    {"id": "r-1", "question": "Is a refund possible within 14 days?", "ground_truth": "TRUE", "family": "refunds"},
    {"id": "r-2", "question": "Are refunds paid in cash?", "ground_truth": "FALSE", "family": "refunds"},
    # no family: the file's name is its family
    {"id": "o-1", "question": "Do we send reminders by post?", "ground_truth": "FALSE"},
    # a dialogue of the team's own, with no predicates: no FOL or contradiction check is possible
    {
        "id": "d-1",
        "question": "Can a refund be split over two cards?",
        "ground_truth": "TRUE",
        "family": "refunds",
        "dialogue_id": "refund-talk",
        "turn": 1,
    },
    {
        "id": "d-2",
        "question": "Given your answer, does each card get its share back?",
        "ground_truth": "TRUE",
        "family": "refunds",
        "dialogue_id": "refund-talk",
        "turn": 2,
    },
]


def own_project(pytester: pytest.Pytester, url: str, records: list[dict] = OWN) -> Path:
    """A team's project: the eval module, its own questions file and prompt folder, a models file."""
    pytester.makepyfile(test_own=EVAL_MODULE)
    cases = write_jsonl(pytester.path / "faq.jsonl", records)
    prompts = pytester.path / "prompts" / "chaosbench"
    prompts.mkdir(parents=True)
    (prompts / "zeroshot.txt").write_text(PROMPT, encoding="utf-8")
    (prompts / "cot.txt").write_text(COT, encoding="utf-8")
    desk = model_entry(url, "desk", provider="openai_compatible", model_id="desk-model", key_var=None)
    (pytester.path / "models.yaml").write_text(models_yaml(desk), encoding="utf-8")
    pytester.makeini(
        "[pytest]\neval_model = desk\neval_models_file = models.yaml\neval_cases = faq.jsonl\neval_prompts = prompts/chaosbench\n"
    )
    return cases


def test_own_questions_with_free_families_run_with_the_users_prompt_then_replay(pytester: pytest.Pytester) -> None:
    with FakeProvider() as server:
        server.reply_text = "TRUE"
        own_project(pytester, server.openai_base)
        recorded = pytester.runpytest("--eval-record-mode", "once", "-p", "no:cacheprovider")
        sent = server.requests
    assert recorded.ret == 0, recorded.stdout.str()
    # the user's prompt, around the user's question, and nothing about dynamical systems
    firsts = [r["body"]["messages"][0]["content"] for r in sent]
    assert len(sent) == len(OWN)  # one call per question and per dialogue turn
    assert PROMPT.replace("{question}", OWN[0]["question"]) in firsts
    assert all(text.startswith("Billing desk check.") and "dynamical" not in text for text in firsts)

    summary = read_summary(pytester, "desk")
    # only the team's families and split: no ChaosBench family listed as null
    assert summary["task_accuracy"] == {"billing": pytest.approx(2 / 3), "faq": 0.0, "refunds": 0.5}
    assert summary["split_accuracy"] == {"core": pytest.approx(3 / 6)}
    assert summary["task_details"]["billing"]["total"] == 3
    assert summary["dialogue_accuracy"] == 1.0
    assert summary["fol_violation_rate"] is None and summary["contradiction_rate"] is None  # nothing to check
    assert summary["bias_error_rate"] is None
    with open(run_dir(pytester, "desk") / "accuracy_by_task.csv", newline="") as f:
        assert [row["task"] for row in csv.DictReader(f)] == ["billing", "faq", "refunds"]
    manifest = json.loads((run_dir(pytester, "desk") / "run_manifest.json").read_text())
    assert manifest["prompt"]["text"] == PROMPT
    recorded.stdout.fnmatch_lines(["*billing*3*66.7%*", "*refunds*2*50.0%*"])

    # replay with the server gone: the same summary, no live call
    shutil.rmtree(pytester.path / "results")
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    assert replayed.ret == 0, replayed.stdout.str()
    assert read_summary(pytester, "desk") == summary
    meta = json.loads((run_dir(pytester, "desk") / "run_meta.json").read_text())
    assert meta["calls"]["live"] == 0 and meta["calls"]["cassette_hits"] == len(OWN)
    # the report's view lists the team's families, in the summary's order
    with contextlib.ExitStack() as cleanup:
        view = read_run(run_dir(pytester, "desk"), None, cleanup)
    assert [name for name, _ in view["families"]] == ["billing", "faq", "refunds"]
    assert set(view["outcomes"]) == {"billing", "faq", "refunds"}

    # two shards, replayed and merged: the unsharded summary
    shards = []
    for index in range(2):
        result = pytester.runpytest(
            "--eval-num-shards", "2", "--eval-shard-index", str(index), "-p", "no:cacheprovider"
        )
        assert result.ret == 0, result.stdout.str()
        # faq.jsonl is not the shipped bank: its name and hash are in the folder's
        shards.append(next((pytester.path / "results").glob(f"desk_zeroshot_faq-*_shard{index}of2")))
    _, merged_summary = merge(shards, pytester.path / "merged")
    assert merged_summary == summary


def test_own_families_select_with_k_m_and_eval_family(pytester: pytest.Pytester) -> None:
    own_project(pytester, "http://127.0.0.1:9/v1")

    def collected(*args: str) -> list[str]:
        result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
        assert result.ret == 0, result.stdout.str()
        return [line.split("[", 1)[1].rstrip("]") for line in result.stdout.lines if "::test_" in line]

    assert collected("-k", "billing") == ["b-1", "b-2", "b-3"]
    assert collected("-m", "chaosbench(family='refunds')") == ["r-1", "r-2", "refund-talk"]
    assert collected("--eval-family", "refunds", "--eval-family", "faq") == ["r-1", "r-2", "o-1", "refund-talk"]
    assert collected("--eval-split", "core") == [r.get("dialogue_id") or r["id"] for r in OWN][:-1]


def test_a_family_or_split_no_question_has_is_one_usage_error_naming_the_ones_there(pytester: pytest.Pytester) -> None:
    own_project(pytester, "http://127.0.0.1:9/v1")
    result = pytester.runpytest("--eval-family", "biling", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    out = result.stdout.str() + result.stderr.str()
    assert "--eval-family biling: no question of this family" in out and "billing, faq, refunds" in out, out
    result = pytester.runpytest("--eval-split", "hard", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--eval-split hard: no question of this split" in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "results").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": None}, "missing field(s) id"),
        ({"question": None}, "missing field(s) question"),
        ({"ground_truth": None}, "missing field(s) ground_truth"),
        ({"ground_truth": "maybe"}, "ground_truth must be TRUE or FALSE (or null for no gold), got 'maybe'"),
        ({"family": ""}, "field 'family' must be a non-empty string"),
        ({"split": 3}, "field 'split' must be a non-empty string"),
        ({"system_id": ["a"]}, "field 'system_id' must be a non-empty string"),
    ],
)
def test_a_malformed_own_line_names_file_and_line(pytester: pytest.Pytester, change: dict, message: str) -> None:
    bad = {k: v for k, v in {**OWN[1], **change}.items() if v is not None}
    cases = own_project(pytester, "http://127.0.0.1:9/v1", [OWN[0], bad, OWN[2]])
    with pytest.raises(CaseFileError, match=rf"^{cases}:2: ") as caught:
        load_questions(cases)
    assert message in str(caught.value)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([f"*{cases}:2: *"])
    assert message in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED and not (pytester.path / "results").exists()


def test_defaults_of_an_own_question(tmp_path: Path) -> None:
    cases = write_jsonl(
        tmp_path / "support.jsonl", [{"id": "s-1", "question": "Is it open on Sundays?", "ground_truth": False}]
    )
    (q,) = load_questions(cases)
    assert (q.family, q.split, q.system_id, q.template, q.predicates) == ("support", "core", "", "", ())
    assert q.ground_truth == "FALSE"


def test_validate_cases_keeps_the_bank_rules_for_a_built_bank_only(tmp_path: Path) -> None:
    own = write_jsonl(tmp_path / "faq.jsonl", OWN)
    assert validate(own) == []  # a team's file: the generic checks only
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "manifest.json").write_text("{}")
    write_jsonl(
        bank / "atomic.jsonl",
        [
            {
                "id": "x-1",
                "question": "Is an invoice due in 30 days?",
                "ground_truth": "TRUE",
                "family": "billing",
                "split": "pending",
                "system_id": "lorenz63",
                "template": "t.v1",
            },
            {
                "id": "x-2",
                "question": "Is the Lorenz system chaotic?",
                "ground_truth": "FALSE",
                "family": "atomic",
                "split": "core",
            },
        ],
    )
    problems = [str(p) for p in validate(bank)]
    where = f"{bank / 'atomic.jsonl'}"
    assert f"{where}:1: unknown family 'billing' in a built bank; families: atomic, multi_hop" in "\n".join(problems)
    assert any(p.startswith(f"{where}:1: unknown split 'pending' in a built bank") for p in problems), problems
    assert f"{where}:2: missing field(s) system_id, template (a built bank's records have them)" in problems, problems


def test_a_mix_of_chaosbench_and_own_families_lists_the_ten_then_the_own_ones(pytester: pytest.Pytester) -> None:
    cases = own_project(pytester, "http://127.0.0.1:9/v1")
    mixed = [{**OWN[0], "split": "pending"}, question("cb-1")]
    write_jsonl(cases, mixed)
    result = pytester.runpytest("--model", "always-true", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    summary = read_summary(pytester, "always-true")
    assert list(summary["task_accuracy"]) == [*FAMILIES, "billing"]
    assert list(summary["split_accuracy"]) == [*SPLITS, "pending"]
    assert summary["task_accuracy"]["billing"] == summary["split_accuracy"]["pending"] == 1.0


def test_an_own_type_field_is_the_teams_own_key_not_an_upstream_record(tmp_path: Path) -> None:
    own = {"id": "s-1", "question": "Is a refund possible?", "ground_truth": "TRUE", "type": "policy"}
    upstream = {"id": "u-1", "question": "Is the Lorenz system chaotic?", "ground_truth": "TRUE", "type": "atomic"}
    mine, theirs = load_questions(write_jsonl(tmp_path / "support.jsonl", [own, upstream]))
    assert (mine.family, mine.extra) == ("support", {"type": "policy"})
    assert (theirs.family, theirs.system_id, theirs.template) == ("atomic", "generic", "upstream")
