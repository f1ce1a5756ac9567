"""`reasoning-evals runs DIR...`: many runs side by side. Every run directory under the folders is
handed to each protocol's table (ProtocolInfo.runs: its rows and its pairwise comparisons, which
use its own --eval-baseline code); here the p-values of each table are Holm-corrected and the
tables written as runs.json, runs.csv, runs.md and runs.html (report/runs_page.py) into the first
folder, and appended as markdown to $GITHUB_STEP_SUMMARY when that is set."""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from pathlib import Path

from pytest_reasoning_evals.markdown import inline
from pytest_reasoning_evals.results import replacing, write_json
from pytest_reasoning_evals.runs_cells import COMPARISON_HEADINGS, cell, comparison_cells
from pytest_reasoning_evals.stats import SMALL_SET, detectable_difference, holm

FORMAT = "pytest-reasoning-evals/runs/1"
ALPHA = 0.05  # the family-wise level of the pairwise comparisons (after Holm)
FILES = ("runs.json", "runs.csv", "runs.md", "runs.html")
# what reading a damaged or hand-edited run file raises (a file nested too deep: RecursionError)
UNREADABLE = (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError)
KINDS = {"text": "text", "date": "text", "bool": "true or false", "ci": "a pair of numbers"}  # else: a number


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked(row: dict, columns: list[tuple[str, str, str]]) -> dict:
    """`row`, when each column's value is None or of the type its kind prints; else a ValueError
    naming the first that is not (a run file of wrong types is a problem line, not a traceback)."""
    for key, _, kind in columns:
        value = row.get(key)
        if value is not None and not _fits(value, kind):
            raise ValueError(f"{key} is {repr(value)[:60]}, not {KINDS.get(kind, 'a number')}")
    return row


def total_saved(saved: object) -> float:
    """What a run's batches and prompt cache saved together against the list price, from a
    summary's `cost_saved_usd` ({"cache": USD, "batch": USD}, each part only when not zero; absent
    when nothing was saved: 0); a ValueError when it is not numbers by part."""
    if saved is None:
        return 0.0
    if not isinstance(saved, dict) or not all(map(is_number, saved.values())):
        raise ValueError(f"cost_saved_usd is {repr(saved)[:60]}, not numbers by part")
    return sum(saved.values())


def _fits(value, kind: str) -> bool:
    if kind in ("text", "date"):
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "ci":
        return isinstance(value, (list, tuple)) and len(value) == 2 and all(map(is_number, value))
    return is_number(value)


def run_directories(folders: list[Path]) -> list[Path]:
    """Each folder that is itself a run directory, and every run directory below the folders (a
    directory holding run_meta.json), each once, in path order."""
    found: dict[Path, None] = {}
    for folder in folders:
        for meta in sorted([folder / "run_meta.json", *folder.rglob("*/run_meta.json")]):
            if meta.is_file():
                found.setdefault(meta.parent.resolve(), None)
    return list(found)


def collect(folders: list[Path], alpha: float = ALPHA) -> dict:
    """The runs table of every run directory under the folders."""
    return collect_directories(run_directories(folders), [str(f) for f in folders], alpha)


def collect_directories(directories: list[Path], folders: list[str], alpha: float = ALPHA) -> dict:
    """The runs table of these run directories: the tables of each protocol with runs among them,
    each table's comparisons' p-values Holm-corrected across it (`p_holm`, `significant` at `alpha`)."""
    from pytest_reasoning_evals.declarations import declared_protocols, load

    tables = []
    for info in declared_protocols():
        for table in load(info.runs)(directories) if info.runs else []:
            comparisons = table["comparisons"]
            for comparison, adjusted in zip(comparisons, holm([c["p_value"] for c in comparisons])):
                comparison["p_holm"] = adjusted
                comparison["significant"] = adjusted < alpha
                if "fixed" in comparison:  # a paired comparison of right and wrong answers (McNemar)
                    discordant = comparison["fixed"] + comparison["broken"]
                    comparison["detectable_delta"] = detectable_difference(
                        comparison["n_paired"], discordant, alpha=alpha
                    )
            table["notes"] = table.get("notes", []) + small_set_note(comparisons, alpha)
            # how the p-values were computed: McNemar's exact test, or with epochs the sign-flip test by question
            table["tests"] = " and ".join(sorted({c.get("test", "McNemar") for c in comparisons})) or "McNemar"
            name_runs(table)
            tables.append(table)
    return {"format": FORMAT, "folders": folders, "alpha": alpha, "tables": tables}


def small_set_note(comparisons: list[dict], alpha: float) -> list[str]:
    """One note when comparisons pair fewer than SMALL_SET items: what change they could detect."""
    small = [c for c in comparisons if c.get("detectable_delta") is not None and c["n_paired"] < SMALL_SET]
    if not small:
        return []
    least, most = min(c["detectable_delta"] for c in small), max(c["detectable_delta"] for c in small)
    size = f"{least * 100:.1f}" + ("" if most == least else f" to {most * 100:.1f}")
    return [
        f"small sets: {len(small)} of the comparisons pair fewer than {SMALL_SET} items and can only detect a paired "
        f"change of about {size} points or more (alpha {alpha:g} uncorrected, 80% power, from their discordant "
        "pairs; each one's detectable_delta is in runs.json); to gate a smaller drop whatever the p-value, "
        "run with --eval-baseline and --eval-max-accuracy-drop X"
    ]


