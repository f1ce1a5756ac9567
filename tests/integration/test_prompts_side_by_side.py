"""`--eval-prompts a,b`: two prompt folders in one command give two run directories (each into
<out>/<name>/, every prompt's interactions in the item's one cassette), the runs table of the two and their paired comparison; with
`--eval-baseline-prompt NAME --eval-fail-on-regression` the exit status says whether a prompt is
worse than the named one. The model is the fake provider on 127.0.0.1, which answers right when
its prompt says CAREFUL and wrong otherwise."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EVAL_MODULE, fake_run_args, question, write_jsonl

TRUTH = {f"q-{i:02d}": "TRUE" if i % 2 else "FALSE" for i in range(12)}
SHIPPED = "Answer the following question with TRUE or FALSE.\n\nQuestion: {question}\n\nAnswer:"


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch) -> None:
    """In GitHub Actions these commands would append their tables to the job's real step summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def answer(body: dict) -> str:
    text = body["messages"][-1]["content"]
    gold = TRUTH[re.search(r"system (q-\d+) ", text)[1]]
    wrong = "FALSE" if gold == "TRUE" else "TRUE"
    return gold if "CAREFUL" in text else wrong


@pytest.fixture
def server(server):
    server.responder = answer
    return server


def prompts(pytester: pytest.Pytester, name: str, text: str) -> Path:
    folder = pytester.path / name
    folder.mkdir()
    (folder / "zeroshot.txt").write_text(text)
    (folder / "cot.txt").write_text(text)
    return folder


@pytest.fixture
def command(pytester: pytest.Pytester, server) -> list[str]:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    cases = write_jsonl(pytester.path / "bank.jsonl", [question(i, truth) for i, truth in TRUTH.items()])
    prompts(pytester, "careful", "Be CAREFUL. " + SHIPPED)
    prompts(pytester, "hasty", SHIPPED)
    # refresh: the second prompt's requests are recorded beside the first's in each item's cassette
    recording = [*fake_run_args(pytester, server.openai_base, cases)[:-4], "-p", "no:cacheprovider"]
    return [*recording, "--eval-record-mode", "refresh", "--eval-prompts", "careful,hasty"]


def test_two_prompt_folders_give_two_runs_and_their_paired_comparison(pytester, command) -> None:
    result = pytester.runpytest_subprocess(*command, "--eval-min-coverage", "0")
    # the hasty prompt's answers are all wrong: its items fail, and no gate fails the command
    assert result.ret == 0, result.stdout.str()
    results = pytester.path / "results"
    runs = {name: next((results / name).glob("fake_zeroshot_*")) for name in ("careful", "hasty")}
    accuracy = {name: json.loads((d / "summary.json").read_text())["overall_accuracy"] for name, d in runs.items()}
    assert accuracy == {"careful": 1.0, "hasty": 0.0}
    # one cassette per item holds both prompts' interactions (issue 39: no cassette folder per prompt)
    assert set(cassette_interactions(pytester).values()) == {2} and len(cassette_interactions(pytester)) == len(TRUTH)
    (table,) = json.loads((results / "runs.json").read_text())["tables"]
    # each run's folder is named by its prompt (issue 39): the table needs no parent folder to tell them apart
    assert sorted(r["run"] for r in table["rows"]) == sorted(d.name for d in runs.values())
    assert all(f"_{name}-" in d.name for name, d in runs.items())
    (pair,) = table["comparisons"]
    assert (pair["n_paired"], abs(pair["delta"]), pair["fixed"] + pair["broken"]) == (12, 1.0, 12)
    assert pair["p_value"] == pytest.approx(2 / 2**12) and pair["significant"]
    result.stdout.fnmatch_lines(
        ["*=== prompt careful*", "*=== prompt hasty*", "## ChaosBench-Logic runs", "*runs: wrote*"]
    )
    for name in ("runs.csv", "runs.md", "runs.html"):
        assert (results / name).is_file()


def test_a_prompt_worse_than_the_baseline_prompt_fails_the_command(pytester, command) -> None:
    args = [*command, "--eval-min-coverage", "0", "--eval-baseline-prompt", "careful", "--eval-fail-on-regression"]
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*gate no-regression: FAILED*"])
    hasty = next((pytester.path / "results" / "hasty").glob("fake_zeroshot_*"))
    comparison = json.loads((hasty / "comparison.json").read_text())
    assert comparison["regressed"] and comparison["broken"] == 12


def test_a_better_prompt_than_the_baseline_prompt_passes(pytester, command) -> None:
    careful_only = [a for a in command if a != "careful,hasty"]
    # the hasty prompt, the baseline, is 0% right; the gates its own run fails are not the comparison's
    args = [*careful_only, "careful,hasty", "--eval-baseline-prompt", "hasty", "--eval-fail-on-regression"]
    result = pytester.runpytest_subprocess(*args, "--eval-min-coverage", "0")
    careful = next((pytester.path / "results" / "careful").glob("fake_zeroshot_*"))
    comparison = json.loads((careful / "comparison.json").read_text())
    assert not comparison["regressed"] and comparison["fixed"] == 12
    assert "gate no-regression: passed" in result.stdout.str()
    # the order: the baseline prompt runs first
    assert result.stdout.str().index("=== prompt hasty") < result.stdout.str().index("=== prompt careful")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--eval-baseline-prompt", "nosuch"], "*--eval-baseline-prompt nosuch: not one of*"),
        (["--eval-fail-on-regression"], "*needs --eval-baseline-prompt NAME*"),
    ],
)
def test_usage_errors_of_several_prompts(pytester, command, extra, message) -> None:
    result = pytester.runpytest_subprocess(*command, *extra)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_baseline_prompt_needs_several_folders(pytester, command) -> None:
    single = [a if a != "careful,hasty" else "careful" for a in command]
    result = pytester.runpytest_subprocess(*single, "--eval-baseline-prompt", "careful")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-baseline-prompt needs several --eval-prompts folders*"])


