"""`reasoning-evals runs DIR...`: oracle, always-true and random ChaosBench runs and a dialectic run
in one folder give one table per protocol, a row per run, pairwise exact McNemar tests (the code of
--eval-baseline) Holm-corrected, and runs.json / runs.csv / runs.md / runs.html in the first folder.
What runs.html looks like in a browser is tests/integration/test_runs_browser.py."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import pytest
from helpers import DIALECTIC_MODULE, EVAL_MODULE, oracle_shards, question, use_repo_cassettes, write_jsonl

from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file
from integration.test_dialectic_run import run as run_dialectic
from pytest_reasoning_evals.__main__ import main
from pytest_reasoning_evals.chaosbench.runs import COLUMNS

FIXED = ("oracle", "always-true", "random")
FAMILIES = ("atomic", "multi_hop", "adversarial")


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch) -> None:
    """In GitHub Actions these commands would append their tables to the job's real step summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def bank(path: Path, n: int = 24) -> Path:
    """n questions over three families, TRUE and FALSE in turn."""
    return write_jsonl(
        path, [question(f"q-{i:02d}", "TRUE" if i % 2 else "FALSE", family=FAMILIES[i % 3]) for i in range(n)]
    )


def fixed_runs(pytester: pytest.Pytester, cases: Path, models=FIXED) -> Path:
    """A run of each fixed model over `cases` in pytester's results folder; -> the folder."""
    for model in models:
        result = pytester.runpytest("--model", model, "--eval-cases", str(cases))
        assert result.ret in (0, 1), result.stdout.str()
    return pytester.path / "results"


def records(folder: Path, model: str) -> dict[str, bool]:
    directory = next(folder.glob(f"{model}_zeroshot_*"))
    lines = (directory / "completions.jsonl").read_text().splitlines()
    return {r["id"]: r["correct"] is True for r in map(json.loads, lines)}


def exact_mcnemar(a: dict[str, bool], b: dict[str, bool]) -> float:
    """The two-sided exact McNemar p-value, computed here from scratch."""
    down = sum(a[i] and not b[i] for i in a)
    up = sum(b[i] and not a[i] for i in a)
    n = down + up
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(down, up) + 1)) / 2**n) if n else 1.0


def runs(capsys, *args) -> tuple[int, str]:
    code = main(["runs", *map(str, args)])
    return code, capsys.readouterr().out