def tell_apart(rows: list[dict], key: str, digest: str) -> None:
    """A name given to different contents (an edited prompt or question file) adds their hash."""
    digests: dict[str, set] = {}
    for row in rows:
        digests.setdefault(row[key], set()).add(row[digest])
    for row in rows:
        if len(digests[row[key]]) > 1:
            row[key] = f"{row[key]}@{row[digest][:8]}"


def name_runs(table: dict) -> None:
    """A table with `identity` fields (key, heading, kind, bare): each row's `label` is its values of
    the fields that differ between the rows (all alike: the first two), `common` says once the
    values every row shares, and each comparison gets its runs' labels. Rows still alike add
    their directory's name."""
    identity, rows = table.get("identity"), table["rows"]
    if not identity or not rows:
        return
    shown = [spec for spec in identity if len({str(row.get(spec[0])) for row in rows}) > 1] or identity[:2]
    labelled = {spec[0] for spec in shown}
    table["common"] = [f"{heading} {rows[0].get(key)}" for key, heading, _, _ in identity if key not in labelled]
    for row in rows:
        row["label"] = ", ".join(
            str(row.get(key)) if bare else f"{heading} {row.get(key)}" for key, heading, _, bare in shown
        )
    counts = Counter(row["label"] for row in rows)
    labels = {}
    for row in rows:
        row["label"] += f" ({row['run']})" if counts[row["label"]] > 1 else ""
        labels[row["run"]] = row["label"]
    for comparison in table["comparisons"]:
        comparison.update(a_label=labels.get(comparison["a"]), b_label=labels.get(comparison["b"]))


def _md_row(cells: list[str]) -> str:
    # a run's name is a folder's (a prompt folder's too): text, not HTML or Markdown, in runs.md and the job summary
    return "| " + " | ".join(map(inline, cells)) + " |"


def markdown(collected: dict) -> str:
    """The tables as markdown: a results page to commit, the CI step summary, the terminal."""
    out = ["# Runs", ""]
    for table in collected["tables"]:
        out += [f"## {inline(table['title'])}", ""]
        if table.get("common"):
            out += [f"All runs: {inline(', '.join(table['common']))}.", ""]
        out.append(_md_row([heading for _, heading, _ in table["columns"]]))
        out.append(_md_row(["---"] * len(table["columns"])))
        for row in table["rows"]:
            out.append(_md_row([cell(row.get(key), kind) for key, _, kind in table["columns"]]))
        out.append("")
        if table["comparisons"]:
            out += [f"### Paired comparisons ({table['tests']}, Holm-corrected at {collected['alpha']:g})", ""]
            out += [f"- {inline(note)}" for note in table.get("notes", [])] + ([""] if table.get("notes") else [])
            out.append(_md_row(COMPARISON_HEADINGS))
            out.append(_md_row(["---"] * len(COMPARISON_HEADINGS)))
            out += [_md_row(comparison_cells(c)) for c in table["comparisons"]]
            out.append("")
        out += [f"- {inline(problem)}" for problem in table["problems"]]
    if not collected["tables"]:
        out.append("no run directory found")
    return "\n".join(out).rstrip() + "\n"


def csv_text(collected: dict) -> str:
    """Every table's rows in one CSV, a `table` column first (families as family:accuracy)."""
    keys: dict[str, None] = {"table": None}
    for table in collected["tables"]:
        for row in table["rows"]:
            keys.update(dict.fromkeys(row))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(keys)
    for table in collected["tables"]:
        for row in table["rows"]:
            values = {"table": table["id"], **row}
            writer.writerow([_csv_value(values.get(key)) for key in keys])
    return buffer.getvalue()


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return " ".join(f"{k}:{v:.4f}" if isinstance(v, float) else f"{k}:{v}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(map(str, value))
    return str(value)


def write_outputs(collected: dict, folder: Path) -> tuple[list[Path], str | None]:
    """runs.json, runs.csv, runs.md and runs.html in `folder`; -> (written, why the page was not)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "runs.json", collected)
    for name, text in (("runs.csv", csv_text(collected)), ("runs.md", markdown(collected))):
        with replacing(folder / name) as handle:
            handle.write(text)
    written = [folder / name for name in FILES[:3]]
    try:
        from pytest_reasoning_evals.report.runs_page import write_page
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("jinja2", "markupsafe"):
            raise
        return written, "runs.html not written: it needs Jinja2 (pip install 'pytest-reasoning-evals[report]')"
    write_page(collected, folder / "runs.html")
    return [*written, folder / "runs.html"], None


def step_summary(collected: dict) -> str | None:
    """In GitHub Actions: the markdown appended to the job's step summary; the line to print (where it
    went, or why it was not written), None outside GitHub Actions."""
    from pytest_reasoning_evals.markdown import append_step_summary

    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return None
    return append_step_summary(markdown(collected) + "\n") or f"runs: appended to {os.environ['GITHUB_STEP_SUMMARY']}"
