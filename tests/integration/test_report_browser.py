"""report.html in a real browser: headless Chromium (Debian's package) driven by Playwright. The
charts and the item table render with the run's numbers, the filters and the search work, a row
opens its prompt and reply, nothing is fetched from the network, and a screenshot is saved under
the test's tmp dir. Skipped, saying why, where Chromium or Playwright is not installed (.ci/run
installs both)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT, add_eval_module, run_dir

from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.report import REPORT_FILE

# starts headless Chromium
pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')")
if CHROMIUM is None:
    pytest.skip("no Chromium on this machine (apt-get install chromium; .ci/run installs it)", allow_module_level=True)

# Chromium on a machine without network: no background services, no sandbox as root (CI runs as root)
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
BASELINE = PROJECT_ROOT / "snapshots" / f"{DEFAULT_MODEL}_zeroshot.baseline.json"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


class Opened:
    """A page opened from a file, with every request it made and every script error."""

    def __init__(self, browser, path: Path):
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.route("**/*", self._route)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        self.page.goto(self.url)

    def _route(self, route) -> None:
        self.requests.append(route.request.url)
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()  # and recorded: the test fails on any request but the page itself

    def rows(self):
        return self.page.locator("#item-rows tr.row")


@pytest.fixture
def replayed(pytester) -> Path:
    """A real replay of the committed SmolLM2 cassettes (every question and the first 14 dialogues),
    compared with the committed baseline, with a gate: its run directory."""
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess(
        "--eval-max-items", "1010", f"--eval-baseline={BASELINE}", "--eval-min-accuracy", "0.4", "-n", "2"
    )
    assert result.ret == 0, result.stdout.str()
    return run_dir(pytester, DEFAULT_MODEL, subset=True)


def test_the_page_renders_the_run_in_chromium(browser, replayed: Path, tmp_path: Path) -> None:
    summary = json.loads((replayed / "summary.json").read_text())
    records = [json.loads(line) for line in (replayed / "completions.jsonl").read_text().splitlines()]
    comparison = json.loads((replayed / "comparison.json").read_text())
    opened = Opened(browser, replayed / REPORT_FILE)
    page = opened.page

    # header: model, mode, the gate's verdict
    assert page.locator("h1").inner_text() == f"{DEFAULT_MODEL} (zeroshot)"
    assert page.locator("tr.gate td").first.inner_text() == "min-accuracy"
    assert page.locator("tr.gate").get_attribute("data-passed") == "true"
    assert page.locator("#overall-accuracy .big").inner_text() == f"{summary['overall_accuracy']:.1%}"

    # charts: one visible bar per family, each labelled with the family's accuracy from summary.json
    families = {name: d for name, d in summary["task_details"].items() if d["total"]}
    chart = page.locator('figure[data-chart="family-accuracy"] svg')
    assert chart.is_visible() and chart.bounding_box()["width"] > 400
    for name in families:
        bar = chart.locator(f'[id="bar-{name}"]')
        assert bar.count() == 1 and bar.bounding_box()["width"] > 0, name
    for d in families.values():
        assert f"{d['accuracy']:.1%}  n={d['total']}" in chart.text_content()
    assert page.locator('figure[data-chart="split-accuracy"] svg').is_visible()
    assert page.locator('figure[data-chart="fol-violations"] svg').is_visible()
    confusion = summary["confusion"]
    assert {cell: int(page.locator(f'td[data-cell="{cell}"]').inner_text()) for cell in confusion} == confusion

    # the comparison: a bar per family and overall, and its numbers
    deltas = page.locator('figure[data-chart="family-deltas"] svg')
    assert deltas.locator('[id^="bar-"]').count() == len(comparison["family_deltas"]) + 1
    assert f"{comparison['n_paired']} paired items" in page.locator("#comparison").inner_text()

    # the item table: every item, filters by status and family, search, a row opens its reply
    assert page.locator("#item-count").inner_text() == f"({len(records)} of {len(records)})"
    assert opened.rows().count() == min(500, len(records))
    page.select_option("#filter-status", "wrong")
    wrong = [r for r in records if r["status"] == "wrong"]
    assert page.locator("#item-count").inner_text() == f"({len(wrong)} of {len(records)})"
    assert set(opened.rows().evaluate_all("rows => rows.map(r => r.dataset.status)")) == {"wrong"}
    family, count = Counter(r["family"] for r in wrong).most_common(1)[0]
    page.select_option("#filter-group", family)
    assert opened.rows().count() == count
    page.select_option("#filter-status", "")
    page.select_option("#filter-group", "")
    question = next(r for r in records if "turns" not in r and r["status"] == "wrong")
    page.fill("#filter-text", question["id"])
    assert opened.rows().count() == 1
    opened.rows().first.click()
    detail = page.locator("tr.detail").inner_text()
    assert question["question"] in detail and " ".join(question["raw_text"].split())[:60] in " ".join(detail.split())
    dialogue = next(r for r in records if "turns" in r)
    page.fill("#filter-text", dialogue["id"])
    page.locator(f'[id="item-{dialogue["id"]}"]').click()
    assert page.locator("tr.detail .turn").count() == len(dialogue["turns"])

    page.fill("#filter-text", "")
    screenshot = tmp_path / "report.png"
    page.screenshot(path=str(screenshot), full_page=False)
    assert screenshot.stat().st_size > 10_000
    assert opened.requests == [opened.url], "the page fetched something besides itself"
    assert opened.errors == []


def test_a_dialectic_page_draws_its_own_item_table_in_chromium(browser, pytester) -> None:
    """The dialectic protocol's table script (its report.js) gives the page its columns, groups and details."""
    from helpers import DIALECTIC_MODULE, use_repo_cassettes

    use_repo_cassettes(pytester)
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    result = pytester.runpytest_subprocess("--eval-max-items", "2", "-p", "no:randomly")
    assert (pytester.path / "results").is_dir(), result.stdout.str()
    run = next((pytester.path / "results").glob(f"{DEFAULT_MODEL}_dialectic*"))
    responses = [json.loads(line) for line in (run / "per_response.jsonl").read_text().splitlines()]
    opened = Opened(browser, run / REPORT_FILE)
    page = opened.page

    assert page.locator("h1").inner_text() == f"{DEFAULT_MODEL} (dialectic)"
    heads = page.locator("#item-head th").all_inner_texts()
    assert heads[:2] == ["case", "variant"] and "score" in heads
    assert opened.rows().count() == len(responses)
    variant = responses[0]["variant"]
    page.select_option("#filter-group", variant)
    assert opened.rows().count() == sum(r["variant"] == variant for r in responses)
    opened.rows().first.click()
    detail = page.locator("tr.detail").inner_text()
    shown = next(r for r in responses if r["variant"] == variant)
    assert detail.lower().startswith("query") and shown["query"][:60] in detail
    assert opened.requests == [opened.url] and opened.errors == []
