"""ChaosBench runs in the runs table (`reasoning-evals runs`, runs_table.py): a row per run directory,
the shards of a run whose merge is not among them merged in memory (merge.combine), and every two
runs on the same dataset compared item by item with the code of --eval-baseline (regression.compare).
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

from pytest_reasoning_evals.chaosbench.epoch_compare import paired_test_name
from pytest_reasoning_evals.chaosbench.merge import MergeError, combine
from pytest_reasoning_evals.chaosbench.names import BANK, is_bank
from pytest_reasoning_evals.chaosbench.regression import baseline_of, compare
from pytest_reasoning_evals.chaosbench.rows import Row, read_rows
from pytest_reasoning_evals.runs_table import UNREADABLE, checked, is_number, tell_apart, total_saved

COLUMNS = [
    ("label", "run", "text"),  # what differs between the runs shown (runs_table.name_runs)
    ("run", "directory", "text"),
    ("n", "n", "int"),
    ("accuracy", "accuracy", "pct"),
    ("accuracy_ci95", "95% CI", "ci"),
    ("flip_rate", "flip rate", "pct"),  # with epochs: the questions whose epochs disagree (the noise floor)
    ("coverage", "coverage", "pct"),
    ("balanced_accuracy", "balanced acc.", "pct"),
    ("mcc", "MCC", "float"),
    ("cost_usd", "cost", "usd"),
    ("cost_per_point", "cost per point", "usd"),  # cost over accuracy in percentage points
    ("cost_saved_usd", "cost saved", "usd"),  # by batches and the prompt cache, against the list price
    ("tokens", "tokens", "int"),
    ("date", "date", "date"),
    ("complete", "complete", "bool"),
    ("note", "note", "text"),
]
# what tells a run from another: (key, what it is called, kind, whether a label shows the value alone)
IDENTITY = [
    ("model", "model", "text", True),
    ("mode", "mode", "text", True),
    ("dataset", "dataset", "text", False),
    ("prompt", "prompt", "text", False),
    ("max_tokens", "max tokens", "int", False),
    ("epochs", "epochs", "int", False),
]


ALL_PAIRS_UP_TO = 12  # runs of one dataset compared pairwise (66 comparisons); more: each with the best


class Run(NamedTuple):
    row: dict
    item_rows: list[Row]  # its items' summary rows (rows.py; `row`: its line in the table)
    meta: dict


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def is_run(directory: Path) -> bool:
    return (directory / "summary.json").is_file() and (directory / "completions.jsonl").is_file()


def _row(directory: Path, summary: dict, meta: dict, manifest: dict, shards: int | None = None) -> dict:
    dataset, prompt = manifest.get("dataset_config") or {}, manifest.get("prompt") or {}
    digest = dataset.get("manifest_hash") or ""
    tokens = summary.get("tokens") or {}
    note = [] if summary.get("complete", True) else [f"INCOMPLETE: {summary.get('incomplete_reason') or 'not asked'}"]
    if shards:
        note.append(f"merged from {shards} shards")
    subset = (manifest.get("selection") or {}).get("subset")
    if subset:
        note.append(f"subset ({subset})")
    families = summary.get("task_accuracy") or {}
    if not all(is_number(v) for v in families.values() if v is not None):
        raise ValueError(f"task_accuracy is {repr(families)[:60]}, not numbers by family")
    row = {
        "run": directory.name,
        "path": str(directory),
        "report": str(directory / "report.html") if (directory / "report.html").is_file() else None,
        "model": summary.get("model"),
        "mode": summary.get("mode"),
        "dataset": Path(dataset.get("path") or "?").name,
        "dataset_sha256": digest,
        "prompt": _prompt_name(prompt),
        "prompt_sha256": prompt.get("sha256") or "",
        "max_tokens": (manifest.get("model_config") or {}).get("max_tokens"),
        "n": summary.get("total_questions"),
        **_accuracy(summary),
        "coverage": summary.get("coverage"),
        "balanced_accuracy": summary.get("balanced_accuracy"),
        "mcc": summary.get("mcc"),
        "cost_usd": summary.get("cost_usd"),
        "cost_saved_usd": total_saved(summary.get("cost_saved_usd")),
        "tokens": sum(v for v in tokens.values() if isinstance(v, (int, float))),
        "date": meta.get("timestamp"),
        "complete": summary.get("complete", True),
        "note": "; ".join(note),
        # the families this run measured (a summary lists every ChaosBench family, empty ones as None)
        "families": {k: v for k, v in families.items() if v is not None},
    }
    row["cost_per_point"] = cost_per_point(row["cost_usd"], row["accuracy"])
    return checked(row, COLUMNS + [spec[:3] for spec in IDENTITY])


def cost_per_point(cost: object, accuracy: object) -> float | None:
    """US dollars per percentage point of accuracy; None when either is unknown or no point was scored."""
    if not (is_number(cost) and is_number(accuracy)) or not accuracy:
        return None
    return cost / (accuracy * 100)


def _accuracy(summary: dict) -> dict:
    """Accuracy and its interval: with epochs, the mean share right by question and its clustered
    interval (epoch_summary.py), their epochs and flip rate; else the items' accuracy and Wilson interval."""
    epochs = summary.get("epochs")
    if not isinstance(epochs, dict):
        return {
            "epochs": 1,
            "accuracy": summary.get("overall_accuracy"),
            "accuracy_ci95": summary.get("overall_accuracy_ci95"),
            "flip_rate": None,
        }
    return {
        "epochs": epochs.get("k"),
        "accuracy": epochs.get("accuracy"),
        "accuracy_ci95": epochs.get("accuracy_ci95"),
        "flip_rate": epochs.get("flip_rate"),
    }


