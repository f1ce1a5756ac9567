"""The report's charts: matplotlib figures saved as inline SVG (no pyplot, no global state).

Text stays text (svg.fonttype none), so the numbers on a chart can be searched, read by a test
and printed sharply; each bar carries an id (`bar-<label>`), so a test can count them. A fixed hash
salt per chart and no date make the same run give the same SVG bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import matplotlib
from matplotlib.figure import Figure

INK, MUTED, GRID = "#1f2933", "#616e7c", "#e4e7eb"
GOOD, BAD, UNSURE, ERROR, ACCENT = "#2f855a", "#c53030", "#b7791f", "#6b46c1", "#2b6cb0"
ROW_INCHES = 0.28  # height per bar row: a 10-family chart is about 3.5 in tall


def _safe_id(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)


def _figure(rows: int, width: float = 7.0) -> tuple[Figure, object]:
    fig = Figure(figsize=(width, max(1.6, 0.9 + ROW_INCHES * rows)), layout="constrained")
    ax = fig.subplots()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(colors=MUTED, labelcolor=INK, labelsize=9)
    ax.grid(axis="x", color=GRID, linewidth=0.8)
    ax.set_axisbelow(True)
    return fig, ax


def _svg(fig: Figure, chart_id: str) -> str:
    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": chart_id, "font.family": "sans-serif"}):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or DOCTYPE


def _spread(value: float, ci: Sequence[float]) -> list[list[float]]:
    """errorbar's distances below and above; rounding can put a bound a hair past the value."""
    return [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def accuracy_bars(
    chart_id: str,
    rows: Sequence[tuple[str, float | None, Sequence[float] | None, int]],
    xlabel: str = "accuracy (95% Wilson interval)",
) -> str:
    """Horizontal bars of (label, accuracy, [low, high], n), each with its interval and value."""
    fig, ax = _figure(len(rows))
    labels = [r[0] for r in rows][::-1]
    for y, (label, value, ci, n) in enumerate(reversed(rows)):
        bar = ax.barh(y, value or 0.0, color=ACCENT if value is not None else GRID, height=0.62)
        bar.patches[0].set_gid(f"bar-{_safe_id(label)}")
        if ci is not None:
            ax.errorbar(value, y, xerr=_spread(value, ci), fmt="none", ecolor=INK, elinewidth=1, capsize=3)
        right = ci[1] if ci is not None else (value or 0.0)
        ax.text(min(right + 0.015, 1.0), y, f"{_pct(value)}  n={n}", va="center", fontsize=8.5, color=INK)
    ax.axvline(0.5, color=MUTED, linewidth=0.8, linestyle="--")  # chance on balanced TRUE/FALSE questions
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlim(0, 1.22)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.set_xlabel(xlabel, fontsize=9, color=MUTED)
    return _svg(fig, chart_id)


def stacked_counts(
    chart_id: str, labels: Sequence[str], series: Sequence[tuple[str, str, Sequence[int]]], xlabel: str = "items"
) -> str:
    """Horizontal stacked bars: per label, the counts of each (name, colour, counts) series."""
    fig, ax = _figure(len(labels))
    ys = range(len(labels))[::-1]
    left = [0] * len(labels)
    for name, colour, counts in series:
        bars = ax.barh(list(ys), counts, left=left, color=colour, height=0.62, label=name)
        for label, patch in zip(labels, bars.patches):
            patch.set_gid(f"bar-{_safe_id(label)}-{_safe_id(name)}")
        left = [a + b for a, b in zip(left, counts)]
    for y, total in zip(ys, left):
        ax.text(total, y, f" {total}", va="center", fontsize=8.5, color=INK)
    ax.set_yticks(list(ys), list(labels))
    ax.set_xlim(0, max(left or [1]) * 1.12 or 1)
    ax.set_xlabel(xlabel, fontsize=9, color=MUTED)
    if series:  # matplotlib warns about a legend of nothing (a run with no question)
        ax.legend(loc="lower right", fontsize=8, frameon=False, ncols=len(series), bbox_to_anchor=(1.0, 1.0))
    return _svg(fig, chart_id)


def count_bars(chart_id: str, labels: Sequence[str], counts: Sequence[int], xlabel: str, colour: str = ACCENT) -> str:
    """One horizontal bar per label, its count written beside it."""
    fig, ax = _figure(len(labels), width=5.0)
    ys = list(range(len(labels)))[::-1]
    bars = ax.barh(ys, counts, color=colour, height=0.62)
    for label, y, count, patch in zip(labels, ys, counts, bars.patches):
        patch.set_gid(f"bar-{_safe_id(label)}")
        ax.text(count, y, f" {count}", va="center", fontsize=8.5, color=INK)
    ax.set_yticks(ys, list(labels))
    ax.set_xlim(0, max([*counts, 1]) * 1.15)
    ax.set_xlabel(xlabel, fontsize=9, color=MUTED)
    return _svg(fig, chart_id)


def delta_bars(chart_id: str, rows: Sequence[tuple[str, float | None, Sequence[float] | None, int]]) -> str:
    """Paired accuracy change per label, (label, delta, [low, high], n paired), around zero."""
    fig, ax = _figure(len(rows))
    ys = list(range(len(rows)))[::-1]
    widest = max([0.1, *(abs(x) for r in rows if r[2] for x in r[2])])
    for y, (label, delta, ci, n) in zip(ys, rows):
        colour = GRID if delta is None else (GOOD if delta > 0 else BAD if delta < 0 else MUTED)
        bar = ax.barh(y, delta or 0.0, color=colour, height=0.62)
        bar.patches[0].set_gid(f"bar-{_safe_id(label)}")
        if ci is not None and delta is not None:
            ax.errorbar(delta, y, xerr=_spread(delta, ci), fmt="none", ecolor=INK, elinewidth=1, capsize=3)
        text = "n/a" if delta is None else f"{delta:+.1%}"
        ax.text(widest * 1.08, y, f"{text}  n={n}", va="center", fontsize=8.5, color=INK)
    ax.axvline(0, color=INK, linewidth=0.8)
    ax.set_yticks(ys, [r[0] for r in rows])
    ax.set_xlim(-widest * 1.05, widest * 1.6)
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0, decimals=0))
    ax.set_xlabel("paired accuracy change vs baseline (95% Newcombe interval)", fontsize=9, color=MUTED)
    return _svg(fig, chart_id)


