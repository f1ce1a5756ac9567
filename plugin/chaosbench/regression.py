"""Comparing a ChaosBench run with a baseline, item by item (SPEC 8): did a prompt or model change
make answers better or worse, and is the difference more than chance?

Paired items are the ids present in both runs with gold (questions and dialogues alike), except
those whose calls failed in either run (an outage, a stale recording's cassette misses: nothing was
measured, and counting them as not right would make a later run look fixed, or a stale replay look
broken); they are counted apart (n_baseline_failed, n_current_failed). An item is right when its
record is correct; wrong and UNKNOWN answers are not right. `fixed` =
not right before and right now; `broken` = right before, not right now. The p-value is the exact
two-sided McNemar test: the binomial test of min(broken, fixed) out of broken + fixed at 0.5,
doubled and capped at 1 (1.0 when no pair disagrees). `regressed` = the paired accuracy dropped
and (p < alpha, or the drop exceeds max_drop). `detectable_delta`: the smallest paired change the
pairs could detect at alpha with 80% power (stats.detectable_difference); under SMALL_SET pairs the
summary says it and points to --eval-max-accuracy-drop, which gates a drop whatever the p-value.

A baseline is an earlier run directory (its completions.jsonl) or a baseline file written from
one by `reasoning-evals baseline RUN_DIR OUT.json` (small enough to commit, e.g. under snapshots/).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pytest_reasoning_evals import gates
from pytest_reasoning_evals.chaosbench.epoch_compare import compare_epochs, has_epochs, paired_item, paired_test_name
from pytest_reasoning_evals.chaosbench.rows import Row, read_rows
from pytest_reasoning_evals.stats import SMALL_SET, detectable_difference, mcnemar_exact, paired_delta_interval, ratio

BASELINE_FORMAT = "pytest-reasoning-evals/chaosbench-baseline/1"
SHOWN = 20  # broken items named in the terminal


class BaselineError(gates.BaselineError):
    pass


def baseline_file(run_dir: Path) -> dict:
    """The committed form of a run: per item whether it was right, and what the run was."""
    rows = read_rows(run_dir / "completions.jsonl")
    if not rows:
        raise BaselineError(f"{run_dir}: no completions.jsonl records; is this a ChaosBench run directory?")
    return baseline_of(rows, _meta(run_dir), str(run_dir))


def baseline_of(rows: list[Row], meta: dict, source: str) -> dict:
    """A run's rows (and its run_meta.json) as a baseline file's content: what compare() pairs with."""
    return {
        "format": BASELINE_FORMAT,
        "source": source,
        "model": meta.get("model"),
        "mode": meta.get("mode"),
        "config_hash": meta.get("config_hash"),
        "items": {r.id: paired_item(r) for r in sorted(rows, key=lambda r: r.id)},
    }


def dump_baseline(data: dict) -> str:
    """The baseline file's text: one item per line, so a re-recording is a readable diff."""
    head = {k: v for k, v in data.items() if k != "items"}
    items = ",\n".join(f"    {json.dumps(i)}: {json.dumps(v, sort_keys=True)}" for i, v in data["items"].items())
    return json.dumps(head, indent=2)[:-2] + ',\n  "items": {\n' + items + "\n  }\n}\n"


def _meta(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / "run_meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


ITEM_FIELDS = {"correct": bool, "gold": bool, "family": str, "split": str}  # what compare() reads of a baseline item
# absent from baseline files written before "failed" was kept; "question": an epoch's (--eval-epochs)
OPTIONAL_ITEM_FIELDS = {"failed": bool, "question": str}


def load_baseline(path: Path) -> dict:
    """A run directory or a baseline file -> the baseline file's content; BaselineError names the
    file (and line) of anything compare() could not use, or an id given twice (a merge of two files)."""
    if path.is_dir():
        return baseline_file(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"--eval-baseline {path}: {getattr(exc, 'strerror', None) or exc}") from None
    lines = text.splitlines()
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(path, lines))
    except BaselineError:
        raise
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"--eval-baseline {path}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise BaselineError(f"--eval-baseline {path}: not valid JSON (nested too deeply to read)") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT or not isinstance(data.get("items"), dict):
        raise BaselineError(
            f"--eval-baseline {path}: not a run directory or a baseline file "
            f"(write one with `reasoning-evals baseline RUN_DIR {path}`)"
        )
    for item_id, item in data["items"].items():
        problem = _item_problem(item_id, item)
        if problem:
            # its line only now: a scan of the file per item made loading quadratic in the items
            raise BaselineError(f"--eval-baseline {path}:{_line_of(lines, item_id)}: {problem}")
    return {**data, "source": str(path)}