def _prompt_name(prompt: dict) -> str:
    """The prompt's folder name; a run written before runs carried it: its file's folder."""
    return str(prompt.get("name") or Path(prompt.get("path") or "?").parent.name)


def _title(rows: list[dict]) -> str:
    """The bank's runs are ChaosBench-Logic's; a team's quiz is named by its files."""
    if is_bank({family for row in rows for family in row["families"]}):
        return f"{BANK} runs"
    names = sorted({row["dataset"] for row in rows})
    return f"TRUE/FALSE runs on {', '.join(names[:3])}" + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _read(directory: Path) -> Run:
    summary, meta = _json(directory / "summary.json"), _json(directory / "run_meta.json")
    manifest = _json(directory / "run_manifest.json")
    return Run(_row(directory, summary, meta, manifest), read_rows(directory / "completions.jsonl"), meta)


def _shard_of(directory: Path) -> tuple[Path, str, str] | None:
    """(where its merge goes, its run name, config hash) for a shard's directory, else None."""
    try:
        execution = _json(directory / "run_manifest.json").get("execution") or {}
    except UNREADABLE:
        return None  # read as a whole run: its problem line says what is wrong
    # a merge's directory keeps `sharded`: it is a whole run
    if not execution.get("sharded") or execution.get("merged"):
        return None
    return directory.parent, str(execution.get("run_name")), str(execution.get("config_hash"))


def read_runs(directories: list[Path]) -> tuple[list[Run], list[str]]:
    """Every ChaosBench run among `directories`, a sharded run's shards as one run (unless its
    merged directory is there too); -> (runs, one line per directory that could not be read)."""
    mine = [d for d in directories if is_run(d)]
    present = {d.resolve() for d in mine}
    shards: dict[tuple, list[Path]] = {}
    runs, problems = [], []
    for directory in mine:
        key = _shard_of(directory)
        if key is None:
            try:
                runs.append(_read(directory))
            except UNREADABLE as exc:
                problems.append(f"{directory}: not read ({type(exc).__name__}: {exc})")
        elif (key[0] / key[1]).resolve() not in present:
            shards.setdefault(key, []).append(directory)
    for (parent, name, _), group in shards.items():
        try:
            combined = combine(group, allow_partial=True)
            row = _row(parent / name, combined.summary, combined.meta, combined.manifest, shards=len(group))
        except (MergeError, *UNREADABLE) as exc:
            problems.append(f"{parent / name}: its shards are not merged ({exc})")
            continue
        # no merged directory: the row points at its first shard's page
        page = group[0] / "report.html"
        row.update(path=str(group[0]), report=str(page) if page.is_file() else None)
        runs.append(Run(row, combined.rows, combined.meta))
    # runs of one name in two folders (one per prompt, say) are named by their folder too
    names = Counter(r.row["run"] for r in runs)
    for run in runs:
        if names[run.row["run"]] > 1:
            run.row["run"] = f"{Path(run.row['path']).parent.name}/{run.row['run']}"
    tell_apart([r.row for r in runs], "dataset", "dataset_sha256")
    tell_apart([r.row for r in runs], "prompt", "prompt_sha256")
    runs.sort(key=lambda r: (r.row["dataset"], str(r.row["model"]), str(r.row["mode"]), r.row["run"]))
    _mark_datasets([r.row for r in runs])
    return runs, problems


