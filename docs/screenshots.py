"""Screenshots of report.html for the README, in headless Chromium (Debian's package) through
Playwright. Run from the repository root after the two runs the README names:

    pytest evals
    pytest evals/test_chaosbench.py --eval-mode cot --eval-baseline results/smollm2-135m_zeroshot \\
        -k "00001 or 00002 or 00003 or 00004 or 00005 or dlg-0001 or dlg-0002 or dlg-0003 or dlg-0004 or dlg-0005"
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
        browser.close()


if __name__ == "__main__":
    main()