def grouped_bars(
    chart_id: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], xlabel: str, xmax: float
) -> str:
    """Per group (a judge dimension, say) one bar per series (a prompt variant), value written."""
    fig, ax = _figure(len(groups) * max(1, len(series)) * 0.6 + 1)
    palette = [ACCENT, "#dd6b20", GOOD, ERROR, MUTED]
    height = 0.8 / max(1, len(series))
    base = list(range(len(groups)))[::-1]
    for k, (name, values) in enumerate(series):
        ys = [b + 0.4 - height * (k + 0.5) for b in base]
        bars = ax.barh(
            ys, [v or 0.0 for v in values], height=height * 0.92, color=palette[k % len(palette)], label=name
        )
        for group, y, value, patch in zip(groups, ys, values, bars.patches):
            patch.set_gid(f"bar-{_safe_id(name)}-{_safe_id(group)}")
            ax.text(value or 0.0, y, f" {'n/a' if value is None else f'{value:g}'}", va="center", fontsize=8, color=INK)
    ax.set_yticks(base, list(groups))
    ax.set_xlim(0, xmax * 1.1)
    ax.set_xlabel(xlabel, fontsize=9, color=MUTED)
    if series:  # matplotlib warns about a legend of nothing (a run with no question)
        ax.legend(loc="lower right", fontsize=8, frameon=False, ncols=len(series), bbox_to_anchor=(1.0, 1.0))
    return _svg(fig, chart_id)
