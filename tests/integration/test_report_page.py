"""report.html: written into every run directory from the run's own files, self-contained and
offline, the same bytes for the same run, rebuilt by `reasoning-evals report`, with the numbers of
summary.json. What it looks like in a browser is tests/integration/test_report_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import (
    DIALECTIC_MODULE,
    PROJECT_ROOT,
    add_eval_module,
    question,
    run_dir,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.report import (
    MISSING_EXTRA,
    REPORT_FILE,
    write_report,
)

BASELINE = PROJECT_ROOT / "snapshots" / f"{DEFAULT_MODEL}_zeroshot.baseline.json"
EXTERNAL = re.compile(
    r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|@import|<link\b""",
    re.I,
)


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "report", *map(str, args)], capture_output=True, text=True
    )


def items_json(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert block, "the page carries its items as a JSON block"
    return json.loads(block[1])


@pytest.fixture
def replay(pytester) -> Path:
    """A small real replay (committed SmolLM2 cassettes) with a gate: its run directory."""
    add_eval_module(pytester)
    result = pytester.runpytest("--eval-max-items", "60", "--eval-min-accuracy", "0.3")
    assert result.ret == 0, result.stdout.str()
    return run_dir(pytester, DEFAULT_MODEL, subset=True)


APART_PROBE = """
import sys
import pytest_reasoning_evals.report

pytest_reasoning_evals.report.APART_FROM = 1  # every run is a large one


def pytest_unconfigure(config):
    with open("imported.txt", "w") as out:
        out.write(str(sorted(m for m in sys.modules if m.split(".")[0] in ("matplotlib", "jinja2"))))
"""


def test_every_run_directory_gets_a_self_contained_page(replay: Path) -> None:
    page = replay / REPORT_FILE
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert not EXTERNAL.search(html), EXTERNAL.search(html)[0]  # nothing fetched: no URL, stylesheet or import
    assert "default-src 'none'" in html  # and the page forbids fetching anything itself
    summary = json.loads((replay / "summary.json").read_text())
    records = [json.loads(line) for line in (replay / "completions.jsonl").read_text().splitlines()]
    data = items_json(html)
    assert sorted(row["id"] for row in data["items"]) == sorted(r["id"] for r in records)
    assert data["template"] == (PROJECT_ROOT / "cases" / "chaosbench" / "prompts" / "zeroshot.txt").read_text()
    first = next(r for r in records if "turns" not in r)
    row = next(row for row in data["items"] if row["id"] == first["id"])
    assert (row["question"], row["raw"], row["status"]) == (first["question"], first["raw_text"], first["status"])
    for name, d in summary["task_details"].items():  # every family's bar and number (n/a: none answered)
        if d["total"]:
            shown = "n/a" if d["accuracy"] is None else f"{d['accuracy']:.1%}"
            assert f'id="bar-{name}"' in html and shown in html
    gates = json.loads((replay / "gates.json").read_text())
    assert gates["passed"] is True and [g["name"] for g in gates["gates"]] == ["min-accuracy"]
    assert re.search(r"<td>min-accuracy</td><td><span class=\"badge good\">passed</span>", html)


def quiz(pytester) -> Path:
    """A team's own quiz: Python and SQL questions, no misconception (`bias`) field."""
    families = ("python", "sql")
    return write_jsonl(
        pytester.path / "quiz.jsonl",
        [question(f"q-{i}", "TRUE" if i % 2 else "FALSE", family=families[i % 2]) for i in range(6)],
    )


def test_a_teams_quiz_is_named_by_its_file_and_shows_no_chaosbench_card(pytester, replay: Path) -> None:
    """Its heading names its file, its cards its own measures: no bias error rate without a `bias`
    in its data, and no ChaosBench-Logic word; the shipped bank keeps its bias card."""
    assert "Bias error rate" in (replay / REPORT_FILE).read_text(encoding="utf-8")
    result = pytester.runpytest("--model", "oracle", f"--eval-cases={quiz(pytester)}")
    assert result.ret == 0, result.stdout.str()
    html = (next((pytester.path / "results").glob("oracle_zeroshot_quiz-*")) / REPORT_FILE).read_text(encoding="utf-8")
    assert re.search(r"<h1>oracle \(zeroshot\) on quiz\.jsonl</h1>", html)
    shown = re.sub(r"<script.*?</script>", "", html, flags=re.S)  # what the page says, not its code
    assert "bias error rate" not in shown.lower() and 'id="bias"' not in shown and "ChaosBench" not in shown
    assert re.search(r"<dt>dataset</dt><dd>quiz\.jsonl <code>[0-9a-f]{12}</code> 6 questions", html)
    assert 'id="bar-python"' in html and 'id="bar-sql"' in html


def test_the_summary_block_says_where_the_page_is(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--eval-max-items", "5")
    out = result.stdout.str()
    page = run_dir(pytester, DEFAULT_MODEL, subset=True) / REPORT_FILE
    assert f"report: {page}" in out and page.exists()


def test_the_same_run_gives_the_same_page(replay: Path, tmp_path: Path) -> None:
    again = write_report(replay, out=tmp_path / "again.html")
    assert again.path is not None
    assert again.path.read_bytes() == (replay / REPORT_FILE).read_bytes()


@pytest.mark.slow
def test_a_large_run_writes_its_page_in_a_process_of_its_own(pytester, tmp_path: Path) -> None:
    """From APART_FROM records on, `reasoning-evals report` writes the page: the run's process never
    imports matplotlib (its peak memory is its items'), and the page is the one its files give
    (dialogues' records, with their turns, too)."""
    add_eval_module(pytester)
    pytester.makeconftest(APART_PROBE)
    result = pytester.runpytest_subprocess("-k", "test_dialogue or atomic", "--eval-split", "core", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    run = run_dir(pytester, DEFAULT_MODEL, subset=True)
    result.stdout.fnmatch_lines([f"report: {run / REPORT_FILE}"])
    assert (pytester.path / "imported.txt").read_text() == "[]"
    kinds = {json.loads(line).get("kind", "question") for line in (run / "completions.jsonl").read_text().splitlines()}
    assert kinds == {"question", "dialogue"}
    again = write_report(run, out=tmp_path / "again.html")
    assert again.path.read_bytes() == (run / REPORT_FILE).read_bytes()


def test_rebuilt_from_the_files_alone(replay: Path, tmp_path: Path) -> None:
    """A copied run directory (merged, downloaded from CI) rebuilds its page with the command."""
    copy = tmp_path / "copied"
    copy.mkdir()
    for name in ("summary.json", "run_meta.json", "run_manifest.json", "completions.jsonl", "gates.json"):
        (copy / name).write_bytes((replay / name).read_bytes())
    done = cli(copy)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report: {copy / REPORT_FILE}"
    rebuilt = (copy / REPORT_FILE).read_text()
    assert items_json(rebuilt) == items_json((replay / REPORT_FILE).read_text())


def test_the_command_compares_with_a_baseline_without_touching_the_run(replay: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in replay.iterdir() if p.is_file()}
    done = cli(replay, "--baseline", BASELINE, "--out", tmp_path / "compared.html")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "compared.html").read_text()
    assert 'id="comparison"' in html and 'id="bar-overall"' in html and "McNemar" in html
    assert {p.name: p.read_bytes() for p in replay.iterdir() if p.is_file()} == before


def test_a_run_with_a_baseline_shows_its_comparison(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--eval-max-items", "30", f"--eval-baseline={BASELINE}")
    assert result.ret == 0, result.stdout.str()
    directory = run_dir(pytester, DEFAULT_MODEL, subset=True)
    comparison = json.loads((directory / "comparison.json").read_text())
    html = (directory / REPORT_FILE).read_text()
    assert f"{comparison['n_paired']} paired items" in html
    # the next run without a baseline does not show the old comparison
    assert pytester.runpytest("--eval-max-items", "30").ret == 0
    assert (
        not (directory / "comparison.json").exists() and 'id="comparison"' not in (directory / REPORT_FILE).read_text()
    )


def test_bad_run_directories_are_one_line_errors(tmp_path: Path) -> None:
    done = cli(tmp_path / "nowhere")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == f"report.html not written: {tmp_path / 'nowhere'}: no such run directory"
    (tmp_path / "empty").mkdir()
    done = cli(tmp_path / "empty")
    assert done.returncode == 2 and "neither summary.json" in done.stderr and "Traceback" not in done.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "summary.json").write_text("{not json")
    done = cli(broken)
    assert done.returncode == 2 and "summary.json: cannot be read" in done.stderr and "Traceback" not in done.stderr


def test_without_the_report_extra_the_run_says_how_to_get_it(replay: Path, monkeypatch, tmp_path: Path) -> None:
    for name in [
        m for m in sys.modules if m == "jinja2" or m.startswith(("jinja2.", "pytest_reasoning_evals.report.page"))
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "jinja2", None)  # what an install without the extra sees: no jinja2
    written = write_report(replay, out=tmp_path / "page.html")
    assert written.path is None and written.note == MISSING_EXTRA
    assert "pip install 'pytest-reasoning-evals[report]'" in written.note and not (tmp_path / "page.html").exists()


def test_a_reply_cannot_break_out_of_the_page(replay: Path, tmp_path: Path) -> None:
    """Model text is data: a reply holding markup or a closing script tag stays inert."""
    completions = replay / "completions.jsonl"
    records = [json.loads(line) for line in completions.read_text().splitlines()]
    question = next(r for r in records if "turns" not in r)
    question["raw_text"] = "</script><script>document.title='owned'</script><img src=x onerror=alert(1)>"
    completions.write_text("".join(json.dumps(r) + "\n" for r in records))
    html = write_report(replay, out=tmp_path / "page.html").path.read_text()
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)[1]
    assert "</" not in block  # nothing in the data can end its script element
    outside = html.replace(block, "")
    assert "document.title=" not in outside and "<img src=x" not in outside  # the reply is only data
    assert (
        items_json(html)["items"][[r["id"] for r in sorted(records, key=lambda r: r["id"])].index(question["id"])][
            "raw"
        ]
        == question["raw_text"]
    )


def test_dialectic_run_directory_gets_its_page(pytester) -> None:
    pytester.makepyfile(test_dialectic_items=DIALECTIC_MODULE)  # not tests/test_dialectic.py's module name
    use_repo_cassettes(pytester)
    result = pytester.runpytest("--eval-max-items", "2", "--eval-base-url", "http://127.0.0.1:9/v1")
    assert result.ret == 0, result.stdout.str()
    directory = pytester.path / "results" / f"{DEFAULT_MODEL}_dialectic-subset"
    meta = json.loads((directory / "run_meta.json").read_text())
    assert meta["model"] == DEFAULT_MODEL and meta["cases"]["count"] == 2 and meta["complete"] is True
    assert [v["name"] for v in meta["variants"]] == ["baseline", "dialectic"]
    html = (directory / REPORT_FILE).read_text()
    assert not EXTERNAL.search(html)
    responses = [json.loads(line) for line in (directory / "per_response.jsonl").read_text().splitlines()]
    rows = items_json(html)["items"]
    assert len(rows) == len(responses) == 4 and all(row["raw"] for row in rows)  # the reply text is in the run's files
    assert 'id="variants"' in html and 'data-chart="turns-to-resolution"' in html
    assert f"report: {directory / REPORT_FILE}" in result.stdout.str()


@pytest.mark.parametrize("damage", ["missing", "garbage", "some garbage"])
def test_a_run_without_readable_records_says_so_on_the_page_and_in_one_line(replay: Path, damage) -> None:
    """Issue 38 (Low 13): a missing or garbage completions.jsonl gave a page with no item rows and no note."""
    completions = replay / "completions.jsonl"
    lines = completions.read_text().splitlines()
    if damage == "missing":
        completions.unlink()
    else:
        garbage = ["{not json", "\x00\x01", '{"id": 3}']
        completions.write_text("\n".join(garbage if damage == "garbage" else [*lines[:-3], *garbage]) + "\n")
    done = cli(replay)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report: {replay / REPORT_FILE}"
    (warning,) = done.stderr.splitlines()
    assert warning.startswith("WARNING") and str(completions) in warning, warning
    expected = {"missing": "missing", "garbage": "3 unreadable lines", "some garbage": "3 unreadable lines"}[damage]
    assert expected in warning, warning
    page = (replay / REPORT_FILE).read_text()
    (note,) = re.findall(r'<p class="note bad-text" id="items-note">(.*?)</p>', page)
    assert expected in note and "completions.jsonl" in note, note
    assert len(items_json(page)["items"]) == (len(lines) - 3 if damage == "some garbage" else 0)