@pytest.fixture
def folder(pytester: pytest.Pytester) -> Path:
    """oracle, always-true and random over a small bank, and a replayed dialectic run of two cases."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE, test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    fixed_runs(pytester, bank(pytester.path / "bank.jsonl"))
    result = pytester.runpytest("test_dialectic.py", "--eval-max-items", "2")
    assert result.ret in (0, 1), result.stdout.str()
    return pytester.path / "results"


def test_runs_of_three_models_and_a_dialectic_run(folder, capsys) -> None:
    code, out = runs(capsys, folder)
    assert code == 0, out
    for model, accuracy in (("oracle", "100.0%"), ("always-true", "50.0%")):
        assert any(f"| {model} |" in line and f"| {accuracy} |" in line for line in out.splitlines()), out
    assert "| random |" in out
    assert "## Dialectic runs" in out and "| dialectic | smollm2-135m_dialectic-subset |" in out, out
    assert "All runs: model smollm2-135m, cases file dialectic, judges smollm2-135m" in out
    for name in ("runs.json", "runs.csv", "runs.md", "runs.html"):
        assert (folder / name).is_file(), name
    data = json.loads((folder / "runs.json").read_text())
    chaos, dialectic = data["tables"]
    assert [t["protocol"] for t in data["tables"]] == ["chaosbench", "dialectic"]
    assert sorted(r["model"] for r in chaos["rows"]) == sorted(FIXED)
    assert {r["variant"] for r in dialectic["rows"]} == {"baseline", "dialectic"}
    assert len(chaos["comparisons"]) == 3
    pair = next(c for c in chaos["comparisons"] if {c["a"], c["b"]} == {r["run"] for r in chaos["rows"][:2]})
    by_run = {r["run"]: r["model"] for r in chaos["rows"]}
    assert {by_run[pair["a"]], by_run[pair["b"]]} == {"always-true", "oracle"}
    a, b = records(folder, by_run[pair["a"]]), records(folder, by_run[pair["b"]])
    assert pair["p_value"] == pytest.approx(exact_mcnemar(a, b), rel=1e-12)
    assert pair["n_paired"] == 24 and pair["fixed"] + pair["broken"] == 12
    assert pair["delta"] == pytest.approx(sum(b.values()) / 24 - sum(a.values()) / 24)
    # Holm: the smallest of three p-values times 3, and never below its own
    ps = sorted(c["p_value"] for c in chaos["comparisons"])
    smallest = min(chaos["comparisons"], key=lambda c: c["p_value"])
    assert smallest["p_holm"] == pytest.approx(min(1.0, 3 * ps[0]))
    assert all(c["p_holm"] >= c["p_value"] for c in chaos["comparisons"])
    rows = list(csv.DictReader((folder / "runs.csv").open()))
    assert len(rows) == 5 and {r["table"] for r in rows} == {"chaosbench", "dialectic"}
    assert "| run a | run b |" in (folder / "runs.md").read_text()


def test_small_sets_say_what_change_their_comparisons_could_detect(pytester, capsys) -> None:
    """Issue 39: 24 paired questions cannot show a modest drop as significant: the table says what
    change they could detect and how to gate a drop directly."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle", "always-true"))
    code, out = runs(capsys, folder)
    assert code == 0, out
    (comparison,) = json.loads((folder / "runs.json").read_text())["tables"][0]["comparisons"]
    # oracle vs always-true: the 12 FALSE questions are discordant
    assert (comparison["n_paired"], comparison["n_failed"]) == (24, 0)
    assert comparison["detectable_delta"] == pytest.approx(2.80159 * math.sqrt(12 / 24 / 24), rel=1e-4)
    assert (
        "- small sets: 1 of the comparisons pair fewer than 100 items and can only detect a paired change of about "
        f"{comparison['detectable_delta'] * 100:.1f} points or more"
    ) in out
    assert "--eval-max-accuracy-drop X" in out
    code, out = runs(capsys, folder, "--alpha", "0.01")  # the level the table tests at, in the note too
    (strict,) = json.loads((folder / "runs.json").read_text())["tables"][0]["comparisons"]
    assert strict["detectable_delta"] == pytest.approx((2.57583 + 0.84162) * math.sqrt(12 / 24 / 24), rel=1e-4)
    assert f"about {strict['detectable_delta'] * 100:.1f} points or more (alpha 0.01 uncorrected" in out


def test_shards_are_one_row_unless_their_merge_is_there(pytester, capsys) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    cases = bank(pytester.path / "bank.jsonl")
    shards = oracle_shards(pytester, str(cases))
    code, out = runs(capsys, pytester.path / "results")
    assert code == 0, out
    (table,) = json.loads((pytester.path / "results" / "runs.json").read_text())["tables"]
    (row,) = table["rows"]
    assert row["n"] == 24 and row["accuracy"] == 1.0 and "merged from 2 shards" in row["note"]
    assert main(["merge", *map(str, shards)]) == 0
    capsys.readouterr()
    code, out = runs(capsys, pytester.path / "results")
    (row,) = json.loads((pytester.path / "results" / "runs.json").read_text())["tables"][0]["rows"]
    assert row["path"] == str((pytester.path / "results" / row["run"]).resolve()) and "_shard" not in row["run"]
    assert row["n"] == 24 and row["accuracy"] == 1.0


def test_incomplete_runs_and_other_datasets_are_marked_and_not_compared(pytester, capsys) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle", "always-true"))
    fixed_runs(pytester, bank(pytester.path / "other.jsonl", n=12), models=("random",))
    summary_path = next(folder.glob("always-true_zeroshot_*")) / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary.update(complete=False, incomplete_reason="interrupted")
    summary_path.write_text(json.dumps(summary))
    code, out = runs(capsys, folder)
    assert code == 0, out
    (table,) = json.loads((folder / "runs.json").read_text())["tables"]
    notes = {r["model"]: r["note"] for r in table["rows"]}
    assert "INCOMPLETE: interrupted" in notes["always-true"]
    assert "OTHER DATASET" in notes["random"] and "OTHER DATASET" not in notes["oracle"]
    assert [{c["a"], c["b"]} for c in table["comparisons"]] == [
        {r["run"] for r in table["rows"] if r["model"] != "random"}
    ]
    assert "| NO |" in out


