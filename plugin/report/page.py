"""The run's view (runs.py) -> one HTML page: the protocol's charts, its template (which extends
page.html.j2), the stylesheet, the script and the item rows inline (a JSON block the script
turns into the table)."""

from __future__ import annotations

from importlib import resources
from typing import TextIO

import jinja2

from pytest_reasoning_evals.report.runs import row_json

_ASSETS = resources.files("pytest_reasoning_evals.report")


def _read(name: str) -> str:
    """A file of the page: `page.html.j2` and the like here, `package:file` a protocol's own (its template)."""
    package, _, file = name.rpartition(":")
    return ((resources.files(package) if package else _ASSETS) / file).read_text(encoding="utf-8")


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


ROWS = "\x00rows\x00"  # where the item rows go in the rendered page


def write(view: dict, handle: TextIO) -> None:
    """Write the page: the rendered layout around the item rows, which are streamed in one at a
    time (a 40,000-item run never holds its page's rows in memory at once)."""
    drawn = view["charts"](view)
    page = (
        _environment()
        .get_template(view["template"])
        .render(
            view=view,
            charts=drawn,
            style=_read("page.css"),
            table_script=_read(view["table_script"]),
            script=_read("page.js"),
            data=ROWS,
        )
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
