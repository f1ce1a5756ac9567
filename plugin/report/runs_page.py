"""runs.html: the runs table (runs_table.collect) as one self-contained page, like report.html:
each protocol's table (sortable), a runs x families accuracy heatmap, accuracy against cost with
the Pareto front marked, the matrix of paired accuracy differences with their significance, and a
link to each run's report.html. Everything is inline (CSS, script, SVG): nothing is fetched."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from pytest_reasoning_evals.report.page import _environment, _read
from pytest_reasoning_evals.results import replacing
from pytest_reasoning_evals.runs_cells import COMPARISON_HEADINGS, cell, comparison_cells

# the scatter plot's size and margins, in SVG units
WIDTH, HEIGHT, LEFT, BOTTOM, TOP, RIGHT = 640, 360, 56, 40, 16, 150


def _link(report: str | None, folder: Path) -> str | None:
    """The run's report.html relative to the page (the folder can move with its runs)."""
    if not report:
        return None
    return quote(os.path.relpath(report, folder).replace(os.sep, "/"))


def _sort_value(value) -> str:
    """What a cell sorts by: numbers as numbers, the rest as text (the script reads data-sort)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list) and value and isinstance(value[0], (int, float)):
        return repr(value[0])
    return "" if value is None else str(value)


def heat_colour(value: float | None) -> str:
    """Red (0) through yellow to green (1); grey when nothing was measured."""
    if value is None:
        return "#eef0f2"
    hue = round(120 * max(0.0, min(1.0, value)))
    return f"hsl({hue}, 65%, 78%)"


def pareto(points: list[tuple[float, float]]) -> list[bool]:
    """Which (cost, accuracy) points no other beats: no cheaper-or-equal point is at least as accurate
    while better in one of the two."""
    return [
        not any(c2 <= c1 and a2 >= a1 and (c2 < c1 or a2 > a1) for j, (c2, a2) in enumerate(points) if j != i)
        for i, (c1, a1) in enumerate(points)
    ]


def scatter(rows: list[dict]) -> dict:
    """Accuracy against cost: each run a point, the Pareto front joined by a line."""
    shown = [r for r in rows if r.get("accuracy") is not None]
    costs = [r.get("cost_usd") or 0.0 for r in shown]
    top = max(costs, default=0.0) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    front = pareto([(c, r["accuracy"]) for c, r in zip(costs, shown)])
    points = [
        {
            "run": r["run"],
            "label": r.get("label") or r["run"],
            "x": round(LEFT + plot_w * cost / top, 1),
            "y": round(TOP + plot_h * (1 - r["accuracy"]), 1),
            "cost": cost,
            "accuracy": r["accuracy"],
            "pareto": on_front,
        }
        for r, cost, on_front in zip(shown, costs, front)
    ]
    line = sorted((p for p in points if p["pareto"]), key=lambda p: (p["x"], p["y"]))
    # labels top to bottom, each at least a line below the one above, so close runs stay readable
    below = 0.0
    for point in sorted(points, key=lambda p: p["y"]):
        point["label_y"] = below = max(point["y"] + 4, below + 12)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "right": WIDTH - RIGHT,
        "max_cost": top,
        "points": points,
        "front": " ".join(f"{p['x']},{p['y']}" for p in line),
        "ticks": [{"y": round(TOP + plot_h * (1 - v), 1), "label": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)],
    }


def heatmap(rows: list[dict]) -> dict:
    families = sorted({family for r in rows for family in r.get("families") or {}})
    return {
        "families": families,
        "rows": [
            {
                "run": r["run"],
                "label": r.get("label") or r["run"],
                "cells": [
                    {
                        "family": f,
                        "value": (r.get("families") or {}).get(f),
                        "colour": heat_colour((r.get("families") or {}).get(f)),
                    }
                    for f in families
                ],
            }
            for r in rows
        ],
    }


def matrix(rows: list[dict], comparisons: list[dict]) -> dict | None:
    """Cell (row, column): the column's accuracy minus the row's, on their paired items; '*' when
    significant after Holm; None when no dataset had every pair compared."""
    by_pair = {}
    for c in comparisons:
        if c.get("all_pairs", True):  # a dataset of many runs, each compared with its best: no matrix
            by_pair[c["a"], c["b"]] = (c["delta"], c)
            by_pair[c["b"], c["a"]] = (None if c["delta"] is None else -c["delta"], c)
    compared = {a for a, _ in by_pair}
    runs = [r["run"] for r in rows if r["run"] in compared]
    labels = {r["run"]: r.get("label") or r["run"] for r in rows}
    out = []
    for a in runs:
        cells = []
        for b in runs:
            found = by_pair.get((a, b))
            if found is None:
                cells.append(None)
                continue
            delta, c = found
            cells.append(
                {
                    "delta": delta,
                    "text": "n/a" if delta is None else f"{delta:+.1%}",
                    "significant": c["significant"],
                    "p_holm": c["p_holm"],
                    "n_paired": c["n_paired"],
                    "colour": heat_colour(None if delta is None else 0.5 + delta / 2),
                }
            )
        out.append({"run": a, "label": labels[a], "cells": cells})
    return {"runs": [{"run": run, "label": labels[run]} for run in runs], "rows": out} if runs else None


def view(collected: dict, folder: Path) -> dict:
    tables = []
    for table in collected["tables"]:
        rows = [
            {
                "run": row["run"],
                "report": _link(row.get("report"), folder),
                "cells": [
                    {"text": cell(row.get(key), kind), "sort": _sort_value(row.get(key)), "kind": kind}
                    for key, _, kind in table["columns"]
                ],
                "marked": not row.get("complete", True) or "OTHER DATASET" in (row.get("note") or ""),
            }
            for row in table["rows"]
        ]
        charted = [r for r in table["rows"] if "families" in r]
        tables.append(
            {
                "id": table["id"],
                "title": table["title"],
                "common": table.get("common"),
                "headings": [heading for _, heading, _ in table["columns"]],
                "rows": rows,
                "heatmap": heatmap(charted) if charted else None,
                "scatter": scatter(charted) if charted else None,
                "matrix": matrix(table["rows"], table["comparisons"]),
                "comparisons": [comparison_cells(c) for c in table["comparisons"]],
                "tests": table.get("tests", "exact McNemar"),
                "notes": table.get("notes", []),
                "problems": table["problems"],
            }
        )
    titles = "; ".join(t["title"] for t in tables)
    return {
        "title": f"Runs side by side: {titles}" if titles else "Runs side by side",  # what the runs are on
        "tables": tables,
        "alpha": collected["alpha"],
        "folders": collected["folders"],
        "comparison_headings": COMPARISON_HEADINGS,
    }


def write_page(collected: dict, path: Path) -> None:
    page = (
        _environment()
        .get_template("runs.html.j2")
        .render(view=view(collected, path.parent), style=_read("page.css") + _read("runs.css"), script=_read("runs.js"))
    )
    with replacing(path) as handle:
        handle.write(page)