def test_step_summary_gets_the_markdown_and_out_puts_files_elsewhere(pytester, capsys, monkeypatch) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle", "always-true"))
    summary = pytester.path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = runs(capsys, folder, "--out", pytester.path / "site")
    assert code == 0, out
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "## ChaosBench-Logic runs" in text and "| oracle |" in text
    assert (pytester.path / "site" / "runs.md").read_text() in text
    assert not (folder / "runs.json").exists()


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_an_unusable_step_summary_is_one_warning_line_of_the_runs_command(
    pytester, capsys, monkeypatch, tmp_path, kind
) -> None:
    from integration.test_hostile_outputs import unusable_summary

    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle",))
    path = unusable_summary(kind, tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    # the same append as a run's: no hang on a FIFO, no traceback on a folder, the tables written
    code, out = runs(capsys, folder)
    assert code == 0, out
    warned = [line for line in out.splitlines() if "GITHUB_STEP_SUMMARY" in line]
    assert len(warned) == 1 and warned[0].startswith("WARNING") and str(path) in warned[0], out
    assert (folder / "runs.md").is_file()


def test_no_run_is_a_usage_error(pytester, capsys) -> None:
    code = main(["runs", str(pytester.path)])
    assert code == 2
    assert "no run directory under" in capsys.readouterr().err


def test_models_compared_by_a_dialectic_run_are_rows_side_by_side(pytester, server, capsys) -> None:  # noqa: F811
    server.responder = Scripted({"a": STRUCTURED})
    server.usage.prompt, server.usage.completion = 100, 50
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    args = ["--model", "fake", "--eval-variant", "dialectic", "--eval-compare-models", "fake,other"]
    result = run_dialectic(pytester, server, cases, *args, "--eval-judge-model", "fake-judge", "-k", "cross_provider")
    assert result.ret == 0, result.stdout.str()
    code, out = runs(capsys, pytester.path / "results")
    assert code == 0, out
    assert "## Dialectic models compared (--eval-compare-models)" in out
    tables = {t["id"]: t for t in json.loads((pytester.path / "results" / "runs.json").read_text())["tables"]}
    models = {r["model"]: r for r in tables["dialectic-models"]["rows"]}
    assert sorted(models) == ["fake", "other"]
    assert models["fake"]["cost_usd"] == pytest.approx((100 * 1000 + 50 * 2000) / 1e6)
    assert models["other"]["cost_usd"] == pytest.approx((100 * 4000 + 50 * 8000) / 1e6)
    assert models["fake"]["queries"] == 1 and models["fake"]["rank"] == 1


def test_a_dialectic_rows_cost_is_its_responses_and_their_judges(pytester, server, capsys) -> None:  # noqa: F811
    """The row's cost is what the variant paid, as its report page says: the judges' calls too,
    which its cost saved column covers as well."""
    server.responder = Scripted({"a": STRUCTURED})
    server.usage.prompt, server.usage.completion = 100, 50
    cases = cases_file(pytester.path / "cases.yaml", ("a", "dialectic"))
    judged = ["--model", "fake", "--eval-variant", "dialectic", "--eval-judge-model", "other"]
    result = run_dialectic(pytester, server, cases, *judged, "-k", "not resolution and not cross_provider")
    assert result.ret in (0, 1), result.stdout.str()
    variant = json.loads(next((pytester.path / "results").glob("fake_dialectic*/variant_summary.json")).read_text())
    paid = variant["variants"][0]
    assert paid["judge_cost_usd"] > 0 and paid["cost_usd"] > 0
    code, out = runs(capsys, pytester.path / "results")
    assert code == 0, out
    tables = {t["id"]: t for t in json.loads((pytester.path / "results" / "runs.json").read_text())["tables"]}
    (row,) = tables["dialectic"]["rows"]
    assert row["cost_usd"] == pytest.approx(paid["cost_usd"] + paid["judge_cost_usd"])


def copies(pytester: pytest.Pytester, n: int) -> Path:
    """n runs of one dataset: the oracle's and always-true's run directories copied in turn."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    made = fixed_runs(pytester, bank(pytester.path / "bank.jsonl", n=12), models=("oracle", "always-true"))
    sources = sorted(made.iterdir())
    folder = pytester.path / f"runs-{n}"
    for i in range(n):
        shutil.copytree(sources[i % 2], folder / f"run-{i:04d}")
    return folder


def test_runs_of_one_dataset_scale_linearly(pytester, capsys, monkeypatch) -> None:
    """Issue 38 (Low 3): every pair of 300 runs was 45,000 comparisons and a 15.6 MB page. Counted
    work, not time: the comparisons made and the page's bytes grow with the runs, not their square."""
    import pytest_reasoning_evals.chaosbench.runs as chaosbench_runs

    made = []
    counted = chaosbench_runs.compare
    monkeypatch.setattr(chaosbench_runs, "compare", lambda *a, **k: made.append(1) or counted(*a, **k))
    work = {}
    for n in (40, 80):
        folder = copies(pytester, n) if n == 40 else _more(pytester, n)
        made.clear()
        code, out = runs(capsys, folder)
        assert code == 0, out
        work[n] = (len(made), (folder / "runs.html").stat().st_size)
        (table,) = json.loads((folder / "runs.json").read_text())["tables"]
        assert len(table["comparisons"]) == n - 1 and len(table["rows"]) == n
        best = {c["a"] for c in table["comparisons"]}
        assert len(best) == 1 and next(r for r in table["rows"] if r["run"] in best)["accuracy"] == 1.0
        assert f"{n} runs on one dataset: each is compared with the most accurate" in (folder / "runs.md").read_text()
    assert work[80][0] / work[40][0] < 2.2, work
    assert work[80][1] / work[40][1] < 2.2, work


def _more(pytester: pytest.Pytester, n: int) -> Path:
    folder = pytester.path / f"runs-{n}"
    shutil.copytree(pytester.path / "runs-40", folder)
    for i in range(40, n):
        shutil.copytree(folder / f"run-{i % 2:04d}", folder / f"run-{i:04d}")
    return folder


def test_a_few_runs_of_one_dataset_are_all_compared_pairwise_with_a_matrix(pytester, capsys) -> None:
    folder = copies(pytester, 12)
    code, out = runs(capsys, folder)
    assert code == 0, out
    (table,) = json.loads((folder / "runs.json").read_text())["tables"]
    assert len(table["comparisons"]) == 12 * 11 // 2
    assert 'id="chaosbench-matrix"' in (folder / "runs.html").read_text()


@pytest.mark.parametrize("value", ["nan", "inf", "2", "-1", "0", "1", "x"])
def test_alpha_outside_zero_to_one_is_a_usage_error(tmp_path, capsys, value) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["runs", str(tmp_path), "--alpha", value])
    assert stopped.value.code == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert "--alpha" in error and "between 0 and 1" in error, error


