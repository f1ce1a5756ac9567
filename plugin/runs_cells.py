"""How the runs tables print a value and a pairwise comparison: shared by runs.md (runs_table.py)
and runs.html (report/runs_page.py)."""

from __future__ import annotations


def cell(value, kind: str) -> str:
    """A value as the tables print it."""
    if value is None or value == "":
        return "" if kind == "text" else "n/a"
    if kind == "pct":
        return f"{value:.1%}"
    if kind == "ci":
        return f"[{value[0]:.1%}, {value[1]:.1%}]"
    if kind == "float":
        return f"{value:.3f}"
    if kind == "usd":
        return f"${value:,.4f}"
    if kind == "int":
        return f"{value:,}"
    if kind == "bool":
        return "yes" if value else "NO"
    if kind == "date":
        return str(value)[:16].replace("T", " ")
    return str(value)


def comparison_cells(c: dict) -> list[str]:
    return [
        c.get("a_label") or c["a"],
        c.get("b_label") or c["b"],
        str(c["n_paired"]),
        str(c["fixed"]),
        str(c["broken"]),
        "n/a" if c["delta"] is None else f"{c['delta']:+.1%}",
        cell(c["delta_ci95"], "ci"),
        f"{c['p_value']:.4g}",
        f"{c['p_holm']:.4g}",
        "yes" if c["significant"] else "no",
    ]


COMPARISON_HEADINGS = [
    "run a",
    "run b",
    "paired",
    "fixed (b right, a not)",
    "broken (a right, b not)",
    "delta (b - a)",
    "95% CI",
    "paired p",
    "Holm p",
    "significant",
]
