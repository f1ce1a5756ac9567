"""The README and the docs pages: every relative link and anchor resolves, the README stays short,
and the README's Documentation list links every page of docs/."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 400

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`[^`]*`")


def doc_files():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("examples/*/README.md"))]


def prose_lines(text):
    """The lines outside fenced code blocks."""
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            yield line


def slug(heading):
    """GitHub's anchor of a heading: lowercase, punctuation other than '-' and '_' dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text):
    seen, found = {}, set()
    for line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(text):
    for line in prose_lines(text):
        # a link's text may be code (`[`x`](y)`); code that merely shows link syntax is no link
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            yield m.group(1)


def broken_links(path):
    """Every relative link of the Markdown file at path whose file or anchor does not exist."""
    text = path.read_text(encoding="utf-8")
    problems = []
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http(s), mailto: not checked
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{path.name}: ({target}): no such file")
        elif anchor and (dest.is_dir() or anchor not in anchors(dest.read_text(encoding="utf-8"))):
            problems.append(f"{path.name}: ({target}): no heading #{anchor} in {dest.name}")
    return problems


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_readme_is_at_most_400_lines():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; move reference text to docs/"


def test_readme_links_every_docs_page():
    linked = {Path(t.partition("#")[0]).name for t in links((ROOT / "README.md").read_text(encoding="utf-8"))}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set()


def test_checker_reports_broken_links_and_accepts_good_ones(tmp_path):
    (tmp_path / "other.md").write_text(
        "# Other page\n\n## Speed\n\n## Speed\n\n## Calls in flight (`--eval-concurrency`)\n"
    )
    page = tmp_path / "page.md"
    page.write_text(
        "# Title, here\n\n"
        "[ok](#title-here) [ok](other.md) [ok](other.md#speed-1) [ok](other.md#calls-in-flight---eval-concurrency)\n"
        "[web](https://example.org/#x) `[code](nowhere.md)`\n"
        "```bash\n# not a heading\n[in a fence](nowhere.md)\n```\n"
        "[bad](#not-here) [gone](missing.md) [bad](other.md#speed-2) [bad](#not-a-heading)\n"
    )
    assert broken_links(page) == [
        "page.md: (#not-here): no heading #not-here in page.md",
        "page.md: (missing.md): no such file",
        "page.md: (other.md#speed-2): no heading #speed-2 in other.md",
        "page.md: (#not-a-heading): no heading #not-a-heading in page.md",
    ]


def test_slug_is_githubs():
    assert slug("Outputs (`results/<model>_<mode>/`)") == "outputs-resultsmodel_mode"
    assert slug("Lining a run up with upstream's leaderboard") == "lining-a-run-up-with-upstreams-leaderboard"
    assert slug("Gates: nothing measured is not a pass") == "gates-nothing-measured-is-not-a-pass"