DAMAGED = {
    "summary of wrong types": (
        "summary.json",
        json.dumps(
            {
                "model": ["oracle"],
                "overall_accuracy": "high",
                "overall_accuracy_ci95": "wide",
                "total_questions": [24],
                "tokens": {"input": "many"},
                "complete": "yes",
                "task_accuracy": {"atomic": "most"},
            }
        ),
    ),
    "summary nested 100,000 deep": ("summary.json", "[" * 100_000 + "]" * 100_000),
    "manifest nested 100,000 deep": ("run_manifest.json", "{" + '"a":{' * 100_000 + "}" * 100_001),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_a_damaged_run_directory_is_skipped_with_a_line_naming_it(pytester, capsys, damage) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle", "always-true"))
    victim = next(folder.glob("always-true_zeroshot_*"))
    name, text = DAMAGED[damage]
    (victim / name).write_text(text)
    capsys.readouterr()  # the runs' own output
    code, out = runs(capsys, folder)
    assert code == 0, out
    skipped = [line for line in out.splitlines() if str(victim) in line]
    assert len(skipped) == 1, out
    assert "not read" in skipped[0] and len(skipped[0]) < 400, skipped
    (table,) = json.loads((folder / "runs.json").read_text())["tables"]
    assert [row["model"] for row in table["rows"]] == ["oracle"]
    assert str(victim) in (folder / "runs.html").read_text()


def test_a_dialectic_run_of_wrong_types_is_skipped_with_a_line_naming_it(pytester, capsys) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle",))
    victim = folder / "judged_dialectic"
    victim.mkdir()
    (victim / "run_meta.json").write_text(json.dumps({"timestamp": 7, "complete": True}))
    variant = {"variant": "baseline", "model": "m", "test_cases": "two", "mean_score": "high", "hard_fails": None}
    variant.update(pcc_compliance=None, mode_accuracy=None, judge_agreement=None, cost_usd=[1], tokens=None)
    (victim / "variant_summary.json").write_text(json.dumps({"variants": [variant]}))
    capsys.readouterr()  # the run's own output
    code, out = runs(capsys, folder)
    assert code == 0, out
    (skipped,) = [line for line in out.splitlines() if str(victim) in line]
    assert "not read" in skipped, skipped


def test_out_naming_a_file_is_a_usage_error(pytester, capsys) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle",))
    target = pytester.path / "a-file"
    target.write_text("mine\n")
    code = main(["runs", str(folder), "--out", str(target)])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [f"runs: --out {target}: not a folder"]
    assert target.read_text() == "mine\n"


def test_a_first_folder_that_cannot_be_written_is_one_line(pytester, capsys) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle",))
    (folder / "runs.md").mkdir()  # cannot be replaced by a file: as a read-only folder, even for root
    code = main(["runs", str(folder)])
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"runs: cannot write into {folder}") and "--out" in err[0], err


