"""runs.html in a real browser, set up as report.html's browser test (test_report_browser.py: Debian's
Chromium driven by Playwright, skipped saying why where either is missing): a row per run, the
heatmap's cells, sorting by a column, a run's link opening its report.html, the Pareto front, and
nothing fetched from the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integration.test_report_browser import Opened, browser  # noqa: F401 - the shared Chromium fixture
from integration.test_runs_table import FAMILIES, folder, no_step_summary  # noqa: F401 - the runs folder fixture
from pytest_reasoning_evals.__main__ import main

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class OpenedRuns(Opened):
    """The runs page, which may also open the run pages it links to (nothing else)."""

    def __init__(self, browser, path: Path, allowed: set[str]):  # noqa: F811 - the fixture's value
        self.allowed = allowed
        super().__init__(browser, path)

    def _route(self, route) -> None:
        self.requests.append(route.request.url)
        if route.request.url == self.url or route.request.url in self.allowed:
            route.continue_()
        else:
            route.abort()


def test_the_runs_page_in_chromium(browser, folder: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    assert main(["runs", str(folder)]) == 0
    capsys.readouterr()
    data = json.loads((folder / "runs.json").read_text())
    chaos = data["tables"][0]
    reports = {r["run"]: Path(r["report"]).resolve().as_uri() for r in chaos["rows"]}
    opened = OpenedRuns(browser, folder / "runs.html", set(reports.values()))
    page = opened.page

    rows = page.locator("#chaosbench-runs tbody tr.run")
    assert rows.count() == 3
    accuracy_column = page.locator("#chaosbench-runs thead th").all_inner_texts().index("accuracy")
    shown = {
        rows.nth(i).get_attribute("data-run"): rows.nth(i).locator("td").nth(accuracy_column).inner_text()
        for i in range(3)
    }
    assert shown == {r["run"]: f"{r['accuracy']:.1%}" for r in chaos["rows"]}
    assert page.locator("#dialectic-runs tbody tr.run").count() == 2

    # the heatmap: a cell per run and family, each with the run's accuracy on that family
    cells = page.locator("#chaosbench-heatmap td.heat")
    assert cells.count() == 3 * len(FAMILIES)
    for row in chaos["rows"]:
        for family, accuracy in row["families"].items():
            cell = page.locator(f'#chaosbench-heatmap tr[data-run="{row["run"]}"] td[data-family="{family}"]')
            assert cell.inner_text() == f"{accuracy:.0%}" and cell.is_visible()
    # the oracle alone is on the Pareto front (every run costs nothing; it is the most accurate)
    oracle = next(r["run"] for r in chaos["rows"] if r["model"] == "oracle")
    front = page.locator('#chaosbench-scatter g.point[data-pareto="true"]')
    assert front.count() == 1 and front.get_attribute("data-run") == oracle
    # the matrix: a significant cell per ordered pair of the oracle with another run
    assert page.locator("#chaosbench-matrix td.delta").count() == 6
    assert page.locator("#chaosbench-matrix td.significant").count() >= 2

    # sorting: the accuracy heading sorts ascending, then descending
    heading = page.locator("#chaosbench-runs thead th").nth(accuracy_column)
    heading.click()
    order = rows.evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert order == [r["run"] for r in sorted(chaos["rows"], key=lambda r: r["accuracy"])]
    heading.click()
    assert rows.first.get_attribute("data-run") == oracle

    # the tables fit a 1,280 px window: their columns wrap rather than scroll
    widths = page.evaluate(
        "[...document.querySelectorAll('table.sortable')].map(t => [t.id, t.scrollWidth, t.parentElement.clientWidth])"
    )
    assert len(widths) == 2 and all(width <= room for _, width, room in widths), widths
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    screenshot = tmp_path / "runs.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    assert opened.errors == []

    # a run's name opens its report.html
    rows.first.locator("a").click()
    page.wait_for_url(reports[oracle])
    assert page.locator("h1").inner_text() == "oracle (zeroshot)"
    assert set(opened.requests) <= {opened.url, *reports.values()}, "a page fetched something besides itself"
    assert opened.errors == []
