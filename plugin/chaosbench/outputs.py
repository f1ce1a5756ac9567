"""The output files of a ChaosBench run directory (SPEC 5.5), written by a run and by `merge`, and
the check of their shapes before a reader (`reasoning-evals report`) trusts hand-edited copies."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pytest_reasoning_evals.chaosbench.rows import Row
from pytest_reasoning_evals.chaosbench.upstream import upstream_metrics
from pytest_reasoning_evals.completions import CompletionsLog
from pytest_reasoning_evals.results import write_csv, write_json


def write_run_outputs(
    run_dir: Path,
    rows: list[Row],
    summary: dict,
    run_meta: dict,
    manifest: dict,
    completions: CompletionsLog,
    records: list[dict] | None = None,
) -> None:
    """Every output file of a run (SPEC 5.5): the same writer for a run and for merged shards.
    completions.jsonl is rewritten sorted by id from `records` (a merge's), else from the lines
    the run's `completions` log wrote (the records' texts need not be in memory)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    completions.finalize(records)
    write_json(run_dir / "summary.json", summary)
    write_json(run_dir / "upstream_metrics.json", upstream_metrics(rows))
    write_json(run_dir / "run_meta.json", run_meta)
    write_json(run_dir / "run_manifest.json", manifest)
    write_csv(run_dir / "accuracy_by_task.csv", *accuracy_table(summary["task_details"]))
    write_csv(run_dir / "metrics_overview.csv", *overview_table(summary))


def _cell(value):
    return "" if value is None else value


def accuracy_table(details: dict[str, dict]) -> tuple[list[str], list[list]]:
    header = ["task", "total", "evaluated", "correct", "unknown", "accuracy", "ci95_low", "ci95_high"]
    rows = []
    for name, d in details.items():
        ci = d["accuracy_ci95"] or [None, None]
        rows.append(
            [
                name,
                d["total"],
                d["evaluated"],
                d["correct"],
                d["unknown"],
                _cell(d["accuracy"]),
                _cell(ci[0]),
                _cell(ci[1]),
            ]
        )
    return header, rows


def overview_table(summary: dict) -> tuple[list[str], list[list]]:
    """Every scalar metric of the summary, one per row."""
    rows = [[key, _cell(value)] for key, value in summary.items() if not isinstance(value, (dict, list))]
    return ["metric", "value"], rows


@functools.cache
def _shapes() -> dict[str, dict]:
    """What each JSON file of a run holds, as the writers make it for an empty run (the key and
    the kind of every value a reader may read)."""
    from pytest_reasoning_evals.chaosbench.metrics import summarize
    from pytest_reasoning_evals.chaosbench.regression import compare
    from pytest_reasoning_evals.manifest import run_meta

    summary = summarize([], model="", mode="")
    meta = run_meta(
        model="",
        mode="",
        started_at="",
        num_workers=1,
        summary=summary,
        dataset_version="",
        config_hash="",
        execution_time_seconds=0.0,
        api_success_rate=None,
        calls={"total": 0},
        resumed_items=0,
        max_cost_usd=None,
        spent_usd=0.0,
    )
    comparison = compare({"source": "", "items": {}}, [], alpha=0.05, max_drop=None)
    for key in NAMED_BY_THE_DATA:  # any split or family name, each entry shaped like the shipped ones
        summary[key] = {EACH: next(iter(summary[key].values()))}
    return {
        "summary.json": summary,
        "run_meta.json": meta,
        "comparison.json": comparison,
        "run_manifest.json": {"prompt": {}, "dataset_config": {}, "execution": {}, "model_config": {}},
    }


NAMED_BY_THE_DATA = ("split_accuracy", "split_details", "task_accuracy", "task_details")  # keys: the bank's names
EACH = "*"  # in a shape: every key of the object, whatever its name
OPTIONAL_KEYS = {"run_meta.json", "run_manifest.json"}  # read with .get(): a key an older run did not write is no harm
# summary.json keys that runs of earlier versions did not write; nothing reads them back
ADDED_LATER = {"summary.json": frozenset({"effective_accuracy", "invalid_rate", "per_class", "flip_rate"})}


_MISSING = object()


def _shape_problem(value, shape, where: str, optional: bool = False, added=frozenset()) -> str | None:
    """Where `value` differs from `shape` (a missing key unless `optional` or a top-level key of
    `added`, another kind of value), or None. A None in the shape (nothing measured in an empty
    run) admits anything."""
    if shape is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{repr(where) if where else 'the file'} is {json.dumps(value)[:60]}, not an object"
        if EACH in shape:
            entries = value.items()
        else:
            entries = ((key, value.get(key, _MISSING)) for key in shape)
        for key, found in entries:
            inner = shape.get(key, shape.get(EACH))
            if found is _MISSING:
                if optional or (not where and key in added):
                    continue
                return f"no {(where + '.' + key if where else key)!r}"
            problem = _shape_problem(found, inner, f"{where}.{key}" if where else key, optional)
            if problem:
                return problem
        return None
    numbers = (int, float) if isinstance(shape, (int, float)) and not isinstance(shape, bool) else None
    kind = numbers or type(shape)
    if isinstance(value, bool) is not isinstance(shape, bool) or not isinstance(value, kind):
        if numbers and value is None:
            return None  # a metric with nothing to measure
        return f"{where!r} is {json.dumps(value)[:60]}, not {'a number' if numbers else 'a ' + type(shape).__name__}"
    return None


def run_files_problem(run_dir: Path) -> str | None:
    """One line naming the first JSON file of a ChaosBench run directory that is unreadable or not
    of the shape a run writes (a hand edit, a damaged copy), or None; missing files are left to the reader."""
    for name, shape in _shapes().items():
        path = run_dir / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except json.JSONDecodeError as exc:  # (worded as the page's own reader words it)
            return f"{path}: cannot be read (not valid JSON: {exc.msg} at line {exc.lineno})"
        except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            return f"{path}: cannot be read ({type(exc).__name__}: {exc})"
        problem = _shape_problem(data, shape, "", optional=name in OPTIONAL_KEYS, added=ADDED_LATER.get(name, ()))
        if problem:
            return f"{path}: {problem}; not the file a run writes (hand-edited or damaged?)"
    return None