def test_a_run_directory_named_like_html_is_text_in_every_output(pytester, capsys, monkeypatch) -> None:
    """Issue 38 (Low 6): `--eval-prompts 'prompts/<img src=x onerror=alert(1)>'` names its runs' folder."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    folder = fixed_runs(pytester, bank(pytester.path / "bank.jsonl"), models=("oracle", "always-true"))
    hostile = "<img src=x onerror=alert(1)> *run* [x](javascript:alert) |"
    (folder / "named").mkdir()
    next(folder.glob("oracle_zeroshot_*")).rename(folder / "named" / hostile)
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    capsys.readouterr()
    code, out = runs(capsys, folder)
    assert code == 0, out
    for text in (out, (folder / "runs.md").read_text(), summary.read_text()):
        assert "<img" not in text and "[x](" not in text, text  # no tag, no link
        (row,) = [line for line in text.splitlines() if "onerror" in line and "oracle" in line]
        assert row.count(" | ") == len(COLUMNS) - 1, row  # the name's own `|` did not add a cell
    assert "<img" not in (folder / "runs.html").read_text()


def section(html: str, start: str, end: str) -> str:
    found = re.search(re.escape(start) + ".*?" + re.escape(end), html, re.S)
    assert found, start
    return found[0]


def test_runs_are_named_by_what_differs_and_a_teams_quiz_by_its_file(pytester, capsys) -> None:
    """Issue 39: runs of two prompts and two models, one at another --eval-max-tokens, on a team's
    quiz: each run is named by the fields that differ in every table and chart, the fields they
    share are said once, a run without --eval-prompts names its prompt folder, and nothing says
    ChaosBench-Logic."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    quiz = write_jsonl(
        pytester.path / "quiz.jsonl",
        [question(f"q-{i:02d}", "TRUE" if i % 3 else "FALSE", family=("python", "sql")[i % 2]) for i in range(12)],
    )
    for name in ("plain", "careful"):
        (pytester.path / name).mkdir()
        (pytester.path / name / "zeroshot.txt").write_text(f"{name}: {{question}}")
    made = {
        "oracle, prompt plain, max tokens 64": ["--model", "oracle", "--eval-prompts", "plain"],
        "oracle, prompt careful, max tokens 64": ["--model", "oracle", "--eval-prompts", "careful"],
        "always-true, prompt careful, max tokens 64": ["--model", "always-true", "--eval-prompts", "careful"],
        "oracle, prompt shipped, max tokens 16": ["--model", "oracle", "--eval-max-tokens", "16"],
    }
    folder = pytester.path / "results"
    for i, args in enumerate(made.values()):
        result = pytester.runpytest(*args, f"--eval-cases={quiz}", f"--eval-out-dir={folder / str(i)}")
        assert result.ret in (0, 1), result.stdout.str()
    shipped = next((folder / "3").glob("oracle_*")) / "run_manifest.json"
    assert json.loads(shipped.read_text())["prompt"]["name"] == "shipped"
    code, out = runs(capsys, folder)
    assert code == 0, out
    (table,) = json.loads((folder / "runs.json").read_text())["tables"]
    labels = {r["run"]: r["label"] for r in table["rows"]}
    assert sorted(labels.values()) == sorted(made)
    assert table["title"] == "TRUE/FALSE runs on quiz.jsonl"
    markdown = (folder / "runs.md").read_text()
    assert "## TRUE/FALSE runs on quiz.jsonl" in markdown and "All runs: mode zeroshot, dataset quiz.jsonl" in markdown
    for c in table["comparisons"]:
        assert f"| {labels[c['a']]} | {labels[c['b']]} |" in markdown
    html = (folder / "runs.html").read_text()
    shown = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    assert "ChaosBench" not in shown and "<h1>Runs side by side: TRUE/FALSE runs on quiz.jsonl</h1>" in shown
    for start, end in (
        ('id="chaosbench-runs"', "</table>"),
        ('id="chaosbench-heatmap"', "</table>"),
        ('id="chaosbench-scatter"', "</svg>"),
        ('id="chaosbench-matrix"', "</table>"),
        ('class="numbers comparisons"', "</table>"),
    ):
        part = section(html, start, end)
        assert all(f">{label}<" in part for label in made), (start, part)
