"""Screenshots of report.html for the README, in headless Chromium (Debian's package) through
Playwright. Run from the repository root after the two runs the README names:

    pytest evals
    pytest evals/test_chaosbench.py --eval-mode cot --eval-baseline results/smollm2-135m_zeroshot \\
        -k "00001 or 00002 or 00003 or 00004 or 00005 or dlg-0001 or dlg-0002 or dlg-0003 or dlg-0004 or dlg-0005"
    python docs/screenshots.py

The runs page (runs.html) after a sample of the shipped bank by four fixed models and SmolLM2, a
dialectic replay, and the runs table of them all:

    for m in oracle always-true random shortcut smollm2-135m; do
        pytest evals/test_chaosbench.py --model $m --eval-max-items 300 --eval-out-dir runs-demo; done
    pytest evals/test_dialectic.py --eval-max-items 4 --eval-out-dir runs-demo
    reasoning-evals runs runs-demo
    python docs/screenshots.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import sync_playwright

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HERE = Path(__file__).resolve().parent
SHOTS = [  # (report, what to show, picture)
    (Path("results/smollm2-135m_zeroshot/report.html"), "body", HERE / "report-replay.png"),
    (Path("results/smollm2-135m_cot-subset/report.html"), "#comparison", HERE / "report-comparison.png"),
]


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1500}, device_scale_factor=1)
        for report, selector, picture in SHOTS:
            page.goto(report.resolve().as_uri())
            if selector == "body":  # the top of the page: header, cards, the family chart
                page.screenshot(path=str(picture), clip={"x": 0, "y": 0, "width": 1200, "height": 1500})
            else:
                page.locator(selector).screenshot(path=str(picture))
            print(f"{picture}: {report}")
        runs = Path("runs-demo/runs.html")
        if runs.is_file():
            page.set_viewport_size({"width": 1400, "height": 900})
            page.goto(runs.resolve().as_uri())
            # sorted by accuracy, best first
            accuracy = page.locator("#chaosbench-runs thead th", has_text="accuracy").first
            accuracy.click()
            accuracy.click()
            page.screenshot(path=str(HERE / "runs-page.png"), full_page=True)
            print(f"{HERE / 'runs-page.png'}: {runs}")
        browser.close()


if __name__ == "__main__":
    main()