def tree(folder: Path) -> list[Path]:
    """Everything under `folder` but what runpytest_subprocess writes there (its output, its temporary folders)."""
    tops = {p: p.relative_to(folder).parts[0] for p in folder.rglob("*")}
    return sorted(p for p, top in tops.items() if top not in ("stdout", "stderr") and not top.startswith("runpytest-"))


@pytest.mark.parametrize("given", ["careful/inner/..", "..", "/"])
def test_a_folder_without_a_name_of_its_own_is_refused_and_nothing_is_written_outside(
    pytester, command, server, given
) -> None:
    """Its name names its run's folders: `..` would put its run directory and cassettes beside
    results/ and cassettes/, `/` (no name) among the other prompts' folders."""
    (pytester.path / "careful" / "inner").mkdir()
    before = tree(pytester.path)
    args = [a if a != "careful,hasty" else f"hasty,{given}" for a in command]
    result = pytester.runpytest_subprocess(*args, "--eval-min-coverage", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: --eval-prompts: {pytester.path / given} has no name of its own*"])
    assert len(result.stderr.str().strip().splitlines()) == 1
    assert tree(pytester.path) == before and server.requests == []


@pytest.mark.parametrize(("mode", "missing"), [("zeroshot", "zeroshot.txt"), ("cot", "cot.txt")])
def test_every_folder_is_checked_before_any_prompt_runs(pytester, command, server, mode, missing) -> None:
    """A folder without the prompt file of the chosen --eval-mode is refused before the folders
    before it have run (and paid)."""
    (pytester.path / "hasty" / missing).unlink()
    result = pytester.runpytest_subprocess(*command, "--eval-mode", mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(
        [f"ERROR: --eval-prompts: prompt file for mode '{mode}' not readable: {pytester.path / 'hasty' / missing} *"]
    )
    assert len(result.stderr.str().strip().splitlines()) == 1
    assert server.requests == [] and not (pytester.path / "results").exists()


def cassette_interactions(pytester: pytest.Pytester) -> dict[str, int]:
    """How many interactions each cassette under cassettes/ holds."""
    return {
        str(path.relative_to(pytester.path)): path.read_text().count("- request:")
        for path in sorted((pytester.path / "cassettes").rglob("*.yaml"))
    }


def test_every_prompt_keeps_its_recording_and_prune_drops_what_no_prompt_uses(pytester, command, server) -> None:
    """Issue 39 item 2, the journey: record prompt A; edit to prompt B (recorded, no refusal); back to
    A replays with no call; refreshing an edited B keeps A's interactions; `--eval-prompts A,B`
    asks nothing; `reasoning-evals cassettes prune` drops only the interactions neither uses."""
    base = [*command[:-4], "--eval-min-coverage", "0"]

    def run(prompts: str, mode: str) -> int:
        asked = len(server.requests)
        result = pytester.runpytest_subprocess(*base, "--eval-prompts", prompts, "--eval-record-mode", mode)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        return len(server.requests) - asked

    assert run("careful", "once") == len(TRUTH)
    assert run("hasty", "refresh") == len(TRUTH)  # the edit: recorded beside A, not refused
    assert run("careful", "none") == 0  # back to A: replayed
    (pytester.path / "hasty" / "zeroshot.txt").write_text("Quick. " + SHIPPED)
    assert run("hasty", "refresh") == len(TRUTH)  # B edited again and refreshed ...
    assert run("careful", "none") == 0  # ... A's interactions are still there
    assert set(cassette_interactions(pytester).values()) == {3}
    assert run("careful,hasty", "none") == 0  # side by side: what is recorded, wherever it was recorded
    prune = [sys.executable, "-m", "pytest_reasoning_evals", "cassettes", "prune"]
    current = [*base, "--eval-prompts", "careful,hasty"]
    before = cassette_interactions(pytester)
    dry = subprocess.run([*prune, "--dry-run", "--", *current], cwd=pytester.path, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "cassettes prune: would drop 12 of 36 interactions in 12 of 12 cassettes" in dry.stdout
    assert cassette_interactions(pytester) == before and len(server.requests) == 3 * len(TRUTH)
    done = subprocess.run([*prune, "--", *current], cwd=pytester.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cassettes prune: dropped 12 of 36 interactions in 12 of 12 cassettes" in done.stdout
    assert set(cassette_interactions(pytester).values()) == {2}
    assert run("careful,hasty", "none") == 0 and run("careful", "none") == 0


def test_two_new_prompts_record_side_by_side_with_once(pytester, command, server) -> None:
    """`--eval-prompts a,b --eval-record-mode once` over no cassettes: the second prompt's requests are
    recorded beside the first's in each item's cassette, not refused as misses because the first
    prompt's run wrote the file (the scenario suite's journey b found it)."""
    base = [*command[:-4], "--eval-min-coverage", "0"]
    result = pytester.runpytest_subprocess(*base, "--eval-prompts", "careful,hasty", "--eval-record-mode", "once")
    assert result.ret == 0, result.stdout.str()
    assert len(server.requests) == 2 * len(TRUTH)
    assert set(cassette_interactions(pytester).values()) == {2}
    again = pytester.runpytest_subprocess(*base, "--eval-prompts", "careful,hasty", "--eval-record-mode", "once")
    assert again.ret == 0 and len(server.requests) == 2 * len(TRUTH), "nothing asked twice"