def _item_problem(item_id: str, item: object) -> str | None:
    """Why compare() could not use a baseline item; None when it can."""
    if not isinstance(item, dict):
        return f"item {item_id!r} is not an object"
    for field, kind in ITEM_FIELDS.items():
        if field not in item:
            return f"item {item_id!r} has no {field!r}"
        if not isinstance(item[field], kind):
            expected = "true or false" if kind is bool else "a string"
            return f"item {item_id!r}: {field!r} is {item[field]!r}, not {expected}"
    for field, kind in OPTIONAL_ITEM_FIELDS.items():
        if field in item and not isinstance(item[field], kind):
            expected = "true or false" if kind is bool else "a string"
            return f"item {item_id!r}: {field!r} is {item[field]!r}, not {expected}"
    return None


def _line_of(lines: list[str], key: str, nth: int = 1) -> int | str:
    """The line of the nth `"key":` in the file (the baseline writer puts one item per line); '?' if not found."""
    needle, seen = json.dumps(key) + ":", 0
    for number, line in enumerate(lines, start=1):
        seen += line.count(needle)
        if seen >= nth:
            return number
    return "?"


def _no_duplicates(path: Path, lines: list[str]):
    """json's object_pairs_hook: an id given twice (say, by a git merge) is refused, not silently the last one."""

    def hook(pairs: list[tuple[str, object]]) -> dict:
        seen: dict[str, int] = {}
        for key, _ in pairs:
            seen[key] = seen.get(key, 0) + 1
            if seen[key] == 2:
                raise BaselineError(
                    f"--eval-baseline {path}:{_line_of(lines, key, 2)}: item {key!r} is given twice "
                    f"(first at line {_line_of(lines, key)})"
                )
        return dict(pairs)

    return hook


def _group_deltas(pairs: list[tuple[dict, dict]], key: str) -> dict[str, dict]:
    groups: dict[str, list[tuple[dict, dict]]] = {}
    for before, now in pairs:
        groups.setdefault(now[key], []).append((before, now))
    out = {}
    for name in sorted(groups):
        rows = groups[name]
        acc_before = ratio(sum(b["correct"] for b, _ in rows), len(rows))
        acc_now = ratio(sum(n["correct"] for _, n in rows), len(rows))
        out[name] = {
            "n_paired": len(rows),
            "accuracy_baseline": acc_before,
            "accuracy_current": acc_now,
            "accuracy_delta": acc_now - acc_before,
            "accuracy_delta_ci95": _delta_interval(rows),
        }
    return out


def _delta_interval(pairs: list[tuple[dict, dict]]) -> list[float] | None:
    cells = Counter((b["correct"], n["correct"]) for b, n in pairs)
    return paired_delta_interval(cells[True, True], cells[True, False], cells[False, True], cells[False, False])


