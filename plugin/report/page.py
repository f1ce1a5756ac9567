"""The run's view (runs.py) -> one HTML page: charts drawn here, laid out by page.html.j2, with the
stylesheet, the script and the item rows inline (a JSON block the script turns into the table)."""

from __future__ import annotations

from importlib import resources
from typing import TextIO

import jinja2

from pytest_reasoning_evals.report import charts
from pytest_reasoning_evals.report.runs import row_json

_ASSETS = resources.files("pytest_reasoning_evals.report")


def _read(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _read(name)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v, digits=1: "n/a" if v is None else f"{v:.{digits}%}"
    env.filters["ci"] = lambda ci: "" if not ci else f"[{ci[0]:.1%}, {ci[1]:.1%}]"
    env.filters["num"] = lambda v, spec=",": "n/a" if v is None else format(v, spec)
    env.filters["usd"] = lambda v: "n/a" if v is None else f"${v:,.4f}"
    env.filters["short"] = lambda v, n=12: "n/a" if not v else str(v)[:n]
    return env


# JSON escapes for what the HTML tokenizer reads inside <script>: no '</script' can end the element
# and no '<!--' can switch it into the state where its own '</script>' does not; U+2028/2029 end a
# line in older JavaScript. Each occurs only inside a JSON string, where its \u escape is the same text.
_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _script_safe(json_text: str) -> str:
    """JSON text safe inside <script> (see _SCRIPT_ESCAPES)."""
    return json_text.translate(_SCRIPT_ESCAPES)


def _chaosbench_charts(view: dict) -> dict[str, str]:
    row = lambda name, d: (name, d["accuracy"], d["accuracy_ci95"], d["total"])  # noqa: E731
    out = {
        "families": charts.accuracy_bars("family-accuracy", [row(n, d) for n, d in view["families"]]),
        "splits": charts.accuracy_bars("split-accuracy", [row(n, d) for n, d in view["splits"]]),
    }
    names = [name for name, _ in view["families"]]
    series = [
        ("correct", charts.GOOD, "correct"),
        ("wrong", charts.BAD, "wrong"),
        ("UNKNOWN", charts.UNSURE, "unknown"),
        ("call failed", charts.ERROR, "error"),
        ("no gold", charts.MUTED, "no_gold"),
    ]
    used = [(label, colour, [view["outcomes"].get(n, {}).get(key, 0) for n in names]) for label, colour, key in series]
    out["outcomes"] = charts.stacked_counts("family-outcomes", names, [s for s in used if any(s[2])])
    dd = view["summary"]["dialogue_details"]
    if dd["total_dialogues"]:
        breakdown = dd["violation_breakdown"]
        out["violations"] = charts.count_bars(
            "fol-violations",
            [f"{k} violations" for k in breakdown],
            list(breakdown.values()),
            "dialogues",
            colour=charts.ERROR,
        )
    comparison = view["comparison"]
    if comparison and comparison.get("n_paired"):
        rows = [
            (name, d["accuracy_delta"], d.get("accuracy_delta_ci95"), d["n_paired"])
            for name, d in comparison["family_deltas"].items()
        ]
        rows.append(
            ("overall", comparison["accuracy_delta"], comparison.get("accuracy_delta_ci95"), comparison["n_paired"])
        )
        out["deltas"] = charts.delta_bars("family-deltas", rows)
    return out


def _dialectic_charts(view: dict) -> dict[str, str]:
    out = {}
    medians = view["dimension_medians"]
    if any(v is not None for per in medians.values() for v in per.values()):
        out["dimensions"] = charts.grouped_bars(
            "judge-dimensions",
            list(view["dimensions"]),
            [(variant, [per[d] for d in view["dimensions"]]) for variant, per in medians.items()],
            "median judge score (0-10)",
            xmax=10,
        )
    if view["turns_histogram"]:
        out["turns"] = charts.count_bars(
            "turns-to-resolution",
            [f"{k} turn(s)" if k != "unresolved" else k for k, _ in view["turns_histogram"]],
            [n for _, n in view["turns_histogram"]],
            "conversations",
        )
    return out


ROWS = "\x00rows\x00"  # where the item rows go in the rendered page


def write(view: dict, handle: TextIO) -> None:
    """Write the page: the rendered layout around the item rows, which are streamed in one at a
    time (a 40,000-item run never holds its page's rows in memory at once)."""
    drawn = _chaosbench_charts(view) if view["kind"] == "chaosbench" else _dialectic_charts(view)
    page = (
        _environment()
        .get_template("page.html.j2")
        .render(view=view, charts=drawn, style=_read("page.css"), script=_read("page.js"), data=ROWS)
    )
    head, tail = page.split(ROWS)
    handle.write(head)
    handle.write(
        _script_safe(row_json({"template": view.get("prompt_template"), "kind": view["kind"]}))[:-1] + ',"items":['
    )
    for index, row in enumerate(view["rows"]()):  # JSON text each (runs.row_json)
        handle.write(("," if index else "") + _script_safe(row))
    handle.write("]}")
    handle.write(tail)