def _mark_datasets(rows: list[dict]) -> None:
    """Runs not on the dataset most runs share say so: only runs on one dataset are compared."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["dataset_sha256"]] = counts.get(row["dataset_sha256"], 0) + 1
    if len(counts) < 2:
        return
    common = max(counts, key=lambda d: (counts[d], d))
    for row in rows:
        if row["dataset_sha256"] != common:
            row["note"] = "; ".join(filter(None, [row["note"], "OTHER DATASET: not compared with the others"]))


def pairs(runs: list[Run]) -> tuple[list[tuple[Run, Run, bool]], list[str]]:
    """Which runs are compared: every two runs of a dataset with at most ALL_PAIRS_UP_TO runs; with
    more, each with the dataset's most accurate run only (n - 1, not n(n - 1)/2 comparisons, so the
    table and page grow with the runs); -> ((a, b, all pairs of its dataset compared), a note per
    dataset compared with its best)."""
    datasets: dict[str, list[Run]] = {}
    for run in runs:
        datasets.setdefault(run.row["dataset_sha256"], []).append(run)
    out, notes = [], []
    for group in datasets.values():
        if len(group) <= ALL_PAIRS_UP_TO:
            out += [(a, b, True) for a, b in combinations(group, 2)]
            continue
        best = max(group, key=lambda run: _number(run.row["accuracy"]))  # the first of equals
        out += [(best, run, False) for run in group if run is not best]
        notes.append(
            f"{len(group)} runs on one dataset: each is compared with the most accurate, {best.row['run']} "
            f"(every pair only up to {ALL_PAIRS_UP_TO} runs; no delta matrix)"
        )
    return out, notes


def _number(value) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0


def pairwise(runs: list[Run]) -> tuple[list[dict], list[str]]:
    """The pairs() of runs compared item by item as --eval-baseline pairs them (the first run of
    the two as the baseline): `delta` is the second's accuracy minus the first's; -> (comparisons, notes)."""
    chosen, notes = pairs(runs)
    baselines: dict[int, dict] = {}  # each run's items read once, however many pairs it is in
    out = []
    for before, after, all_pairs in chosen:
        if id(before) not in baselines:
            baselines[id(before)] = baseline_of(before.item_rows, before.meta, before.row["run"])
        c = compare(baselines[id(before)], after.item_rows, alpha=1.0, max_drop=None)
        out.append(
            {
                "a": before.row["run"],
                "b": after.row["run"],
                "n_paired": c["n_paired"],
                "fixed": c["fixed"],
                "broken": c["broken"],
                "accuracy_a": c["accuracy_baseline"],
                "accuracy_b": c["accuracy_current"],
                "delta": c["accuracy_delta"],
                "delta_ci95": c["accuracy_delta_ci95"],
                "p_value": c["p_value"],
                "test": paired_test_name(c),  # McNemar, or with epochs the sign-flip test by question
                # items whose calls failed in either run (a stale replay's misses): counted apart, never broken
                "n_failed": c["n_baseline_failed"] + c["n_current_failed"],
                "all_pairs": all_pairs,  # runs.html draws its delta matrix of these only
            }
        )
    return out, notes


def runs_table(directories: list[Path]) -> list[dict]:
    """The ChaosBench table of the runs table: its rows and pairwise comparisons; none with no run."""
    runs, problems = read_runs(directories)
    if not runs and not problems:
        return []
    comparisons, notes = pairwise(runs)
    return [
        {
            "id": "chaosbench",
            "protocol": "chaosbench",
            "title": _title([r.row for r in runs]),
            "columns": COLUMNS,
            "identity": IDENTITY,
            "rows": [r.row for r in runs],
            "comparisons": comparisons,
            "notes": notes,
            "problems": problems,
        }
    ]