def compare(baseline: dict, rows: list[Row], *, alpha: float, max_drop: float | None) -> dict:
    current = {r.id: paired_item(r) for r in rows}
    if has_epochs(baseline["items"]) or has_epochs(current):  # paired by question (epoch_compare.py)
        return {
            "baseline": _source(baseline),
            **compare_epochs(baseline["items"], current, alpha=alpha, max_drop=max_drop),
        }
    shared = [i for i in current if i in baseline["items"] and current[i]["gold"] and baseline["items"][i]["gold"]]
    failed_before = [i for i in shared if baseline["items"][i].get("failed", False)]
    failed_now = [i for i in shared if current[i]["failed"] and i not in failed_before]
    ids = sorted(set(shared) - set(failed_before) - set(failed_now))
    pairs = [(baseline["items"][i], current[i]) for i in ids]
    fixed = [i for i, (b, n) in zip(ids, pairs) if not b["correct"] and n["correct"]]
    broken = [i for i, (b, n) in zip(ids, pairs) if b["correct"] and not n["correct"]]
    acc_before = ratio(sum(b["correct"] for b, _ in pairs), len(pairs))
    acc_now = ratio(sum(n["correct"] for _, n in pairs), len(pairs))
    delta = None if acc_now is None else acc_now - acc_before
    p_value = mcnemar_exact(len(broken), len(fixed))
    dropped = delta is not None and delta < 0
    regressed = dropped and (p_value < alpha or (max_drop is not None and -delta > max_drop))
    return {
        "baseline": _source(baseline),
        "n_paired": len(pairs),
        "n_baseline_failed": len(failed_before),  # left out: their calls failed in the baseline
        "n_current_failed": len(failed_now),  # ... in this run only (cassette misses, provider errors)
        "n_current_only": sum(i not in baseline["items"] for i in current),
        "n_baseline_only": sum(i not in current for i in baseline["items"]),
        "fixed": len(fixed),
        "broken": len(broken),
        "accuracy_baseline": acc_before,
        "accuracy_current": acc_now,
        "accuracy_delta": delta,
        "accuracy_delta_ci95": _delta_interval(pairs),
        "p_value": p_value,
        "alpha": alpha,
        "max_accuracy_drop": max_drop,
        "regressed": regressed,
        "detectable_delta": detectable_difference(len(pairs), len(broken) + len(fixed), alpha=alpha),
        "family_deltas": _group_deltas(pairs, "family"),
        "split_deltas": _group_deltas(pairs, "split"),
        "fixed_ids": fixed,
        "broken_ids": broken,
    }


def _source(baseline: dict) -> dict:
    return {
        "path": baseline["source"],
        "config_hash": baseline.get("config_hash"),
        "model": baseline.get("model"),
        "mode": baseline.get("mode"),
    }


def small_set_lines(c: dict) -> list[str]:
    """Under SMALL_SET pairs: the change the comparison could detect, and the option that gates a drop directly."""
    detectable = c.get("detectable_delta")
    if detectable is None or c["n_paired"] >= SMALL_SET:
        return []
    return [
        f"  small set: {c['n_paired']} paired items can only detect a paired change of about "
        f"{detectable * 100:.1f} points or more (alpha {c['alpha']:g}, 80% power, from {c['fixed'] + c['broken']} "
        "discordant pairs); to gate a smaller drop whatever the p-value, set --eval-max-accuracy-drop X"
    ]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def comparison_lines(c: dict) -> list[str]:
    delta = "n/a" if c["accuracy_delta"] is None else f"{c['accuracy_delta']:+.1%}"
    lines = [
        f"baseline {c['baseline']['path']}: {c['n_paired']} paired items, accuracy {_pct(c['accuracy_baseline'])} -> "
        f"{_pct(c['accuracy_current'])} ({delta}), fixed {c['fixed']}, broken {c['broken']}, "
        f"{paired_test_name(c)} p = {c['p_value']:.4g}: {'REGRESSED' if c['regressed'] else 'no significant regression'}"
    ]
    if c.get("n_baseline_failed"):
        lines.append(
            f"  {c['n_baseline_failed']} items left out: their calls failed in the baseline (nothing was measured)"
        )
    if c.get("n_current_failed"):
        lines.append(
            f"  {c['n_current_failed']} items left out: their calls failed in this run (cassette misses or "
            "provider errors), counted apart"
        )
    lines += small_set_lines(c)
    if c["broken_ids"]:
        more = f" (and {len(c['broken_ids']) - SHOWN} more)" if len(c["broken_ids"]) > SHOWN else ""
        lines.append(f"  broken: {', '.join(c['broken_ids'][:SHOWN])}{more}")
    if c["fixed_ids"]:
        more = f" (and {len(c['fixed_ids']) - SHOWN} more)" if len(c["fixed_ids"]) > SHOWN else ""
        lines.append(f"  fixed: {', '.join(c['fixed_ids'][:SHOWN])}{more}")
    return lines
